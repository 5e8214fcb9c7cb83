"""PrivateModelSelection: the budget of the candidates and the choice, and what is (not) published."""

import time
import warnings

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.preprocessing import FunctionTransformer
from sklearn.tree import DecisionTreeClassifier

from skpate import (
    BudgetExceededError,
    CellCountClassifier,
    LeafRefitClassifier,
    LNMax,
    NoisyGDClassifier,
    PATEClassifier,
    PrivacyLeakWarning,
    PrivateClassifier,
    PrivateModelSelection,
    RDPAccountant,
    SeededNoiseWarning,
    grid_candidates,
)
from skpate.privacy import Cost, gdp_epsilon, gdp_mu
from skpate.privacy.cost import replace_one_cost


def _noise(Z):
    """Features that say nothing about the label: a model on them is at chance level."""
    return np.random.default_rng(0).normal(size=np.shape(Z))


def _search(**params):
    candidates = [
        ("linear", NoisyGDClassifier()),
        ("noise", NoisyGDClassifier(preprocessor=FunctionTransformer(_noise))),
    ]
    return PrivateModelSelection(candidates, **{"epsilon": 2.0, "classes": [0, 1], "random_state": 0, **params})


def test_grid_candidates_names_every_point_of_the_grid():
    candidates = grid_candidates(NoisyGDClassifier(), {"n_iter": [50, 200], "clip": [0.5]})
    assert [name for name, _ in candidates] == [
        "NoisyGDClassifier(clip=0.5, n_iter=50)",
        "NoisyGDClassifier(clip=0.5, n_iter=200)",
    ]
    assert [c.n_iter for _, c in candidates] == [50, 200]


def test_sampled_candidates_draw_settings_without_data():
    from scipy.stats import randint

    from skpate import sampled_candidates

    a = sampled_candidates(NoisyGDClassifier(), {"n_iter": randint(10, 300)}, 4, random_state=0)
    b = sampled_candidates(NoisyGDClassifier(), {"n_iter": randint(10, 300)}, 4, random_state=0)
    assert [name for name, _ in a] == [name for name, _ in b] and len(a) == 4
    assert all(10 <= c.n_iter < 300 and name == f"NoisyGDClassifier(n_iter={c.n_iter!r})" for name, c in a)


def test_each_candidate_gets_an_equal_share_of_mu_squared_and_together_they_are_the_budget():
    search = _search(epsilon=1.0)
    cost = search.planned_cost(n_public=300)
    mu = gdp_mu(1.0, 1e-5)
    assert cost.mu_squared == pytest.approx(mu**2, rel=1e-6) and cost.mu_squared <= mu**2
    assert cost.epsilon(1e-5)[0] <= 1.0
    share = gdp_epsilon(mu / np.sqrt(2), 1e-5)  # independent: half of mu^2 each
    _, planned = search._plan(300, np.array([0, 1]))
    for _, candidate in planned:
        assert candidate.epsilon == pytest.approx(share, rel=1e-6)


def test_the_fit_publishes_the_budget_and_only_the_choice(binary_split):
    X, y, X_public, y_public = binary_split
    search = _search().fit(X, y, X_public=X_public)
    assert search.privacy_spent_ == (2.0, 1e-5)
    assert set(search.selected_) == {"name", "params"}
    assert search.selected_["name"] in {"linear", "noise"}
    assert search.mu_ == pytest.approx(gdp_mu(2.0, 1e-5), rel=1e-6)
    assert search.selection_epsilon_ == pytest.approx(np.log(_phi(search.mu_ / 2) / _phi(-search.mu_ / 2)))
    assert not any(isinstance(v, np.ndarray) and v.shape == (2,) and v.dtype.kind == "f" for v in vars(search).values())
    assert "exponential mechanism" in search.privacy_report_.mechanism
    np.testing.assert_array_equal(search.predict(X_public), search.export_model().predict(X_public))


