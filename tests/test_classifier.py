"""PrivateClassifier and its public preprocessing: mixed-type tables, the budget, what reaches the user."""

import io
import logging
import pickle
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.stats import norm
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from skpate import PrivateClassifier, SeededNoiseWarning
from skpate.classifier import default_candidates
from skpate.preprocessing import MISSING, PublicPreprocessor

SECRET = "SECRET-ZIP-90210"


@pytest.fixture(scope="module")
def table():
    """A mixed-type table: numbers with missing values, strings, a pandas category, a boolean.

    Returns ``X_private, y_private, X_public, X_test, y_test``; a category (``SECRET``) and a number out of
    the public range occur in the private rows only.
    """
    rng = np.random.default_rng(0)
    n = 6000
    age = rng.normal(40, 12, n)
    income = rng.lognormal(10, 1, n)
    city = rng.choice(["Paris", "Lyon", "Nice", "Lille"], n)
    plan = pd.Categorical(rng.choice(["basic", "pro"], n))
    member = rng.random(n) < 0.3
    score = (age - 40) / 12 + (city == "Paris") - (city == "Nice") + 0.8 * (plan == "pro") + member
    y = np.where(score + rng.normal(0, 0.7, n) > 0.3, "yes", "no")
    X = pd.DataFrame({"age": age, "income": income, "city": city, "plan": plan, "member": member})
    X.loc[rng.random(n) < 0.1, "age"] = np.nan
    X.loc[rng.random(n) < 0.05, "city"] = None
    private, public, test = slice(0, 4000), slice(4000, 5000), slice(5000, n)
    X_private = X.iloc[private].copy()
    X_private.iloc[:5, 2] = SECRET  # a category the public pool never shows
    X_private.iloc[5, 1] = 1e300  # far out of the public range
    return X_private, y[private], X.iloc[public].reset_index(drop=True), X.iloc[test], y[test]


def _fit(table, **params):
    X, y, X_public, _, _ = table
    return PrivateClassifier(**{"epsilon": 1.0, "classes": ["no", "yes"], "random_state": 0, **params}).fit(
        X, y, X_public=X_public
    )


def test_a_mixed_type_table_fits_and_beats_chance_at_epsilon_one(table):
    _, _, _, X_test, y_test = table
    clf = _fit(table)
    assert clf.privacy_spent_ == (1.0, 1e-5)
    assert clf.score(X_test, y_test) > 0.75
    assert clf.selected_["name"] in {"linear", "trees", "boosting"}
    assert list(clf.feature_names_in_) == ["age", "income", "city", "plan", "member"]


def test_the_publishable_epsilon_equals_an_independent_computation(table):
    """From the budgets the candidates were given: each one's mu solved independently, composed ([DRS22] Cor. 3.3)
    and converted back by a root finder on delta(epsilon) ([DRS22] Cor. 2.13)."""
    clf = _fit(table)
    mu = np.sqrt(sum(_gd_mu_squared(epsilon) for epsilon in clf.selection_.candidate_epsilons_.values()))

    def excess_delta(eps):
        return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2) - 1e-5

    assert brentq(excess_delta, 0.01, 10, xtol=1e-12) == pytest.approx(1.0, rel=1e-6)
    assert clf.privacy_spent_ == (1.0, 1e-5)
    assert list(clf.selection_.candidate_epsilons_) == ["boosting"]  # the default: the boosting alone


THREE = ("linear", "trees", "boosting")


