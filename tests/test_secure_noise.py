"""Secure noise by default (issue 30): OS entropy unless seeded, one SeededNoiseWarning per seeded top-level call.

With ``random_state=None`` every privacy-relevant draw comes from a generator seeded by OS entropy, never from
numpy's global ``RandomState`` (readable with ``np.random.get_state``) and never kept on the fitted estimator; a
seeded fit warns once, at its caller, however deep its nested fits go. pyproject.toml ignores the warning for the
rest of the suite; ``pytest.warns`` records it all the same (it sets the "always" filter), which the first tests
rely on and check.
"""

import warnings

import numpy as np
import pytest
from joblib import Parallel, delayed, parallel_config
from private_estimators import ESTIMATORS  # tests/private_estimators.py (pytest puts tests/ on the path)
from sklearn.base import BaseEstimator, clone

import skpate
from skpate import (
    GaussianHistogram,
    GNMax,
    LeafRefitClassifier,
    LNMax,
    NoisyGDClassifier,
    SeededNoiseWarning,
    analyze,
)
from skpate._validation import check_noise_generator, in_caller_noise_scope, noise_scope
from skpate.audit import audit
from skpate.base import PrivateClassifierMixin
from skpate.privacy.smooth import sanitize

EPSILON = 8.0


def make(name, **params):
    return ESTIMATORS[name](**{"epsilon": EPSILON, "classes": [0, 1], **params})


@pytest.fixture(scope="module")
def rows(binary_split):
    """conftest's binary split: the private rows and a public pool of 300 rows."""
    X, y, X_public, _ = binary_split
    return X, y, X_public[:300]


def _seeded(record):
    return [w for w in record if issubclass(w.category, SeededNoiseWarning)]


def _fit_recording(estimator, rows):
    X, y, X_public = rows
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        estimator.fit(X, y, X_public=X_public)
    return _seeded(record)


def test_the_warning_is_public_and_a_user_warning():
    assert skpate.SeededNoiseWarning is skpate.exceptions.SeededNoiseWarning
    assert issubclass(SeededNoiseWarning, UserWarning) and "SeededNoiseWarning" in skpate.__all__


def test_every_private_estimator_fit_runs_in_a_noise_scope():
    """The warning comes from the mixin's wrapper: a private estimator that defines fit gets it without asking."""
    for make_estimator in ESTIMATORS.values():
        assert getattr(type(make_estimator()).fit, "_skpate_noise_scope", False)
    assert issubclass(LeafRefitClassifier, PrivateClassifierMixin)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_a_seeded_fit_warns_once_at_its_caller(name, rows):
    X, y, X_public = rows
    with pytest.warns(SeededNoiseWarning, match="random_state=None") as record:  # recorded though ignored by config
        make(name, random_state=0).fit(X, y, X_public=X_public)
    seeded = _seeded(record)
    assert len(seeded) == 1, [str(w.message) for w in seeded]  # nested fits and the aggregator do not repeat it
    assert seeded[0].filename == __file__  # it points at the fit call, not inside skpate
    message = str(seeded[0].message)
    assert name in message and "secret" in message
    assert 'warnings.filterwarnings("ignore", category=skpate.SeededNoiseWarning)' in message


@pytest.mark.parametrize("seed", [7, np.int64(7), np.random.RandomState(7)], ids=["int", "numpy-int", "RandomState"])
def test_every_kind_of_seed_warns(seed, rows):
    """(The estimators take scikit-learn's random_state; a Generator is for the functions, tested below.)"""
    assert len(_fit_recording(NoisyGDClassifier(epsilon=EPSILON, classes=[0, 1], random_state=seed), rows)) == 1


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_an_unseeded_fit_does_not_warn(name, rows):
    """Not even where the outer fit seeds nested estimators, or a nested template carries its own seed."""
    assert _fit_recording(make(name, random_state=None), rows) == []


