"""LeafRefitClassifier: the budget split, the leaf-count mechanism's sensitivity and noise, publishing, errors."""

import pickle

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import InvalidParameterError

from skpate import (
    CellCountClassifier,
    ConfidentGNMax,
    GNMax,
    InteractiveGNMax,
    LeafRefitClassifier,
    LNMax,
    NoisyGDClassifier,
    PATEClassifier,
    PrivacyLeakWarning,
    make_tabular_pate,
    make_tabular_refit,
)
from skpate.pool.count_model import noisy_counts
from skpate.pool.refit import largest_leaf
from skpate.privacy import BudgetExceededError, RDPAccountant
from skpate.privacy.gdp import gdp_epsilon


@pytest.fixture(scope="module")
def data(binary_string_split):
    """conftest's split with string labels, as in tabular data."""
    return binary_string_split


def pate(**params):
    return PATEClassifier(DecisionTreeClassifier(max_depth=4), **{"n_teachers": 20, "random_state": 0, **params})


def refit(epsilon=4.0, pate_params=None, **params):
    return LeafRefitClassifier(pate(**(pate_params or {})), epsilon=epsilon, classes=["neg", "pos"], **params)


def test_budget_split_composes_to_the_budget(data, reference_gdp_mu):
    X, y, X_public, _, _ = data
    model = refit(epsilon=2.0, refit_share=0.6, random_state=0).fit(X, y, X_public=X_public)
    mu_squared = reference_gdp_mu(2.0, 1e-5) ** 2
    # The PATE part (GNMax, Gaussian DP) gets the rest of the budget's mu^2.
    assert model.pate_.epsilon == pytest.approx(gdp_epsilon(np.sqrt(0.4 * mu_squared), 1e-5), rel=1e-6)
    cost = model.privacy_report_.cost
    assert cost.mu_squared == pytest.approx(model.pate_.planned_cost(600).mu_squared + 0.6 * mu_squared, rel=1e-9)
    assert cost.mu_squared <= mu_squared * (1 + 1e-9)
    assert model.privacy_spent_ == (model.privacy_report_.epsilon, 1e-5)
    assert 1.9 < model.privacy_spent_[0] <= 2.0  # short of 2 by under one answer
    assert model.privacy_report_.guarantee == "a-priori" and model.privacy_report_.data_dependent_epsilon is None
    assert model.pate_.privacy_spent_[0] <= model.pate_.epsilon
    # Known before the fit, and a larger refit share leaves PATE less.
    assert model.planned_cost(600) == cost
    assert model.pate_epsilon(n_public=600) == pytest.approx(model.pate_.epsilon)
    shares = [refit(refit_share=s).pate_epsilon(600) for s in (0.2, 0.5, 0.8)]
    assert shares[0] > shares[1] > shares[2] > 0


def test_noise_is_calibrated_to_the_sensitivity(data, reference_gdp_mu):
    X, y, X_public, _, _ = data
    model = refit(refit_share=0.5, n_refits=4, n_estimators=8, random_state=0).fit(X, y, X_public=X_public)
    # The sensitivity of the released tables, measured: replace rows of the private set and recount, noise-free.
    codes = (y == "pos").astype(int)
    forest = model.model_.partition
    exact = noisy_counts(forest, X, codes, 2, 0.0, np.random.default_rng(0))
    worst = 0.0
    for row in range(40):
        X2, codes2 = X.copy(), codes.copy()
        X2[row], codes2[row] = X[-1 - row] + 50.0, 1 - codes[row]
        moved = noisy_counts(forest, X2, codes2, 2, 0.0, np.random.default_rng(0))
        worst = max(worst, np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(exact, moved))))
    # 4 rounds at that sensitivity and sigma_ compose to the refits' half of the budget's mu^2, computed here from
    # the (epsilon, delta) -> mu conversion solved independently.
    refit_mu_squared = 4 * (worst / model.sigma_) ** 2
    assert refit_mu_squared == pytest.approx(0.5 * reference_gdp_mu(4.0, 1e-5) ** 2, rel=1e-6)
    # And the whole fit, the PATE part's answers included, stays within the budget.
    whole = model.pate_.privacy_report_.cost.mu_squared + refit_mu_squared
    assert gdp_epsilon(np.sqrt(whole), 1e-5) <= 4.0 * (1 + 1e-9)


