"""LeafRefitClassifier: the budget split, the leaf-count mechanism's sensitivity and noise, publishing, errors."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import InvalidParameterError

from skpate import (
    CellCountClassifier,
    LeafRefitClassifier,
    LNMax,
    PATEClassifier,
    make_tabular_pate,
    make_tabular_refit,
)
from skpate.pool.cells import KMeansCells
from skpate.pool.count_model import noisy_counts
from skpate.privacy import BudgetExceededError, Cost, RDPAccountant
from skpate.privacy.gdp import gdp_epsilon, gdp_mu


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=3000, n_features=8, n_informative=5, random_state=0)
    y = np.where(y == 1, "yes", "no").astype(object)  # string labels, as in tabular data
    return X[:2000], y[:2000], X[2000:2600], X[2600:], y[2600:]


def pate(epsilon=4.0, **params):
    return PATEClassifier(
        GaussianNB(), n_teachers=20, epsilon=epsilon, classes=["no", "yes"],
        random_state=0, **params,
    )  # fmt: skip


def test_budget_split_composes_to_the_budget(data):
    X, y, X_public, _, _ = data
    refit = LeafRefitClassifier(pate(epsilon=2.0), refit_share=0.6, random_state=0).fit(X, y, X_public=X_public)
    mu_squared = gdp_mu(2.0, 1e-5) ** 2
    # The PATE part (GNMax, Gaussian DP) gets the rest of the budget's mu^2.
    assert refit.pate_.epsilon == pytest.approx(gdp_epsilon(np.sqrt(0.4 * mu_squared), 1e-5), rel=1e-9)
    assert refit.cost_ == refit.pate_.planned_cost(600) + Cost(mu_squared=0.6 * mu_squared)
    assert refit.cost_.mu_squared <= mu_squared
    assert refit.privacy_spent_[0] <= 2.0
    assert refit.privacy_spent_[0] > 1.9 and refit.privacy_spent_[1] == 1e-5  # short of 2 by under one answer
    assert refit.pate_.privacy_spent_[0] <= refit.pate_.epsilon
    # Known before the fit, and a larger refit share leaves PATE less.
    assert refit.pate_epsilon(n_public=600) == pytest.approx(refit.pate_.epsilon)
    shares = [LeafRefitClassifier(pate(), refit_share=s).pate_epsilon(600) for s in (0.2, 0.5, 0.8)]
    assert shares[0] > shares[1] > shares[2] > 0


def test_noise_is_calibrated_to_the_sensitivity(data):
    X, y, X_public, _, _ = data
    refit = LeafRefitClassifier(pate(), refit_share=0.5, n_rounds=4, n_estimators=8, random_state=0)
    refit.fit(X, y, X_public=X_public)
    # Each round is mu_round-GDP with mu_round^2 = 0.5 mu^2 / 4, and 8 trees have L2 sensitivity sqrt(2 * 8).
    mu_round = np.sqrt(0.5 * gdp_mu(4.0, 1e-5) ** 2 / 4)
    assert refit.sigma_ == pytest.approx(np.sqrt(16) / mu_round)


def test_replacing_one_row_moves_the_count_tables_by_at_most_the_sensitivity(data):
    X, y, X_public, _, _ = data
    codes = (y == "yes").astype(int)
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
    codes = (y == "yes").astype(int)
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
    refit = LeafRefitClassifier(pate(epsilon=4.0), random_state=0).fit(X, y, X_public=X_public)
    assert refit.score(X_eval, y_eval) > 0.8
    assert set(refit.predict(X_eval)) <= {"no", "yes"}
    np.testing.assert_allclose(refit.predict_proba(X_eval).sum(axis=1), 1.0)
    model = refit.export_model()
    np.testing.assert_array_equal(model.predict(X_eval), refit.predict(X_eval))
    blob = pickle.dumps(model)
    assert b"PATEClassifier" not in blob and b"TeacherEnsemble" not in blob and b"GaussianNB" not in blob


def test_rounds_are_reproducible_and_seeded(data):
    X, y, X_public, X_eval, _ = data
    first = LeafRefitClassifier(pate(), random_state=3).fit(X, y, X_public=X_public).predict_proba(X_eval)
    again = LeafRefitClassifier(pate(), random_state=3).fit(X, y, X_public=X_public).predict_proba(X_eval)
    other = LeafRefitClassifier(pate(), random_state=4).fit(X, y, X_public=X_public).predict_proba(X_eval)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(pate=PATEClassifier(DecisionTreeClassifier(), classes=["no", "yes"])), "give pate an epsilon"),
        (dict(pate=PATEClassifier(DecisionTreeClassifier(), epsilon=1.0)), "give pate classes"),
    ],
)
def test_needs_a_budget_and_public_classes(data, params, message):
    X, y, X_public, _, _ = data
    with pytest.raises(ValueError, match=message):
        LeafRefitClassifier(**params).fit(X, y, X_public=X_public)


@pytest.mark.parametrize("params", [dict(refit_share=0.0), dict(refit_share=1.0), dict(n_rounds=0)])
def test_bad_parameters_are_named(data, params):
    X, y, X_public, _, _ = data
    with pytest.raises(InvalidParameterError, match=next(iter(params))):
        LeafRefitClassifier(pate(), **params).fit(X, y, X_public=X_public)


def test_refit_cost_is_gaussian_dp_composition():
    refit = LeafRefitClassifier(pate(epsilon=1.0), refit_share=0.25)
    mu_squared = gdp_mu(1.0, 1e-5) ** 2
    assert refit._refit_cost() == Cost(mu_squared=0.25 * mu_squared)
    # Adding the PATE part's planned cost (its budget, Gaussian DP) gives back the whole budget.
    pate_part = refit._pate_part(600)
    total = pate_part.planned_cost(600) + refit._refit_cost()
    assert total.epsilon(1e-5)[0] <= 1.0
    assert pate_part.epsilon == pytest.approx(gdp_epsilon(np.sqrt(0.75 * mu_squared), 1e-5), rel=1e-9)


def test_a_plan_outside_gaussian_dp_gets_its_budget_by_bisection(data):
    X, y, X_public, _, _ = data
    refit = LeafRefitClassifier(pate(epsilon=2.0, aggregator=LNMax(scale=10.0)), refit_share=0.5)
    pate_part = refit._pate_part(600)
    total = pate_part.planned_cost(600) + refit._refit_cost()
    assert total.pure and 1.9 < total.epsilon(1e-5)[0] <= 2.0


def test_an_accountant_is_charged_for_both_parts_and_refunded_if_pate_fails(data):
    X, y, X_public, _, _ = data
    accountant = RDPAccountant(epsilon=4.0, delta=1e-5)
    LeafRefitClassifier(pate(epsilon=2.0, accountant=accountant)).fit(X, y, X_public=X_public)
    labels = [entry["label"] for entry in accountant.ledger]
    assert labels[0].startswith("LeafRefitClassifier: 3 rounds") and labels[1].startswith("PATEClassifier(GaussianNB")
    both = accountant.spent_epsilon
    assert both > max(entry["epsilon"] for entry in accountant.ledger)
    small = RDPAccountant(epsilon=1.0, delta=1e-5)  # room for the refits' share of epsilon 2, not for both parts
    with pytest.raises(BudgetExceededError):
        LeafRefitClassifier(pate(epsilon=2.0, accountant=small), refit_share=0.1).fit(X, y, X_public=X_public)
    assert small.spent_epsilon == 0.0 and small.ledger[0]["label"].startswith("LeafRefitClassifier")


def test_warm_start_reuses_the_teachers(data):
    X, y, X_public, X_eval, _ = data
    refit = LeafRefitClassifier(pate(epsilon=2.0, warm_start=True), random_state=0).fit(X, y, X_public=X_public)
    teachers = refit.pate_.teachers_
    refit.set_params(pate=pate(epsilon=3.0, warm_start=True)).fit(X, y, X_public=X_public)
    assert refit.pate_.teachers_ is teachers and refit.privacy_spent_[0] <= 3.0
    cold = LeafRefitClassifier(pate(epsilon=3.0), random_state=0).fit(X, y, X_public=X_public)
    assert cold.pate_.teachers_ is not teachers


def test_the_preprocessor_sees_public_rows_only(data):
    X, y, X_public, X_eval, _ = data
    refit = LeafRefitClassifier(pate(), preprocessor=StandardScaler(), random_state=0).fit(X, y, X_public=X_public)
    np.testing.assert_allclose(refit.model_.preprocessor.mean_, X_public.mean(axis=0))
    frozen = FrozenEstimator(StandardScaler().fit(X_eval))  # fitted elsewhere on public data: used as is
    refit.set_params(preprocessor=frozen).fit(X, y, X_public=X_public)
    np.testing.assert_allclose(refit.model_.preprocessor.mean_, X_eval.mean(axis=0))


def test_make_tabular_refit_configures_the_recipe_for_its_share():
    refit = make_tabular_refit(epsilon=1.0, classes=["a", "b"], refit_share=0.7, n_teachers=250)
    part = gdp_epsilon(np.sqrt(0.3) * gdp_mu(1.0, 1e-5), 1e-5)
    assert refit.pate.epsilon == 1.0 and refit.pate_epsilon(8140) == pytest.approx(part, rel=1e-9)
    # The recipe's student follows the part's budget (0.52: vote regression), not the whole one (1: hard labels).
    assert type(refit.pate.student[-1]) is type(make_tabular_pate(epsilon=part, classes=["a", "b"]).student[-1])
    assert type(refit.pate.student[-1]) is not type(make_tabular_pate(epsilon=1.0, classes=["a", "b"]).student[-1])
    with pytest.raises(ValueError, match="refit_share"):
        make_tabular_refit(epsilon=1.0, classes=["a", "b"], refit_share=1.0)


# ----------------------------------------------------------------------------- CellCountClassifier


def test_cell_counts_spend_the_budget_with_the_stated_noise(data):
    X, y, X_public, X_eval, y_eval = data
    cells = CellCountClassifier(epsilon=0.5, classes=["no", "yes"], n_cells=30, n_partitions=6, random_state=0)
    cells.fit(X, y, X_public=X_public)
    assert cells.privacy_spent_ == (0.5, 1e-5)
    assert cells.sigma_ == pytest.approx(np.sqrt(2 * 6) / gdp_mu(0.5, 1e-5))
    assert cells.score(X_eval, y_eval) > 0.75
    assert set(cells.predict(X_eval)) <= {"no", "yes"}


def test_cell_partitions_depend_on_public_rows_only(data):
    X, y, X_public, _, _ = data
    params = dict(epsilon=1.0, classes=["no", "yes"], n_cells=30, n_partitions=3, random_state=0)
    first = CellCountClassifier(**params).fit(X, y, X_public=X_public)
    other = CellCountClassifier(**params).fit(X[::-1] + 1.0, y, X_public=X_public)  # other private rows
    for a, b in zip(first.model_.forest.kmeans_, other.model_.forest.kmeans_):
        np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    # The published model holds centers of public rows and noisy counts, not a private row.
    blob = pickle.dumps(first.model_)
    assert X[0].tobytes() not in blob and X[1].tobytes() not in blob


def test_replacing_one_row_moves_the_cell_tables_by_at_most_the_sensitivity(data):
    X, y, X_public, _, _ = data
    codes = (y == "yes").astype(int)
    cells = KMeansCells(n_cells=25, n_partitions=4, random_state=0).fit(X_public)
    exact = noisy_counts(cells, X, codes, 2, 0.0, np.random.default_rng(0))
    X2, codes2 = X.copy(), codes.copy()
    X2[0], codes2[0] = X_public[0] + 100.0, 1 - codes[0]  # far away: another cell in every partition
    moved = noisy_counts(cells, X2, codes2, 2, 0.0, np.random.default_rng(0))
    assert np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(exact, moved))) == pytest.approx(np.sqrt(2 * 4))
    assert all(table.sum() == len(X) for table in exact)


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(classes=None), "classes"),
        (dict(n_cells=1000), "n_cells=1000"),
        (dict(classes=["no", "maybe"]), "not in classes"),
    ],
)
def test_cell_counts_name_the_problem(data, params, message):
    X, y, X_public, _, _ = data
    with pytest.raises(ValueError, match=message):
        CellCountClassifier(**{"classes": ["no", "yes"], "n_cells": 30, **params}).fit(X, y, X_public=X_public)
    with pytest.raises(ValueError, match="CellCountClassifier requires y"):
        CellCountClassifier(classes=["no", "yes"]).fit(X, None, X_public=X_public)