def test_each_top_level_fit_warns_and_the_scope_closes_after_an_error(rows):
    estimator = make("NoisyGDClassifier", random_state=0)
    assert len(_fit_recording(estimator, rows)) == 1
    assert len(_fit_recording(estimator, rows)) == 1  # a second top-level fit: warned again
    X, y, X_public = rows
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make("NoisyGDClassifier", random_state=0).fit(X, np.full_like(y, 5), X_public=X_public)  # not a class
    assert len(_fit_recording(estimator, rows)) == 1  # the failed fit did not leave a scope open


# ------------------------------------------------------------------ unseeded: fresh noise, no global state


def test_unseeded_fits_draw_different_noise(rows):
    X, y, X_public = rows
    gd = [NoisyGDClassifier(epsilon=EPSILON, classes=[0, 1]).fit(X, y, X_public=X_public) for _ in range(2)]
    assert not np.array_equal(gd[0].export_model().coef, gd[1].export_model().coef)
    cells = [make("CellCountClassifier").fit(X, y, X_public=X_public) for _ in range(2)]
    assert not np.array_equal(cells[0].export_model().counts, cells[1].export_model().counts)
    histogram = GaussianHistogram(sigma=5.0)
    assert not np.array_equal(histogram.noisy_votes(VOTES), histogram.noisy_votes(VOTES))


def test_a_seed_reproduces_the_noise(rows):
    """What the warning is about: the seed alone regenerates the released noise."""
    X, y, X_public = rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        gd = [NoisyGDClassifier(epsilon=EPSILON, classes=[0, 1], random_state=3).fit(X, y, X_public=X_public)]
        gd.append(clone(gd[0]).fit(X, y, X_public=X_public))
    assert np.array_equal(gd[0].export_model().coef, gd[1].export_model().coef)


def test_under_an_unseeded_outer_fit_nested_seeds_do_not_set_the_noise(rows):
    """LeafRefitClassifier(pate=PATEClassifier(random_state=0)): the PATE part's draws come from OS entropy."""
    fits = [make("LeafRefitClassifier").fit(*rows[:2], X_public=rows[2]) for _ in range(2)]
    partitions = [[p.tolist() for p in fit.pate_.teachers_.partitions] for fit in fits]
    assert partitions[0] != partitions[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        seeded = [make("LeafRefitClassifier", random_state=1).fit(*rows[:2], X_public=rows[2]) for _ in range(2)]
    assert [p.tolist() for p in seeded[0].pate_.teachers_.partitions] == [
        p.tolist() for p in seeded[1].pate_.teachers_.partitions
    ]  # a seeded outer fit still reproduces the nested one


def test_check_noise_generator_under_a_secure_scope_ignores_seeds():
    with noise_scope(None, "test"):
        first, second = check_noise_generator(0), check_noise_generator(0)
        assert first.random() != second.random()
        with pytest.raises(ValueError, match="random_state"):
            check_noise_generator("zero")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        with noise_scope(0, "test"):
            assert check_noise_generator(0).random() == np.random.default_rng(0).random()


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_an_unseeded_fit_leaves_numpy_global_state_alone(name, rows):
    """numpy's global RandomState is readable (np.random.get_state): an unseeded fit must not draw from it."""
    np.random.seed(12345)
    before = np.random.get_state()
    make(name).fit(*rows[:2], X_public=rows[2])
    after = np.random.get_state()
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and before[2:] == after[2:]


def _reachable(value, seen, depth=0):
    """Every object reachable from ``value`` through estimators' attributes, lists, tuples and dicts."""
    if id(value) in seen or depth > 8:
        return
    seen.add(id(value))
    yield value
    if isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, (list, tuple)):
        children = list(value)
    elif isinstance(value, BaseEstimator) or type(value).__module__.startswith("skpate"):
        children = list(getattr(value, "__dict__", {}).values())
    else:
        return
    for child in children:
        yield from _reachable(child, seen, depth + 1)