def test_replacing_one_row_moves_the_count_tables_by_at_most_the_sensitivity(data):
    X, y, X_public, _, _ = data
    codes = (y == "pos").astype(int)
    forest = RandomForestClassifier(6, min_samples_leaf=20, random_state=0).fit(X_public, X_public[:, 0] > 0)
    rng = np.random.default_rng(0)
    exact = noisy_counts(forest, X, codes, 2, 0.0, rng)
    worst = 0.0
    for row in range(50):  # replace row `row` with another row's features and the other label
        X2, codes2 = X.copy(), codes.copy()
        X2[row], codes2[row] = X[-1 - row], 1 - codes[row]
        moved = noisy_counts(forest, X2, codes2, 2, 0.0, rng)
        worst = max(worst, np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(exact, moved))))
    assert worst == pytest.approx(np.sqrt(2 * 6))  # attained: the row leaves one cell and enters another per tree
    # Noise-free counts are the private rows per (leaf, class); internal nodes hold nothing.
    for tree, table in zip(forest.estimators_, exact):
        assert table.sum() == len(X)
        assert not table[tree.tree_.children_left != -1].any()


def test_noise_has_the_stated_scale_on_leaves_only(data):
    X, y, X_public, _, _ = data
    codes = (y == "pos").astype(int)
    forest = RandomForestClassifier(4, min_samples_leaf=10, random_state=0).fit(X_public, X_public[:, 1] > 0)
    exact = noisy_counts(forest, X, codes, 2, 0.0, np.random.default_rng(1))
    noisy = noisy_counts(forest, X, codes, 2, 3.0, np.random.default_rng(1))
    leaf_noise = np.concatenate(
        [(b - a)[t.tree_.children_left == -1].ravel() for t, a, b in zip(forest.estimators_, exact, noisy)]
    )
    assert leaf_noise.std() == pytest.approx(3.0, rel=0.15)
    for tree, a, b in zip(forest.estimators_, exact, noisy):
        assert np.array_equal(a[tree.tree_.children_left != -1], b[tree.tree_.children_left != -1])


def test_refit_learns_and_the_published_model_holds_no_teacher(data):
    X, y, X_public, X_eval, y_eval = data
    model = refit(random_state=0).fit(X, y, X_public=X_public)
    assert model.score(X_eval, y_eval) > 0.8
    assert set(model.predict(X_eval)) <= {"neg", "pos"}
    np.testing.assert_allclose(model.predict_proba(X_eval).sum(axis=1), 1.0)
    model = model.export_model()
    np.testing.assert_array_equal(model.predict(X_eval), model.predict(X_eval))
    blob = pickle.dumps(model)
    assert b"PATEClassifier" not in blob and b"TeacherEnsemble" not in blob and b"DecisionTreeClassifier" not in blob


def test_rounds_are_reproducible_and_seeded(data):
    X, y, X_public, X_eval, _ = data
    first = refit(random_state=3).fit(X, y, X_public=X_public).predict_proba(X_eval)
    again = refit(random_state=3).fit(X, y, X_public=X_public).predict_proba(X_eval)
    other = refit(random_state=4).fit(X, y, X_public=X_public).predict_proba(X_eval)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    # An unseeded PATE part takes a seed from the refit's: the whole fit is reproducible (it was not).
    unseeded = dict(random_state=None)
    first = refit(random_state=3, pate_params=unseeded).fit(X, y, X_public=X_public).predict_proba(X_eval)
    again = refit(random_state=3, pate_params=unseeded).fit(X, y, X_public=X_public).predict_proba(X_eval)
    np.testing.assert_array_equal(first, again)


def test_missing_classes_warn_and_planning_needs_them(data):
    X, y, X_public, _, _ = data
    model = LeafRefitClassifier(pate(), random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="LeafRefitClassifier takes them from the private labels"):
        model.fit(X, y, X_public=X_public)
    assert list(model.classes_) == ["neg", "pos"] and list(model.pate_.classes_) == ["neg", "pos"]
    with pytest.raises(ValueError, match="pass classes"):
        LeafRefitClassifier(pate()).planned_cost(600)