def _phi(x):
    from scipy.stats import norm

    return norm.cdf(x)


def test_the_choice_prefers_the_better_candidate(binary_split):
    X, y, X_public, y_public = binary_split
    chosen = [_search(random_state=seed).fit(X, y, X_public=X_public).selected_["name"] for seed in range(5)]
    assert chosen.count("linear") >= 4  # a linear model against one on pure noise


def test_one_candidate_uses_every_row_and_is_the_candidate_itself(binary_split):
    X, y, X_public, _ = binary_split
    search = PrivateModelSelection([("linear", NoisyGDClassifier())], epsilon=1.0, classes=[0, 1], random_state=3)
    search.fit(X, y, X_public=X_public)
    seed = search.best_estimator_.random_state
    alone = NoisyGDClassifier(epsilon=1.0, classes=[0, 1], random_state=seed).fit(X, y, X_public=X_public)
    # The candidate's budget is the selection's converted to mu and back, equal up to the conversions' last bits.
    np.testing.assert_allclose(search.best_estimator_.coef_, alone.coef_, rtol=1e-12)


def test_decision_function_is_the_chosen_candidates_where_it_has_one(binary_split):
    X, y, X_public, X_eval = binary_split[0], binary_split[1], binary_split[2][:300], binary_split[2][300:]
    search = _search()
    assert hasattr(search, "decision_function")  # before the fit: every candidate has one
    search.fit(X, y, X_public=X_public)
    np.testing.assert_array_equal(search.decision_function(X_eval), search.best_estimator_.decision_function(X_eval))
    cells = PrivateModelSelection([("cells", CellCountClassifier(n_cells=20))], epsilon=2.0, classes=[0, 1])
    assert not hasattr(cells, "decision_function")
    assert not hasattr(cells.fit(X, y, X_public=X_public), "decision_function")


def test_under_add_remove_the_selection_depends_on_no_number_of_private_rows(binary_split):
    """Its own row split read the relation of no candidate: 0 private rows were refused, the delta warning came for
    one of n and n + 1, and a split holding out every row (probability holdout^n) was refused for free."""
    X, y, X_public = binary_split[0], binary_split[1], binary_split[2][:300]
    candidates = [
        ("linear", NoisyGDClassifier(neighboring="add-remove")),
        ("cells", CellCountClassifier(n_cells=10, neighboring="add-remove")),
    ]
    for n in range(4):
        for seed in range(10):  # at holdout 0.5, n = 1 holds out its row in half the seeds
            search = PrivateModelSelection(
                candidates, epsilon=2.0, delta=0.3, classes=[0, 1], holdout=0.5, random_state=seed
            )
            with warnings.catch_warnings():
                warnings.simplefilter("error", PrivacyLeakWarning)
                search.fit(X[:n], y[:n], X_public=X_public)
            assert search.privacy_report_.neighboring == "add-remove" and search.selected_["name"] in (
                "linear",
                "cells",
            )


@pytest.mark.parametrize("outer", ["selection", "one call", "nested selection"])
def test_add_remove_candidates_are_charged_their_replace_one_cost_however_they_are_wrapped(binary_split, outer):
    """PrivateClassifier charged add-remove candidates their own mu^2 (1.05 for 2.24) and a nested selection of
    them counted as replace-one (so a mix with replace-one candidates went through)."""
    X, y, X_public = binary_split[0], binary_split[1], binary_split[2][:300]

    def candidates():
        return [("gd", NoisyGDClassifier(neighboring="add-remove", n_iter=3))]

    def wrapped(accountant):
        params = dict(epsilon=1.0, classes=[0, 1], accountant=accountant, random_state=0)
        if outer == "one call":
            return PrivateClassifier(candidates=candidates(), preprocessor="passthrough", **params)
        if outer == "nested selection":
            return PrivateModelSelection([("inner", PrivateModelSelection(candidates()))], **params)
        return PrivateModelSelection(candidates(), **params)

    accountant = RDPAccountant(epsilon=10.0, delta=1e-5)
    model = wrapped(accountant).fit(X, y, X_public=X_public)
    direct = RDPAccountant(epsilon=10.0, delta=1e-5)
    direct.reserve(replace_one_cost(model.privacy_report_.cost, "add-remove"))
    assert model.privacy_report_.neighboring == "add-remove"
    assert accountant.spent_epsilon == direct.spent_epsilon > 2 * model.privacy_spent_[0]
    wrapped(None).fit(X[:0], y[:0], X_public=X_public)  # no private rows: fitted as one row would be
    if outer == "nested selection":
        mixed = [("inner", PrivateModelSelection(candidates())), ("gd", NoisyGDClassifier())]
        with pytest.raises(ValueError, match="different neighbouring relations"):
            PrivateModelSelection(mixed, classes=[0, 1]).fit(X, y, X_public=X_public)


