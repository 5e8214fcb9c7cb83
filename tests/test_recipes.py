"""The tabular recipe: what it configures, and that a fit with it stays within its budget."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skpate import GNMax, PATEClassifier, TabularPATEClassifier, make_tabular_pate, teachers_for_budget
from skpate.pate.students import VoteRegressionClassifier
from skpate.privacy.calibration import largest_count
from skpate.recipes import VOTE_REGRESSION_ANSWERS


@pytest.fixture(scope="module")
def binary_split():
    X, y = make_classification(n_samples=3000, n_features=8, n_informative=5, random_state=0)
    return X[:2000], y[:2000], X[2000:2600], X[2600:], y[2600:]


def test_recipe_configures_the_measured_settings():
    recipe = make_tabular_pate(
        StandardScaler(), epsilon=1.0, classes=[0, 1], n_teachers=40, vote_regression=False, random_state=3
    )
    assert isinstance(recipe, TabularPATEClassifier) and recipe.vote_regression is False  # stored unchanged
    params = recipe.configured_pate().get_params()
    assert (params["epsilon"], params["n_teachers"], params["random_state"]) == (1.0, 40, 3)
    # Noise and queries: the estimator's budget defaults (GNMax.for_ensemble, 5 rounds of uncertainty sampling).
    assert (params["aggregator"], params["query_strategy"], params["n_rounds"]) == (None, "auto", "auto")
    teacher, student = params["estimator"][-1], params["student"][-1]
    assert isinstance(teacher, RandomForestClassifier) and teacher.max_features is None
    assert isinstance(student, RandomForestClassifier) and student.min_samples_leaf == 5
    # Each pipeline has its own preprocessor: nothing fitted is shared between teachers and student.
    assert params["estimator"][0] is not params["student"][0]
    assert make_tabular_pate(epsilon=1.0, classes=[0, 1], n_rounds=1).configured_pate().n_rounds == 1


def test_recipe_fit_spends_at_most_its_budget_and_learns(binary_split):
    X_priv, y_priv, X_pub, X_eval, y_eval = binary_split
    recipe = make_tabular_pate(
        epsilon=2.0, classes=[0, 1], n_teachers=20, n_rounds=3, vote_regression=False, random_state=0
    )
    recipe.fit(X_priv, y_priv, X_public=X_pub)
    pate = recipe.pate_
    assert recipe.privacy_spent_ == pate.privacy_spent_ and recipe.privacy_spent_[0] <= 2.0
    assert recipe.privacy_report_.guarantee == "a-priori" and recipe.vote_regression_ is False
    assert isinstance(pate.aggregator_, GNMax) and pate.aggregator_.sigma == pytest.approx(20 / 1.75)
    assert 0 < pate.n_queries_ <= len(X_pub) and recipe.n_teachers_ == 20
    majority = max(np.mean(y_eval), 1 - np.mean(y_eval))
    assert recipe.score(X_eval, y_eval) > majority + 0.1
    np.testing.assert_array_equal(recipe.export_model().predict(X_eval), recipe.predict(X_eval))


def test_recipe_resolves_its_settings_for_the_budget_set_before_fit(binary_split):
    """clone, set_params(epsilon=...) and a grid search over epsilon run what each budget calls for."""
    X_priv, y_priv, X_pub, X_eval, y_eval = binary_split
    recipe = make_tabular_pate(epsilon=1.0, classes=[0, 1], n_teachers=20, n_rounds=1, random_state=0)
    # 20 teachers buy 4 hard answers at epsilon 1 (vote regression) and 1,416 at epsilon 30 (hard labels).
    for epsilon, vote_regression in ((1.0, True), (30.0, False)):
        fitted = clone(recipe).set_params(epsilon=epsilon).fit(X_priv, y_priv, X_public=X_pub)
        assert fitted.vote_regression_ is vote_regression and fitted.pate_.epsilon == epsilon
        assert fitted.privacy_spent_[0] <= epsilon
    search = GridSearchCV(recipe, {"epsilon": [1.0, 30.0]}, cv=2).fit(
        np.vstack([X_priv, X_pub]), np.r_[y_priv, np.full(len(X_pub), -1)]
    )
    assert search.best_estimator_.pate_.epsilon == search.best_params_["epsilon"]
    assert search.best_estimator_.vote_regression_ is (search.best_params_["epsilon"] == 1.0)


def test_recipe_buys_less_noise_instead_of_more_than_max_answers_queries():
    X, y = make_classification(n_samples=3000, n_features=8, n_informative=5, random_state=0)
    # At epsilon 0.5 the budget covers fewer than the 1,000 public rows at n/1.75: the noise stays there.
    low = make_tabular_pate(
        epsilon=0.5, classes=[0, 1], n_teachers=20, n_rounds=1, vote_regression=False, random_state=0
    )
    low.fit(X[:2000], y[:2000], X_public=X[2000:])
    assert low.pate_.aggregator_.sigma == pytest.approx(20 / 1.75) and low.pate_.n_queries_ < 1000
    # At epsilon 40 it would cover more than the public rows: the noise drops until they spend the budget.
    high = clone(low).set_params(epsilon=40.0).fit(X[:2000], y[:2000], X_public=X[2000:])
    assert high.pate_.aggregator_.sigma < 20 / 1.75 and high.pate_.n_queries_ == 1000
    assert high.privacy_spent_[0] == pytest.approx(40.0, rel=1e-6)
    # An explicit max_answers fixes the noise before the fit: max_answers answers spend the budget exactly.
    capped = make_tabular_pate(epsilon=4.0, classes=[0, 1], max_answers=500).configured_pate().aggregator
    assert capped.sigma < 250 / 1.75
    assert largest_count(capped.query_cost()[1], 4.0, 1e-5, limit=10**6) == 500


@pytest.mark.parametrize("epsilon", [0.3, 0.5, 0.75, 0.8, 1.0, 2.0])
@pytest.mark.parametrize("n_teachers", [100, 250, "auto"])
def test_recipe_regresses_votes_exactly_where_the_budget_buys_few_hard_answers(epsilon, n_teachers):
    pate = make_tabular_pate(epsilon=epsilon, classes=["a", "b"], n_teachers=n_teachers).configured_pate()
    resolved = pate.resolve_n_teachers(2)
    per_answer = GNMax.for_ensemble(epsilon, 1e-5, resolved, 2).query_cost()[1]
    few = largest_count(per_answer, epsilon, 1e-5, limit=10**6) < VOTE_REGRESSION_ANSWERS
    assert isinstance(pate.student[-1], VoteRegressionClassifier if few else RandomForestClassifier)
    assert pate.aggregator is None  # PATEClassifier picks GaussianHistogram for the vote student


def test_recipe_rule_on_adult_budgets():
    students = [
        type(make_tabular_pate(epsilon=e, classes=[0, 1]).configured_pate().student[-1]) for e in (0.5, 1.0, 2.0, 4.0)
    ]
    assert students == [VoteRegressionClassifier] + [RandomForestClassifier] * 3
    with pytest.raises(ValueError, match="vote_regression"):
        make_tabular_pate(epsilon=1.0, classes=[0, 1], vote_regression="yes").configured_pate()


@pytest.mark.parametrize("max_answers", [0, -3, 2.5, True, "2000"])
def test_recipe_rejects_bad_max_answers(max_answers):
    with pytest.raises(ValueError, match="max_answers"):
        make_tabular_pate(epsilon=1.0, classes=[0, 1], max_answers=max_answers).configured_pate()


def test_recipe_plans_before_the_fit_and_needs_the_label_set_to():
    recipe = make_tabular_pate(epsilon=2.0, classes=[0, 1], n_teachers=20)
    assert recipe.planned_cost(600) == recipe.configured_pate().planned_cost(600)
    assert recipe.publishable_epsilon(600) <= 2.0
    with pytest.raises(ValueError, match="pass classes"):
        make_tabular_pate(epsilon=2.0).planned_cost(600)


@pytest.mark.parametrize(
    ("epsilon", "delta", "n_classes", "n_answers"),
    [(0.5, 1e-5, 2, 800), (1.0, 1e-5, 10, 800), (3.0, 1e-6, 10, 200), (8.0, 1e-3, 2, 50)],
)
def test_teachers_for_budget_is_the_fewest_teachers_whose_budget_buys_the_answers(epsilon, delta, n_classes, n_answers):
    n = teachers_for_budget(epsilon, delta, n_classes, n_answers)

    def answers(n_teachers):  # what PATEClassifier's budget noise for n_teachers buys, counted by the accountant
        per_answer = GNMax.for_ensemble(epsilon, delta, n_teachers, n_classes, max_answers=10**6).query_cost()[1]
        return largest_count(per_answer, epsilon, delta, limit=10**6)

    assert answers(n) >= n_answers > answers(n - 1)


def test_teachers_for_budget_grows_as_the_budget_shrinks():
    counts = [teachers_for_budget(epsilon, 1e-5, 2) for epsilon in (4.0, 2.0, 1.0, 0.5, 0.25)]
    assert counts == sorted(counts) and len(set(counts)) == 5
    # Four times the answers take twice the teachers (answers grow as the square of the count). Ten classes get
    # sqrt(5) times less noise relative to the ensemble, so a fifth of the answers takes as many teachers as two need.
    assert teachers_for_budget(1.0, 1e-5, 2, 3200) == pytest.approx(2 * teachers_for_budget(1.0, 1e-5, 2, 800), abs=1)
    assert teachers_for_budget(1.0, 1e-5, 10, 160) == pytest.approx(teachers_for_budget(1.0, 1e-5, 2, 800), abs=1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"epsilon": 0.0}, "epsilon must be"), ({"n_classes": 1}, "n_classes must be an integer >= 2"),
     ({"n_answers": 0}, "n_answers must be a positive integer"), ({"delta": 1.0}, "delta")],
)  # fmt: skip
def test_teachers_for_budget_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        teachers_for_budget(**({"epsilon": 1.0, "delta": 1e-5, "n_classes": 2} | kwargs))


def test_auto_teachers_are_added_only_where_250_buy_too_few_answers():
    X, y = make_classification(n_samples=12000, n_features=6, n_informative=4, random_state=0)
    X_priv, y_priv, X_pub = X[:10000], y[:10000], X[10000:]
    pate = PATEClassifier(DecisionTreeClassifier(max_depth=2), n_teachers="auto", epsilon=0.5, classes=[0, 1],
                          n_rounds=1, random_state=0).fit(X_priv, y_priv, X_public=X_pub)  # fmt: skip
    assert pate.n_teachers_ == len(pate.teachers_) == teachers_for_budget(0.5, 1e-5, 2) > 250
    assert pate.resolve_n_teachers(2) == pate.n_teachers_  # known before the fit, from public parameters
    assert pate.resolve_n_teachers(None) == 250 and pate.n_teachers == "auto"  # no class count: no rule; unchanged
    assert pate.aggregator_.sigma == pytest.approx(pate.n_teachers_ / 1.75)
    assert pate.n_queries_ >= 800 and pate.privacy_spent_[0] <= 0.5  # the answers it was sized for, in budget
    # Where 250 teachers buy 800 answers, or without a budget, "auto" is 250; an explicit count is kept.
    # With noise that does not scale with the ensemble (a given aggregator, or max_queries), too.
    for params in ({"epsilon": 4.0}, {"epsilon": None, "max_queries": 50}, {"max_queries": 50},
                   {"aggregator": GNMax(sigma=200.0)}):  # fmt: skip
        fitted = clone(pate).set_params(**params).fit(X_priv, y_priv, X_public=X_pub)
        assert fitted.n_teachers_ == 250
    assert clone(pate).set_params(n_teachers=40).fit(X_priv, y_priv, X_public=X_pub).n_teachers_ == 40
    # Ten classes get less noise relative to the ensemble (GNMax.for_ensemble), so 250 buy fewer answers.
    assert teachers_for_budget(1.0, 1e-5, 10) > 250 >= teachers_for_budget(1.0, 1e-5, 2) - 12
    assert make_tabular_pate(epsilon=0.5, classes=[0, 1], n_teachers="auto").n_teachers == "auto"  # unchanged
    # Too few private rows for the count it chose: the error says that "auto" chose it.
    with pytest.raises(ValueError, match='exceeds the number of private.*n_teachers="auto" chose 493 for epsilon=0.5'):
        clone(pate).fit(X_priv[:300], y_priv[:300], X_public=X_pub)
    capped = make_tabular_pate(epsilon=0.5, classes=[0, 1], n_teachers="auto", max_answers=500).configured_pate()
    assert capped.n_teachers == teachers_for_budget(0.5, 1e-5, 2)  # resolved: the noise was fixed for that count
    assert capped.aggregator.sigma == pytest.approx(GNMax.for_ensemble(0.5, 1e-5, capped.n_teachers, 2, 500).sigma)


def test_recipe_without_an_encoder_refuses_string_columns_before_any_teacher(monkeypatch):
    """Issue 30: the forests crashed on a string column with a hidden message; the recipe now says which columns
    and the fix, from the public rows' schema, before any teacher is trained."""
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"income": rng.normal(size=600), "city": rng.choice(["secret-paris", "secret-rome"], 600)})
    y = rng.integers(0, 2, 600)
    monkeypatch.setattr(RandomForestClassifier, "fit", lambda *a, **k: pytest.fail("a forest was fit"))
    recipe = make_tabular_pate(epsilon=1.0, classes=[0, 1], n_teachers=10, n_rounds=1)
    with pytest.raises(ValueError, match=r"preprocessor='passthrough'.*non-numeric columns \['city'\]") as error:
        recipe.fit(X[:400], y[:400], X_public=X[400:])
    assert "secret" not in str(error.value) and "OneHotEncoder" in str(error.value)
    # Numbers in an object column are numbers to a forest: no refusal from the dtype alone.
    numbers = pd.DataFrame({"income": rng.normal(size=600), "code": rng.integers(0, 5, 600).astype(object)})
    monkeypatch.undo()
    recipe.fit(numbers[:400], y[:400], X_public=numbers[400:])
    assert recipe.n_queries_ > 0


def test_recipe_warm_start_refuses_other_private_rows(binary_split):
    X_priv, y_priv, X_pub, _, _ = binary_split
    recipe = make_tabular_pate(epsilon=2.0, classes=[0, 1], n_teachers=10, n_rounds=1, warm_start=True)
    recipe.fit(X_priv, y_priv, X_public=X_pub)
    teachers = recipe.pate_.teachers_
    with pytest.raises(ValueError, match="warm_start.*same private rows"):
        recipe.fit(X_priv[:-100], y_priv[:-100], X_public=X_pub)
    recipe.set_params(epsilon=3.0).fit(X_priv, y_priv, X_public=X_pub)  # the same rows at another budget
    assert recipe.pate_.teachers_ is teachers