@pytest.mark.parametrize("params", [dict(refit_share=0.0), dict(refit_share=1.0), dict(n_refits=0)])
def test_bad_parameters_are_named(data, params):
    X, y, X_public, _, _ = data
    with pytest.raises(InvalidParameterError, match=next(iter(params))):
        refit(**params).fit(X, y, X_public=X_public)


def test_refit_cost_is_gaussian_dp_composition(reference_gdp_mu):
    model = refit(epsilon=1.0, refit_share=0.25)
    mu_squared = reference_gdp_mu(1.0, 1e-5) ** 2
    assert model._refit_cost().mu_squared == pytest.approx(0.25 * mu_squared, rel=1e-9)
    # Adding the PATE part's planned cost (its budget, Gaussian DP) gives back the whole budget.
    pate_part = model._pate_part(600)
    total = pate_part.planned_cost(600) + model._refit_cost()
    assert total == model.planned_cost(600) and total.epsilon(1e-5)[0] <= 1.0
    assert pate_part.epsilon == pytest.approx(gdp_epsilon(np.sqrt(0.75 * mu_squared), 1e-5), rel=1e-6)


def test_a_plan_outside_gaussian_dp_gets_its_budget_by_bisection(data):
    model = refit(epsilon=2.0, pate_params=dict(aggregator=LNMax(scale=10.0)), refit_share=0.5)
    total = model.planned_cost(600)
    assert total.pure and 1.9 < total.epsilon(1e-5)[0] <= 2.0


@pytest.mark.parametrize("part", [NoisyGDClassifier, CellCountClassifier])
def test_a_pool_part_calibrated_for_add_remove_is_refused_before_the_budget(data, part):
    """Replacing one row moves an add/remove part's release twice as far as its noise was sized for: a fit that took
    it reported epsilon 1.0 for a replace-one epsilon of 1.65 (NoisyGD) or 1.25 (CellCount)."""
    X, y, X_public, _, _ = data
    accountant = RDPAccountant(epsilon=4.0, delta=1e-5)
    model = LeafRefitClassifier(part(neighboring="add-remove"), epsilon=1.0, classes=["neg", "pos"])
    with pytest.raises(ValueError, match=r"neighboring='add-remove'.* Set pate__neighboring='replace-one'"):
        model.set_params(accountant=accountant).fit(X, y, X_public=X_public)
    with pytest.raises(ValueError, match="pate__neighboring='replace-one'"):
        model.planned_cost(len(X_public))
    assert accountant.n_fits == 0
    model.set_params(pate__neighboring="replace-one").fit(X, y, X_public=X_public)
    assert model.privacy_spent_[0] == pytest.approx(1.0) and accountant.n_fits == 1


def test_a_pate_part_with_an_accountant_of_its_own_is_refused_before_the_budget(data):
    """The refit reserves the whole cost with its own accountant: the part's would be dropped, and record nothing of
    a release of epsilon 1.94 (it did, silently)."""
    X, y, X_public, _, _ = data
    own = RDPAccountant(epsilon=4.0, delta=1e-5)
    model = refit(epsilon=2.0, pate_params=dict(accountant=own))
    with pytest.raises(ValueError, match="pate has an accountant of its own.* set pate__accountant=None"):
        model.fit(X, y, X_public=X_public)
    with pytest.raises(ValueError, match="accountant of its own"):
        model.planned_cost(len(X_public))
    assert own.n_fits == 0
    model.set_params(pate__accountant=None, accountant=own).fit(X, y, X_public=X_public)
    assert own.n_fits == 1