def test_a_fit_is_reproducible_with_a_seed(binary_split):
    X, y, X_public, _ = binary_split
    a, b = (_search(random_state=7).fit(X, y, X_public=X_public) for _ in range(2))
    np.testing.assert_array_equal(a.predict_proba(X_public), b.predict_proba(X_public))


def test_the_accountant_reserves_the_whole_selection_once(binary_split):
    X, y, X_public, _ = binary_split
    accountant = RDPAccountant(epsilon=3.0, delta=1e-5)
    _search(accountant=accountant).fit(X, y, X_public=X_public)
    assert accountant.n_fits == 1
    assert 0 < accountant.spent_epsilon < 3.0  # at the filters' smaller delta, so a little above 2
    with pytest.raises(BudgetExceededError, match="budget"):
        _search(accountant=accountant).fit(X, y, X_public=X_public)


def test_a_candidate_with_an_accountant_of_its_own_is_refused_before_the_budget(binary_split):
    """The selection reserves every candidate's cost with its own accountant: a candidate's would be dropped, and
    record nothing of a release (it did, silently)."""
    X, y, X_public, _ = binary_split
    own, outer = RDPAccountant(epsilon=3.0, delta=1e-5), RDPAccountant(epsilon=3.0, delta=1e-5)
    search = _search(accountant=outer)
    search.set_params(candidates=[("linear", NoisyGDClassifier(accountant=own)), search.candidates[1]])
    with pytest.raises(ValueError, match="candidate 'linear' has an accountant of its own.*set linear's accountant"):
        search.fit(X, y, X_public=X_public)
    with pytest.raises(ValueError, match="accountant of its own"):
        search.planned_cost(len(X_public))
    assert own.n_fits == 0 and outer.n_fits == 0


def test_candidates_parameters_are_reachable_as_name__parameter(binary_split):
    """As VotingClassifier's: set_params(linear__n_iter=10) raised "Invalid parameter 'linear'"."""
    X, y, X_public, _ = binary_split
    search = _search()
    assert search.get_params()["linear__n_iter"] == 50 and "linear__n_iter" not in search.get_params(deep=False)
    assert search.set_params(linear__n_iter=10, epsilon=3.0) is search
    assert search.candidates[0][1].n_iter == 10 and search.epsilon == 3.0
    rows, labels = np.vstack([X, X_public]), np.concatenate([y, np.full(len(X_public), -1)])  # public rows: -1
    grid = GridSearchCV(_search(), {"linear__n_iter": [5, 10]}, cv=KFold(2, shuffle=True, random_state=0))
    grid.fit(rows, labels)
    assert grid.best_params_["linear__n_iter"] in (5, 10)