@pytest.mark.parametrize("learners", [("boosting",), THREE])
def test_the_publishable_epsilon_from_the_candidates_noise(table, learners):
    """Each candidate fitted alone under its share of the budget: its mu from its noise, composed with the others'
    ([DRS22] Cor. 3.3), converted back to (epsilon, 1e-5) by a root finder ([DRS22] Cor. 2.13)."""
    candidates = default_candidates(4000, 1000, 2, 1.0, learners=learners)
    clf = _fit(table) if learners == ("boosting",) else _fit(table, candidates=candidates)
    assert list(clf.selection_.candidate_epsilons_) == list(learners)
    mu_squared = 0.0
    for name, candidate in candidates:
        epsilon = clf.selection_.candidate_epsilons_[name]
        alone = clone(candidate).set_params(epsilon=epsilon, classes=["no", "yes"], random_state=0)
        alone.fit(table[0], table[1], X_public=table[2])  # the candidate's own public preprocessing, on raw rows
        if name == "linear":
            mu_squared += (2 * alone.clip * np.sqrt(alone.n_iter) / alone.sigma_) ** 2  # replace-one: 2 clip
        elif name == "trees":
            gd = alone.pate_
            mu_squared += (2 * gd.clip * np.sqrt(gd.n_iter) / gd.sigma_) ** 2
            mu_squared += alone.n_refits * 2 * alone.n_estimators / alone.sigma_**2  # sqrt(2 T) per round
        else:  # T rounds (feature bins and random trees) of per-cell clipped gradient sums: 2 clip per round
            mu_squared += (2 * alone.clip * np.sqrt(alone.n_rounds_ + alone.n_trees_) / alone.sigma_) ** 2
    mu = np.sqrt(mu_squared)

    def excess_delta(eps):
        return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2) - 1e-5

    assert brentq(excess_delta, 0.01, 10, xtol=1e-12) == pytest.approx(1.0, rel=1e-6)
    assert clf.privacy_spent_ == (1.0, 1e-5)


def test_the_boosting_alone_spends_what_its_noise_says(table):
    """The default candidate under the whole budget: T rounds of bin sums at noise sigma are 2 clip sqrt(T) / sigma
    GDP (replacing one row moves a round's table by 2 clip; [DRS22] Thm. 2.7, Cor. 3.3)."""
    clf = _fit(table)
    boost = clf.selection_.best_estimator_
    assert clf.selected_["name"] == "boosting"
    mu_boost = 2 * boost.clip * np.sqrt(boost.n_rounds_ + boost.n_trees_) / boost.sigma_
    assert mu_boost**2 == pytest.approx(_gd_mu_squared(1.0), rel=1e-6)


def test_unknown_or_repeated_learners_are_refused():
    for learners in [(), ("forest",), ("linear", "linear")]:
        with pytest.raises(ValueError, match="learners must be"):
            default_candidates(4000, 1000, 2, 1.0, learners=learners)


def _gd_mu_squared(epsilon):
    """mu^2 of a fit whose noise is calibrated to (epsilon, 1e-5), solved independently."""
    return brentq(lambda mu: norm.cdf(-epsilon / mu + mu / 2) - np.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)
                  - 1e-5, 1e-4, 20) ** 2  # fmt: skip


def test_the_trees_candidate_spends_what_its_noise_says(table):
    """The tree candidate's mu^2 from its noise: the linear part's gradient noise and the leaf counts' noise."""
    trees = default_candidates(4000, 1000, 2, 1.0, learners=("trees",))  # the trees alone: all the budget
    clf = _fit(table, candidates=trees)
    refit = clf.selection_.best_estimator_
    gd = refit.pate_
    mu_gd = 2 * gd.clip * np.sqrt(gd.n_iter) / gd.sigma_  # [DRS22] Thm. 2.7, Cor. 3.3; replace-one: 2 clip
    mu_counts = np.sqrt(refit.n_refits * 2 * refit.n_estimators) / refit.sigma_  # sqrt(2 T) per round
    assert mu_gd**2 + mu_counts**2 == pytest.approx(_gd_mu_squared(1.0), rel=1e-6)
    assert clf.privacy_spent_ == (1.0, 1e-5)


def test_no_private_value_reaches_a_message_a_warning_or_a_log(table, caplog):
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught, redirect_stdout(out), redirect_stderr(err):
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", SeededNoiseWarning)  # the test's seed
        caplog.set_level(logging.DEBUG)
        clf = _fit(table, verbose=1)
        clf.predict(table[0])
    text = out.getvalue() + err.getvalue() + caplog.text + " ".join(str(w.message) for w in caught)
    assert SECRET not in text and "1e+300" not in text
    assert not caught
    lines = out.getvalue().splitlines()
    assert len(lines) == 4 and "preprocessing" in lines[0] and "candidate 1/1" in lines[2] and "done" in lines[3]
    assert "one candidate, 'boosting', on every private row" in clf.privacy_report_.mechanism  # no choice made
    assert SECRET not in pickle.dumps(clf.export_model()).decode("latin-1")