def test_an_accountant_reserves_both_parts_and_keeps_the_charge_of_a_failed_fit(data):
    X, y, X_public, _, _ = data
    accountant = RDPAccountant(epsilon=4.0, delta=1e-5)
    model = refit(epsilon=2.0, accountant=accountant).fit(X, y, X_public=X_public)
    assert accountant.n_fits == 1 and accountant.history()[0]["label"].startswith("LeafRefitClassifier")
    assert accountant.spent_epsilon == pytest.approx(model.planned_cost(600).epsilon(accountant.filter_delta)[0])
    small = RDPAccountant(epsilon=1.0, delta=1e-5)  # no room for a fit planned at epsilon 2
    with pytest.raises(BudgetExceededError):
        refit(epsilon=2.0, accountant=small, refit_share=0.1).fit(X, y, X_public=X_public)
    assert small.spent_epsilon == 0.0 and small.n_fits == 0  # refused before any private row was read
    # A fit that fails after reading private rows keeps its charge: the failure itself depends on them.
    failing = RDPAccountant(epsilon=4.0, delta=1e-5)
    with pytest.raises(ValueError):
        refit(epsilon=2.0, accountant=failing, pate_params=dict(n_teachers=5000)).fit(X, y, X_public=X_public)
    assert failing.n_fits == 1 and failing.spent_epsilon > 0


def test_warm_start_reuses_the_teachers(data):
    X, y, X_public, X_eval, _ = data
    model = refit(epsilon=2.0, pate_params=dict(warm_start=True), random_state=0).fit(X, y, X_public=X_public)
    teachers = model.pate_.teachers_
    model.set_params(epsilon=3.0).fit(X, y, X_public=X_public)
    assert model.pate_.teachers_ is teachers and 2.9 < model.privacy_spent_[0] <= 3.0
    cold = refit(epsilon=3.0, random_state=0).fit(X, y, X_public=X_public)
    assert cold.pate_.teachers_ is not teachers


def test_the_preprocessor_sees_public_rows_only(data):
    X, y, X_public, X_eval, _ = data
    model = refit(preprocessor=StandardScaler(), random_state=0).fit(X, y, X_public=X_public)
    np.testing.assert_allclose(model.model_.preprocessor.mean_, X_public.mean(axis=0))
    frozen = FrozenEstimator(StandardScaler().fit(X_eval))  # fitted elsewhere on public data: used as is
    model.set_params(preprocessor=frozen).fit(X, y, X_public=X_public)
    np.testing.assert_allclose(model.model_.preprocessor.mean_, X_eval.mean(axis=0))


def test_make_tabular_refit_configures_the_recipe_for_its_share(reference_gdp_mu):
    model = make_tabular_refit(epsilon=1.0, classes=["a", "b"], refit_share=0.7, n_teachers=250)
    part = gdp_epsilon(np.sqrt(0.3) * reference_gdp_mu(1.0, 1e-5), 1e-5)
    assert model.epsilon == 1.0 and model.pate_epsilon(8140) == pytest.approx(part, rel=1e-6)
    # The recipe's student follows the part's budget (0.52: vote regression), not the whole one (1: hard labels),
    # and follows a new budget set on the refit.
    student = type(model._pate_part(8140).configured_pate().student[-1])
    assert student is type(make_tabular_pate(epsilon=part, classes=["a", "b"]).configured_pate().student[-1])
    assert student is not type(make_tabular_pate(epsilon=1.0, classes=["a", "b"]).configured_pate().student[-1])
    assert type(model.set_params(epsilon=8.0)._pate_part(8140).configured_pate().student[-1]) is not student
    with pytest.raises(ValueError, match="refit_share"):
        make_tabular_refit(epsilon=1.0, classes=["a", "b"], refit_share=1.0).pate_epsilon(8140)


# ------------------------------------------------------------------ issue 30: refusals from public quantities only