def test_non_gaussian_and_non_private_candidates_are_refused_with_the_fix(binary_split):
    X, y, X_public, _ = binary_split
    laplace = PATEClassifier(DecisionTreeClassifier(), n_teachers=5, aggregator=LNMax(scale=10.0), epsilon=None)
    with pytest.raises(ValueError, match="not Gaussian DP.*GNMax"):
        PrivateModelSelection([("pate", laplace)], classes=[0, 1]).planned_cost(300)
    with pytest.raises(ValueError, match="not a private skpate estimator"):
        PrivateModelSelection([("lr", LogisticRegression())], classes=[0, 1]).fit(X, y, X_public=X_public)
    with pytest.raises(ValueError, match="unique"):
        PrivateModelSelection([("a", NoisyGDClassifier()), ("a", NoisyGDClassifier())], classes=[0, 1]).fit(
            X, y, X_public=X_public
        )
    with pytest.raises(ValueError, match="at least one"):
        PrivateModelSelection([], classes=[0, 1]).fit(X, y, X_public=X_public)


def test_candidates_must_protect_the_same_relation(binary_split):
    X, y, X_public, _ = binary_split
    mixed = [("a", NoisyGDClassifier()), ("b", NoisyGDClassifier(neighboring="add-remove"))]
    accountant = RDPAccountant(epsilon=3.0, delta=1e-5)
    with pytest.raises(ValueError, match="neighbouring"):
        PrivateModelSelection(mixed, classes=[0, 1], accountant=accountant).fit(X, y, X_public=X_public)
    assert accountant.n_fits == 0  # refused while planning, before a private row was read
    same = [("a", NoisyGDClassifier(neighboring="add-remove")), ("b", NoisyGDClassifier(neighboring="add-remove"))]
    fitted = PrivateModelSelection(same, classes=[0, 1], random_state=0).fit(X, y, X_public=X_public)
    assert fitted.privacy_report_.neighboring == "add-remove"


def test_planned_cost_is_a_gaussian_cost():
    assert isinstance(_search().planned_cost(100), Cost) and not _search().planned_cost(100).pure


def test_a_pate_candidate_composes_with_the_others(binary_split):
    """PATE with forest teachers then leaf refits, as docs/selection.md shows it: Gaussian DP, so it composes."""
    from skpate import make_tabular_refit

    X, y, X_public, _ = binary_split
    candidates = [("linear", NoisyGDClassifier()), ("pate-trees", make_tabular_refit(n_teachers=10, n_rounds=1))]
    search = PrivateModelSelection(candidates, epsilon=2.0, classes=[0, 1], random_state=0).fit(X, y, X_public=X_public)
    assert search.privacy_spent_ == (2.0, 1e-5)
    assert search.planned_cost(len(X_public)).epsilon(1e-5)[0] <= 2.0


# ------------------------------------------------------------------ issue 30: errors that leak nothing

SECRET = "SECRET-ZIP-90210"


class _QuotesOnPredict(NoisyGDClassifier):
    """A candidate whose predict fails quoting a value of the rows it was given (the held-out private rows)."""

    def predict(self, X):
        raise ValueError(f"cannot predict the row {SECRET}")


def test_a_candidate_encoder_that_raises_on_unknown_categories_is_refused_while_planning(mixed_split):
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    X, y, X_public = mixed_split
    encoder = ColumnTransformer([("city", OneHotEncoder(), ["city"])], remainder="passthrough")
    search = PrivateModelSelection(
        [("linear", NoisyGDClassifier(preprocessor=encoder))], classes=[0, 1, 2],
        accountant=RDPAccountant(epsilon=5.0, delta=1e-5),
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"candidate 'linear': preprocessor step 'city' \(OneHotEncoder\)"):
        search.planned_cost(300)
    with pytest.raises(ValueError, match="handle_unknown='error'"):
        search.fit(X, y, X_public=X_public)
    assert search.accountant.n_fits == 0


def test_a_failure_on_the_held_out_rows_quotes_nothing(binary_split, error_text):
    X, y, X_public, _ = binary_split
    search = _search().set_params(candidates=[("linear", NoisyGDClassifier()), ("leaky", _QuotesOnPredict())])
    with pytest.raises(ValueError, match="candidate 'leaky''s predict on the held-out rows failed on the private rows"):
        try:
            search.fit(X, y, X_public=X_public)
        except ValueError as error:
            assert SECRET not in error_text(error) and "it raised a ValueError" in str(error)
            raise