RANDOM_STATE_TYPES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, np.random.SeedSequence)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_no_fitted_attribute_holds_the_noise_generator(name, rows):
    estimator = make(name).fit(*rows[:2], X_public=rows[2])
    fitted = {key: value for key, value in vars(estimator).items() if key.endswith("_")}
    seen = set()
    kept = [type(v).__name__ for v in _reachable(fitted, seen) if isinstance(v, RANDOM_STATE_TYPES)]
    assert kept == []
    # Nor a seed of its noise: a private estimator reached from an unseeded fit either drew from OS entropy
    # with random_state None, or kept the seed its template had (which then seeded nothing, see above).
    for value in _reachable(fitted, set()):
        if isinstance(value, PrivateClassifierMixin) and value is not estimator:
            assert value.random_state is None or name == "LeafRefitClassifier", (type(value).__name__, value)


def test_the_selection_keeps_no_derived_seed_of_its_candidates(rows):
    search = make("PrivateModelSelection").fit(*rows[:2], X_public=rows[2])
    assert search.best_estimator_.random_state is None and search.selected_["params"]["random_state"] is None
    one_call = make("PrivateClassifier").fit(*rows[:2], X_public=rows[2])
    assert one_call.selection_.best_estimator_.get_params()["random_state"] is None


# ---------------------------------------------------------------------- the functions that release noise


VOTES = np.tile([[40, 8, 2]], (20, 1))


@pytest.mark.parametrize(
    "release",
    [
        lambda seed: GNMax(sigma=10.0).aggregate(VOTES, random_state=seed),
        lambda seed: GNMax(sigma=10.0).aggregate(VOTES, None if seed is None else np.random.default_rng(seed)),
        lambda seed: LNMax(scale=5.0).aggregate(VOTES, seed),
        lambda seed: GaussianHistogram(sigma=10.0).noisy_votes(VOTES, random_state=seed),
        lambda seed: sanitize(VOTES, GNMax(sigma=10.0), 1e-5, order=20.0, random_state=seed),
        lambda seed: analyze(VOTES, GNMax(sigma=10.0), 1e-5, sanitize_order=20.0, random_state=seed),
    ],
    ids=["GNMax.aggregate", "aggregate-Generator", "LNMax.aggregate", "noisy_votes", "sanitize", "analyze"],
)
def test_a_seeded_release_warns_once_and_an_unseeded_one_does_not(release):
    with pytest.warns(SeededNoiseWarning) as record:
        release(0)
    assert len(_seeded(record)) == 1 and _seeded(record)[0].filename == __file__
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        release(None)
    assert _seeded(record) == []


def test_the_audit_is_a_test_tool_and_does_not_warn():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        audit(LNMax(scale=1.0), [8, 2], [7, 3], n_trials=1000, random_state=0)
        audit(LNMax(scale=1.0), [8, 2], [7, 3], n_trials=1000, random_state=np.random.default_rng(0))
    assert _seeded(record) == []


def test_the_suite_ignores_the_warning_outside_pytest_warns():
    """pyproject.toml's filter: the tests that seed on purpose do not fail on it (warnings are errors here)."""
    warnings.warn("seeded on purpose", SeededNoiseWarning)


def _first_draw(seed):
    return check_noise_generator(seed).random()


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_a_joblib_worker_keeps_its_callers_noise_scope(backend):
    """A candidate fitted in a worker (PrivateModelSelection's n_jobs) draws as it would in the caller's process."""
    seeded = np.random.default_rng(0).random()
    with parallel_config(backend=backend, n_jobs=2):
        with noise_scope(None, "test"):  # unseeded caller: a seed in the worker sets nothing
            draws = Parallel()(delayed(in_caller_noise_scope(_first_draw))(0) for _ in range(2))
            bare = Parallel()(delayed(_first_draw)(0) for _ in range(2))
        assert seeded not in draws and draws[0] != draws[1]
        assert bare == [seeded, seeded]  # what the wrapper prevents: the worker forgot the caller's scope
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SeededNoiseWarning)
            with noise_scope(0, "test"):
                assert Parallel()(delayed(in_caller_noise_scope(_first_draw))(0) for _ in range(2)) == [seeded] * 2