def _epsilon_of(mu, delta):
    """The epsilon at which mu-GDP is (epsilon, delta)-DP ([DRS22] Cor. 2.13), solved here with scipy."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    return brentq(lambda e: norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2) - delta, 0.0, 100.0)


def _pays_an_answer(aggregator, epsilon, n_public):
    """Whether a PATE fit with ``aggregator`` under ``epsilon`` can plan at least one answer."""
    try:
        pate(n_teachers=250, aggregator=aggregator, epsilon=epsilon, classes=["neg", "pos"]).planned_cost(n_public)
    except ValueError:
        return False
    return True


AGGREGATORS = {
    "GNMax": lambda: GNMax(sigma=40.0),
    "ConfidentGNMax(150, 100, 40)": lambda: ConfidentGNMax(threshold=150, sigma_threshold=100, sigma=40),  # user guide
    "ConfidentGNMax(200, 150, 40)": lambda: ConfidentGNMax(threshold=200, sigma_threshold=150, sigma=40),
    "InteractiveGNMax": lambda: InteractiveGNMax(),
}


@pytest.mark.parametrize("aggregator", list(AGGREGATORS))
@pytest.mark.parametrize("epsilon", [0.1, 0.25, 0.5, 1.0, 2.0, 4.0])
def test_the_budget_split_never_exceeds_epsilon_and_raises_only_when_the_pate_part_cannot_pay(
    reference_gdp_mu, epsilon, aggregator
):
    n_public, checked = 1000, 0
    for refit_share in (0.1, 0.3, 0.5, 0.7, 0.9):
        model = refit(epsilon=epsilon, refit_share=refit_share, pate_params=dict(n_teachers=250))
        model.set_params(pate__aggregator=AGGREGATORS[aggregator]())
        mu_squared = reference_gdp_mu(epsilon, 1e-5) ** 2
        # The PATE part's share of the budget, converted independently; feasible if a hair less pays an answer.
        share = _epsilon_of(np.sqrt((1 - refit_share) * mu_squared), 1e-5)
        if _pays_an_answer(AGGREGATORS[aggregator](), share * (1 - 1e-6), n_public):
            cost = model.planned_cost(n_public)  # must not raise (float rounding once did)
            assert cost.mu_squared <= mu_squared and not cost.pure and cost.release is None
            assert cost.epsilon(1e-5)[0] <= epsilon
            assert model.pate_epsilon(n_public) <= share
            checked += 1
        elif not _pays_an_answer(AGGREGATORS[aggregator](), share * (1 + 1e-6), n_public):
            with pytest.raises(ValueError, match=f"refit_share={refit_share} of epsilon={epsilon}") as caught:
                model.planned_cost(n_public)
            assert "does not cover one query" in str(caught.value.__cause__)  # the PATE part's reason, chained
    if (epsilon, aggregator) in {(0.25, "ConfidentGNMax(150, 100, 40)"), (4.0, "GNMax")}:
        assert checked >= 3  # the grid does test feasible splits


def test_a_min_samples_leaf_the_public_rows_cannot_split_is_refused(data):
    X, y, X_public, _, _ = data
    n_public = len(X_public)
    # Why: a forest grown on the public rows with leaves of more than half of them is a forest of stumps.
    stumps = RandomForestRegressor(5, min_samples_leaf=n_public // 2 + 1, random_state=0).fit(X_public, X_public[:, 0])
    assert all(tree.tree_.node_count == 1 for tree in stumps.estimators_)
    accountant = RDPAccountant(epsilon=8.0, delta=1e-5)
    for leaf in (n_public // 2 + 1, largest_leaf(n_public) + 1):
        with pytest.raises(ValueError, match=f"min_samples_leaf={leaf} .* {n_public} public rows") as caught:
            refit(min_samples_leaf=leaf, accountant=accountant).fit(X, y, X_public=X_public)
        assert f"min_samples_leaf <= {largest_leaf(n_public)}" in str(caught.value)
    assert accountant.n_fits == 0  # refused from public quantities, before any private row was read
    assert largest_leaf(n_public) <= n_public // 2
    model = refit(min_samples_leaf=largest_leaf(n_public) // 2, random_state=0).fit(X, y, X_public=X_public)
    assert all(tree.tree_.node_count > 1 for tree in model.model_.partition.estimators_)


def test_one_class_private_rows_fit_with_the_public_classes(data):
    X, y, X_public, X_eval, _ = data
    for labels in (np.full(len(y), "neg"), np.where(y == "pos", "neg", y)):
        model = refit(random_state=0).fit(X, labels, X_public=X_public)  # PATE part with tree teachers
        assert list(model.classes_) == ["neg", "pos"] and model.predict_proba(X_eval).shape == (len(X_eval), 2)