@pytest.mark.parametrize("labels", ["one class", "a class without a row"])
def test_private_rows_need_not_show_every_public_class(three_class_split_small, labels):
    from skpate import CellCountClassifier, LeafRefitClassifier

    X, y, X_public = three_class_split_small
    y = np.zeros_like(y) if labels == "one class" else np.where(y == 2, 1, y)
    candidates = [
        ("linear", NoisyGDClassifier()),
        ("cells", CellCountClassifier(n_cells=20, n_partitions=2)),
        ("trees", LeafRefitClassifier(NoisyGDClassifier(), n_estimators=5, min_samples_leaf=10)),
    ]
    search = PrivateModelSelection(candidates, classes=[0, 1, 2], random_state=0).fit(X, y, X_public=X_public)
    assert list(search.classes_) == [0, 1, 2] and search.predict_proba(X_public).shape == (len(X_public), 3)


@pytest.mark.parametrize("candidate", ["cells", "refit"])
def test_a_candidate_the_public_pool_cannot_carry_is_refused_before_the_budget(binary_split, candidate):
    X, y, X_public, _ = binary_split
    X_public = X_public[:100]
    estimator = {
        "cells": CellCountClassifier(n_cells=500),
        "refit": LeafRefitClassifier(NoisyGDClassifier(), min_samples_leaf=1000),
    }[candidate]
    accountant = RDPAccountant(epsilon=50.0, delta=1e-5)
    search = PrivateModelSelection([("only", estimator)], classes=[0, 1], accountant=accountant)
    with pytest.raises(ValueError, match="n_cells=500|min_samples_leaf=1000"):
        search.fit(X, y, X_public=X_public)
    assert accountant.spent_epsilon == 0.0


def test_a_budget_too_small_to_share_and_a_split_with_no_row_to_fit_on_say_so(binary_split):
    X, y, X_public, _ = binary_split
    two = [("linear", NoisyGDClassifier()), ("cells", CellCountClassifier(n_cells=20))]
    accountant = RDPAccountant(epsilon=50.0, delta=1e-5)
    with pytest.raises(ValueError, match=r"epsilon=1e-06 is too small to share among 2 candidates .* Raise epsilon"):
        PrivateModelSelection(two, epsilon=1e-6, classes=[0, 1], accountant=accountant).fit(X, y, X_public=X_public)
    # Every row held out (2 rows, holdout 0.99: the draw is blind to their content): refused before the budget.
    search = PrivateModelSelection(two, holdout=0.99, classes=[0, 1], accountant=accountant, random_state=0)
    with pytest.raises(ValueError, match="held out every private row .* lower holdout") as refused:
        search.fit(X[:2], y[:2], X_public=X_public)
    assert "2" not in str(refused.value)  # under add/remove the number of private rows is private
    assert accountant.spent_epsilon == 0.0


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_candidates_fitted_in_parallel_are_the_ones_fitted_in_turn(binary_split, backend):
    """n_jobs fits the candidates in joblib workers; their seeds are drawn before, so a seeded fit is the same."""
    X, y, X_public, _ = binary_split
    in_turn = _search().fit(X, y, X_public=X_public)
    with parallel_config(backend=backend):
        parallel = _search(n_jobs=2).fit(X, y, X_public=X_public)
    assert parallel.selected_["name"] == in_turn.selected_["name"]
    assert np.array_equal(parallel.predict_proba(X_public), in_turn.predict_proba(X_public))
    assert parallel.candidate_epsilons_ == in_turn.candidate_epsilons_