def test_unseen_categories_encode_as_zeros_and_missing_values_from_the_public_rows(table):
    X, _, X_public, _, _ = table
    pre = PublicPreprocessor().fit(X_public)
    Z = pre.transform(X.iloc[:6])
    names = list(pre.get_feature_names_out())
    city = [i for i, name in enumerate(names) if "city_" in name]
    assert np.all(Z[:5][:, city] == 0)  # the secret category: no column, no error
    assert Z[5, names.index("numeric__income")] == 1.0  # clipped to the public range's top
    assert np.isfinite(Z).all()
    assert any(MISSING in name for name in names)  # missing cities are a category of their own


def test_the_preprocessing_depends_on_the_public_rows_only(table):
    X, y, X_public, X_test, _ = table
    clf = _fit(table)
    assert clf.preprocessor_ is None  # the default candidates carry their own
    best = clf.selection_.best_estimator_
    if clf.selected_["name"] == "linear":
        fitted, expected = best.preprocessor_[0], PublicPreprocessor()
    elif clf.selected_["name"] == "boosting":
        fitted, expected = best.preprocessor_, PublicPreprocessor(encoding="ordinal")
    else:
        fitted, expected = best.model_.preprocessor, PublicPreprocessor(encoding="ordinal")
    np.testing.assert_array_equal(fitted.transform(X_test), expected.fit(X_public).transform(X_test))
    given = _fit(table, preprocessor=PublicPreprocessor(max_categories=3))
    np.testing.assert_array_equal(
        given.preprocessor_.transform(X_test), PublicPreprocessor(max_categories=3).fit(X_public).transform(X_test)
    )


def test_a_public_schema_overrides_the_public_rows(table):
    _, _, X_public, X_test, _ = table
    schema = {"city": ["Paris", "Lyon", "Nice", "Lille", "Marseille"], "age": (18, 90)}
    pre = PublicPreprocessor(schema=schema).fit(X_public)
    names = list(pre.get_feature_names_out())
    assert "categorical__city_Marseille" in names
    assert (
        pre.transform(pd.DataFrame({**{c: X_test[c] for c in X_test}, "age": 18.0}).iloc[:3])[:, 0].tolist() == [-1] * 3
    )
    with pytest.raises(ValueError, match="schema names columns that X does not have"):
        PublicPreprocessor(schema={"zip": ["1"]}).fit(X_public)


def test_export_model_predicts_from_raw_rows(table):
    _, _, _, X_test, _ = table
    clf = _fit(table)
    model = clf.export_model()
    np.testing.assert_array_equal(model.predict(X_test), clf.predict(X_test))
    np.testing.assert_allclose(model.predict_proba(X_test), clf.predict_proba(X_test))
    if hasattr(clf.selection_.best_estimator_, "decision_function"):  # the linear and boosting candidates
        np.testing.assert_allclose(model.decision_function(X_test), clf.decision_function(X_test))
    else:
        assert not hasattr(clf, "decision_function")
    with pytest.raises(TypeError, match="published model"):
        (model[-1] if hasattr(model, "steps") else model).fit(X_test, None)
    # A refused fit of the whole pipeline leaves it as published (it refitted the preprocessor first).
    model = _fit(table, preprocessor=PublicPreprocessor()).export_model()
    assert hasattr(model, "steps")
    before = model.predict_proba(X_test)
    with pytest.raises(TypeError, match="published model"):
        model.fit(X_test.iloc[:300], clf.predict(X_test.iloc[:300]))
    np.testing.assert_array_equal(model.predict_proba(X_test), before)