def test_parallel_candidates_speak_in_their_order(binary_split, capsys):
    X, y, X_public, _ = binary_split
    _search(n_jobs=2, verbose=1).fit(X, y, X_public=X_public)
    lines = [line for line in capsys.readouterr().out.splitlines() if "fitted in" in line]
    assert [line.split("'")[1] for line in lines] == ["linear", "noise"]


_PLANTED = 12345.678


def _warns_on_a_planted_value(X):
    X = np.asarray(X, dtype=float)
    if np.any(X == _PLANTED):
        warnings.warn(f"suspicious value {_PLANTED!r}", UserWarning)
    return X


def test_parallel_candidates_warn_the_caller_as_candidates_in_turn_do_and_quote_nothing(binary_split):
    """Workers are processes whatever the configured backend (threads would share catch_warnings, which keeps private
    values out of messages), and their sanitized warnings come back to the caller, in the candidates' order."""
    X, y, X_public, _ = binary_split
    X = X.copy()
    X[:40, 2] = _PLANTED  # private rows only
    candidates = [
        ("plain", NoisyGDClassifier()),
        ("warns", NoisyGDClassifier(preprocessor=FunctionTransformer(_warns_on_a_planted_value))),
    ]
    said = {}
    for n_jobs, backend in [(None, "loky"), (2, "loky"), (2, "threading")]:
        search = PrivateModelSelection(candidates, epsilon=2.0, classes=[0, 1], random_state=0, n_jobs=n_jobs)
        with warnings.catch_warnings(record=True) as caught, parallel_config(backend=backend):
            warnings.simplefilter("always")
            search.fit(X, y, X_public=X_public)
        said[n_jobs, backend] = [str(w.message) for w in caught if not issubclass(w.category, SeededNoiseWarning)]
    assert said[None, "loky"] and all("UserWarning" in message for message in said[None, "loky"])
    assert said[2, "loky"] == said[2, "threading"] == said[None, "loky"]
    assert not any("12345" in message for messages in said.values() for message in messages)


@pytest.mark.parametrize("n_jobs", [0, True])
def test_n_jobs_that_means_nothing_is_refused_before_the_budget(binary_split, n_jobs):
    X, y, X_public, _ = binary_split
    accountant = RDPAccountant(epsilon=10.0, delta=1e-5)
    with pytest.raises(ValueError, match="n_jobs.* None .*-1 .*positive number of processes"):
        _search(n_jobs=n_jobs, accountant=accountant).fit(X, y, X_public=X_public)
    assert accountant.spent_epsilon == 0.0


def _fails_slowly_on_the_planted_value(X):
    X = np.asarray(X, dtype=float)
    if np.any(X == _PLANTED):
        time.sleep(0.5)
        raise ValueError("the first candidate's preprocessor fails")
    return X


def _fails_at_once_on_the_planted_value(X):
    X = np.asarray(X, dtype=float)
    if np.any(X == _PLANTED):
        raise ValueError("the second candidate's preprocessor fails")
    return X


def test_a_failure_among_parallel_candidates_is_the_one_candidates_in_turn_raise(binary_split):
    """The first failing candidate in the list, not the first to fail in time; the others finish, none cancelled."""
    X, y, X_public, _ = binary_split
    X = X.copy()
    X[:40, 2] = _PLANTED  # private rows only: the public rows pass
    failing = [
        ("slow", NoisyGDClassifier(preprocessor=FunctionTransformer(_fails_slowly_on_the_planted_value))),
        (
            "quick",
            CellCountClassifier(n_cells=10, preprocessor=FunctionTransformer(_fails_at_once_on_the_planted_value)),
        ),
    ]
    raised = {}
    for n_jobs in (None, 2):
        with pytest.raises(ValueError) as caught:
            PrivateModelSelection(failing, classes=[0, 1], random_state=0, n_jobs=n_jobs).fit(X, y, X_public=X_public)
        raised[n_jobs] = str(caught.value)
    assert raised[None] == raised[2] and "NoisyGDClassifier" in raised[2] and "12345" not in raised[2]