def test_clone_pickle_and_grid_search_over_epsilon(table):
    X, y, X_public, X_test, y_test = table
    clf = _fit(table)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X_test), clf.predict(X_test))
    assert clone(clf).get_params() == clf.get_params()
    rows = pd.concat([X.iloc[:2000], X_public], ignore_index=True)
    labels = np.r_[y[:2000], np.full(len(X_public), -1, dtype=object)]
    labels = np.where(labels == -1, -1, labels)
    search = GridSearchCV(
        PrivateClassifier(classes=["no", "yes"], random_state=0), {"epsilon": [0.5, 2.0]}, cv=KFold(2, shuffle=True,
        random_state=0),
    ).fit(rows, labels)  # fmt: skip
    assert search.best_params_["epsilon"] in (0.5, 2.0)


def test_numpy_rows_work_too(binary_split):
    X, y, X_public, y_public = binary_split
    clf = PrivateClassifier(epsilon=4.0, classes=[0, 1], random_state=0).fit(X, y, X_public=X_public)
    # make_classification's classes are clusters at hypercube vertices: interactions, which only the boosting's random
    # public trees reach; non-private logistic regression scores 0.66 here, HGB 0.92.
    assert clf.score(X_public, y_public) > 0.7


def test_the_planned_cost_is_the_budget_before_the_fit():
    clf = PrivateClassifier(epsilon=0.5, classes=["a", "b", "c"])
    assert clf.publishable_epsilon(n_public=1000) == pytest.approx(0.5, rel=1e-9)
    with pytest.raises(ValueError, match="pass classes"):
        PrivateClassifier().planned_cost(1000)


# ------------------------------------------------------------------ issue 30: errors that leak nothing


def _leaky(X):
    """A user's step that fails on a value its fit never saw, quoting it (as scikit-learn's encoders do)."""
    values = np.asarray(X, dtype=object)
    if (values == SECRET).any():
        raise ValueError(f"cannot encode {SECRET!r}")
    return np.asarray(values[:, :2], dtype=float)


def _city_encoder(**encoder):
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    return ColumnTransformer(
        [("numbers", StandardScaler(), ["age", "income"]), ("city", OneHotEncoder(**encoder), ["city"])]
    )


@pytest.fixture
def planted(mixed_split):
    X, y, X_public = mixed_split
    X = X.copy()
    X.loc[:4, "city"] = SECRET
    return X, y, X_public


def test_an_encoder_that_raises_on_unknown_categories_is_refused_before_the_budget_is_charged(planted):
    from skpate.privacy import RDPAccountant

    X, y, X_public = planted
    accountant = RDPAccountant(epsilon=5.0, delta=1e-5)
    clf = PrivateClassifier(classes=[0, 1, 2], preprocessor=_city_encoder(), accountant=accountant)
    with pytest.raises(ValueError, match=r"PrivateClassifier: preprocessor step 'city' \(OneHotEncoder\)") as caught:
        clf.fit(X, y, X_public=X_public)
    assert SECRET not in str(caught.value) and accountant.n_fits == 0
    clf.set_params(preprocessor=_city_encoder(handle_unknown="ignore")).fit(X, y, X_public=X_public)
    assert accountant.n_fits == 1


@pytest.mark.parametrize("candidate", ["linear", "trees"])
def test_a_candidate_that_fails_on_the_public_rows_is_refused_before_the_budget_is_charged(planted, candidate):
    from sklearn.preprocessing import StandardScaler

    from skpate import LeafRefitClassifier, NoisyGDClassifier
    from skpate.privacy import RDPAccountant

    X, y, X_public = planted
    gd = NoisyGDClassifier(preprocessor=StandardScaler())  # strings for a scaler: the public rows show it
    estimator = gd if candidate == "linear" else LeafRefitClassifier(gd, preprocessor=PublicPreprocessor())
    accountant = RDPAccountant(epsilon=5.0, delta=1e-5)
    clf = PrivateClassifier(
        classes=[0, 1, 2], preprocessor="passthrough", candidates=[(candidate, estimator)], accountant=accountant
    )
    with pytest.raises(ValueError, match=r"NoisyGDClassifier's preprocessor \(StandardScaler\) failed on the public"):
        clf.fit(X, y, X_public=X_public)
    assert accountant.n_fits == 0


def test_a_failure_on_the_private_rows_is_paid_for_and_quotes_nothing(planted, error_text):
    from sklearn.preprocessing import FunctionTransformer

    from skpate.privacy import RDPAccountant

    X, y, X_public = planted
    accountant = RDPAccountant(epsilon=5.0, delta=1e-5)
    clf = PrivateClassifier(classes=[0, 1, 2], preprocessor=FunctionTransformer(_leaky), accountant=accountant)
    with pytest.raises(ValueError, match="PrivateClassifier: the preprocessor .* failed on the private rows") as caught:
        clf.fit(X, y, X_public=X_public)
    assert SECRET not in error_text(caught.value)
    assert accountant.n_fits == 1  # reserved before the private rows were read: the failure depends on them


@pytest.mark.parametrize("labels", ["one class", "a class without a row"])
def test_private_rows_need_not_show_every_public_class(mixed_split, labels):
    X, y, X_public = mixed_split
    y = np.zeros_like(y) if labels == "one class" else np.where(y == 2, 1, y)
    clf = PrivateClassifier(classes=[0, 1, 2], random_state=0).fit(X, y, X_public=X_public)
    assert list(clf.classes_) == [0, 1, 2] and clf.predict_proba(X_public).shape == (len(X_public), 3)


@pytest.mark.parametrize("value", [1e39, 1e300, -1e300])
@pytest.mark.parametrize("preprocessor", ["auto", "passthrough"])
def test_extreme_private_values_are_accepted(three_class_split_small, value, preprocessor):
    X, y, X_public = three_class_split_small
    X = X.copy()
    X[0, 0], X[1] = value, value
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        warnings.simplefilter("ignore", SeededNoiseWarning)  # the tests' seeds
        clf = PrivateClassifier(classes=[0, 1, 2], preprocessor=preprocessor, random_state=0)
        clf.fit(X, y, X_public=X_public)
        proba = clf.predict_proba(X[:3])
    assert np.isfinite(proba).all() and clf.score(X_public, np.zeros(len(X_public), int)) >= 0.0


def test_few_public_rows_give_the_trees_candidate_leaves_that_can_split():
    from skpate.pool.refit import largest_leaf

    for n_public in (10, 40, 1000):
        trees = dict(default_candidates(5000, n_public, 2, 1.0, learners=THREE))["trees"]
        assert 1 <= trees.min_samples_leaf <= max(1, largest_leaf(n_public))


def test_candidates_by_learner_name_are_the_default_candidates_of_those_learners():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 4))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, 0)
    clf = PrivateClassifier(epsilon=4.0, classes=[0, 1], candidates=["linear", "trees", "boosting"])
    clf.fit(X[:1000], y[:1000], X_public=X[1000:])
    assert list(clf.selection_.candidate_epsilons_) == ["linear", "trees", "boosting"]
    assert clf.preprocessor_ is None  # each candidate carries its own public preprocessing
    for names in (["linear", "forest"], ["linear", "linear"]):  # the parameter the user set, not default_candidates'
        with pytest.raises(ValueError, match=r"candidates must be 'auto', distinct names among .*'forest'|'linear'\]"):
            PrivateClassifier(classes=[0, 1], candidates=names).fit(X[:1000], y[:1000], X_public=X[1000:])


def test_n_jobs_fits_the_default_candidates_in_parallel_with_the_same_draws(mixed_split):
    """The default candidates (public preprocessing in each) travel to joblib workers and come back the same."""
    X, y, X_public = mixed_split
    fits = [
        PrivateClassifier(
            epsilon=4.0, classes=[0, 1, 2], candidates=["linear", "trees", "boosting"], random_state=0, n_jobs=n_jobs
        ).fit(X, y, X_public=X_public)
        for n_jobs in (None, 2)
    ]
    assert fits[0].selected_["name"] == fits[1].selected_["name"]
    assert np.array_equal(fits[0].predict_proba(X_public), fits[1].predict_proba(X_public))
