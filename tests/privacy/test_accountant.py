"""Budgets across fits (RDPAccountant), noise derived from a budget, the publishable student."""

import copy
import pickle
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from skpate import CellCountClassifier, ConfidentGNMax, GNMax, LNMax, NoisyGDClassifier, PATEClassifier, Plurality
from skpate.privacy import BudgetExceededError, Cost, RDPAccountant, analyze, gdp_delta, gdp_epsilon, gdp_mu
from skpate.privacy.accountant import BudgetFilters
from skpate.privacy.calibration import largest_count
from skpate.privacy.cost import replace_one_cost


@pytest.fixture(scope="module")
def data(three_class_split):
    """conftest's three-class split without the public rows' labels."""
    return three_class_split[:3]


def pate(accountant, **params):
    defaults = dict(
        n_teachers=20, aggregator=GNMax(sigma=20.0), max_queries=50, epsilon=None, random_state=0, classes=[0, 1, 2]
    )
    defaults.update(params)
    return PATEClassifier(DecisionTreeClassifier(max_depth=4), accountant=accountant, **defaults)


# ------------------------------------------------------------ the accountant

#: The default accountant splits delta between its Gaussian-DP filter and one Renyi filter.
FILTER_DELTA = 1e-5 / 2


def test_a_fit_is_charged_its_apriori_cost(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=10.0, delta=1e-5)
    clf = pate(accountant).fit(X, y, X_public=X_pub)
    # 50 GNMax(20) answers: sqrt(50 * 2 / 20^2)-GDP, converted exactly at the filter's delta.
    assert accountant.spent_epsilon == pytest.approx(gdp_epsilon(np.sqrt(50 * 2 / 400), FILTER_DELTA), rel=1e-12)
    assert accountant.spent_epsilon > clf.privacy_report_.epsilon  # delta is split among the filters
    assert accountant.remaining_epsilon == pytest.approx(10.0 - accountant.spent_epsilon)
    assert accountant.history()[0]["status"] == "settled" and accountant.n_fits == 1 and accountant.filters[0] == "gdp"


def test_confident_fit_reserves_the_worst_case_then_pays_for_what_it_answered(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=50.0, delta=1e-5)
    aggregator = ConfidentGNMax(threshold=18, sigma_threshold=4.0, sigma=8.0)
    clf = pate(accountant, aggregator=aggregator).fit(X, y, X_public=X_pub)
    n, answered = clf.n_queries_, clf.privacy_report_.n_answered
    assert 0 < answered < n
    # Inside the accountant's filter the answer step is charged where it ran ...
    charged = gdp_epsilon(np.sqrt(n / 4.0**2 + answered * 2 / 8.0**2), FILTER_DELTA)
    assert accountant.spent_epsilon == pytest.approx(charged, rel=1e-12)
    # ... but what the fit publishes on its own is the a-priori bound, every query answered.
    assert clf.privacy_report_.epsilon == pytest.approx(gdp_epsilon(np.sqrt(n / 16 + n * 2 / 64), 1e-5), rel=1e-12)


def test_fit_over_budget_is_refused_before_any_teacher_is_trained(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=0.5, delta=1e-5)
    # max_depth=-1 would make every teacher's fit raise: the budget error must come first.
    clf = PATEClassifier(
        DecisionTreeClassifier(max_depth=-1),
        n_teachers=20,
        aggregator=GNMax(sigma=1.0),
        epsilon=None,
        accountant=accountant,
        classes=[0, 1, 2],
    )
    with pytest.raises(BudgetExceededError, match="budget 0.5"):
        clf.fit(X, y, X_public=X_pub)
    assert accountant.n_fits == 0 and accountant.spent_epsilon == 0.0
    assert not hasattr(clf, "student_")


def test_non_private_fit_never_fits_a_budget(data):
    X, y, X_pub = data
    with pytest.raises(BudgetExceededError, match="inf"):
        pate(RDPAccountant(epsilon=1e6, delta=1e-5), aggregator=Plurality()).fit(X, y, X_public=X_pub)


def test_a_fit_that_fails_after_reading_private_rows_stays_charged(data):
    """Fail closed: whether and how a fit failed depends on the private rows, so it is charged in full."""
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=1e4, delta=1e-5)
    broken = PATEClassifier(
        DecisionTreeClassifier(max_depth=-1),
        n_teachers=20,
        aggregator=GNMax(sigma=20.0),
        max_queries=50,
        epsilon=None,
        accountant=accountant,
        classes=[0, 1, 2],
    )
    with pytest.raises(ValueError, match="max_depth"):
        broken.fit(X, y, X_public=X_pub)
    reserved = broken.planned_cost(len(X_pub))
    assert accountant.n_fits == 1 and accountant.history()[0]["status"] == "settled"
    assert accountant.spent_epsilon == pytest.approx(
        BudgetFilters(1e4, 1e-5).epsilon_of(BudgetFilters(1e4, 1e-5).charge(reserved), [True, True, True])
    )
    # Answers released, then the student fails: the charge stays.
    silent = ConfidentGNMax(threshold=20, sigma_threshold=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="answered none"):
        pate(accountant, aggregator=silent).fit(X, np.arange(len(y)) % 3, X_public=X_pub)
    assert accountant.n_fits == 2 and accountant.spent_epsilon > 0


def test_composition_is_tighter_than_adding_epsilons(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=100.0, delta=1e-5)
    for seed in range(3):
        pate(accountant, random_state=seed).fit(X, y, X_public=X_pub)
    singles = [entry["epsilon"] for entry in accountant.history()]
    assert accountant.spent_epsilon < sum(singles)
    assert accountant.spent_epsilon > max(singles)
    assert accountant.spent_epsilon == pytest.approx(gdp_epsilon(np.sqrt(3 * 50 * 2 / 400), FILTER_DELTA), rel=1e-12)


def test_sanitized_release_is_budgeted_in_advance(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=50.0, delta=1e-5)
    with pytest.raises(ValueError, match="sanitize_order"):
        pate(accountant, sanitize_order="auto").fit(X, y, X_public=X_pub)
    assert accountant.n_fits == 0
    report = pate(accountant, sanitize_order=20.0).fit(X, y, X_public=X_pub).privacy_report_
    assert report.sanitization.order == 20.0 and report.sanitized_epsilon > 0
    # The release is a mechanism on the private data: charged with the labels, in RDP (it is not Gaussian).
    assert accountant.filters == [f"rdp({accountant.orders[0]:g})"]
    expected = report.cost.rdp(accountant.orders)[0]
    assert accountant.spent_epsilon == pytest.approx(BudgetFilters(50.0, 1e-5).epsilons(np.array([0, expected, 0]))[1])
    without = pate(None).fit(X, y, X_public=X_pub).privacy_report_
    assert report.epsilon > without.epsilon and report.accounting == "rdp"


def test_clone_and_deepcopy_share_the_accountant(data):
    accountant = RDPAccountant(epsilon=5.0, delta=1e-5)
    clf = pate(accountant)
    assert clone(clf).accountant is accountant
    assert copy.deepcopy(clf).accountant is accountant


def test_grid_search_charges_every_fit(data):
    """3 candidates x 2 splits + the refit = 7 fits on the same private data."""
    X, y, X_pub = data
    X_all = np.vstack([X, X_pub])
    y_all = np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    accountant = RDPAccountant(epsilon=100.0, delta=1e-5)
    search = GridSearchCV(pate(accountant), {"aggregator__sigma": [10.0, 20.0, 40.0]}, cv=2)
    search.fit(X_all, y_all)
    assert accountant.n_fits == 7 and all(entry["status"] == "settled" for entry in accountant.history())
    mu_squared = 2 * sum(50 * 2 / sigma**2 for sigma in [10.0, 20.0, 40.0])
    mu_squared += 50 * 2 / search.best_params_["aggregator__sigma"] ** 2
    assert accountant.spent_epsilon == pytest.approx(gdp_epsilon(np.sqrt(mu_squared), FILTER_DELTA), rel=1e-12)
    cross_val_score(pate(accountant), X_all, y_all, cv=2)
    assert accountant.n_fits == 9


def test_budget_runs_out_inside_a_search(data):
    X, y, X_pub = data
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    one_fit = gdp_epsilon(np.sqrt(50 * 2 / 400), FILTER_DELTA)
    # Gaussian costs compose like sqrt(k): two fits cost ~1.4x one, so the second is refused.
    accountant = RDPAccountant(epsilon=1.2 * one_fit, delta=1e-5)
    search = GridSearchCV(pate(accountant), {"aggregator__sigma": [20.0, 20.0]}, cv=2, error_score="raise")
    with pytest.raises(BudgetExceededError):
        search.fit(X_all, y_all)
    assert accountant.n_fits == 1 and accountant.spent_epsilon == pytest.approx(one_fit)
    assert accountant.spent_epsilon <= accountant.epsilon


def test_accountant_copied_to_another_process_refuses_to_charge(data):
    X, y, X_pub = data
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    accountant = RDPAccountant(epsilon=100.0, delta=1e-5)
    search = GridSearchCV(pate(accountant), {"aggregator__sigma": [10.0, 20.0]}, cv=2, n_jobs=2, error_score="raise")
    with pytest.raises(RuntimeError, match="PrivacyLedger"):
        search.fit(X_all, y_all)
    assert accountant.n_fits == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epsilon=0.0, delta=1e-5), "epsilon"),
        (dict(epsilon=-1.0, delta=1e-5), "epsilon"),
        (dict(epsilon="1", delta=1e-5), "epsilon"),
        (dict(epsilon=np.inf, delta=1e-5), "epsilon"),
        (dict(epsilon=1.0, delta=1.0), "delta"),
        (dict(epsilon=1.0, delta=1e-5, orders=[0.5, 2]), "orders"),
    ],
)
def test_bad_budget(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RDPAccountant(**kwargs)


def test_numpy_numbers_are_budgets():
    assert RDPAccountant(epsilon=np.int64(3), delta=1e-5).epsilon == 3.0
    assert RDPAccountant(epsilon=np.float32(0.5), delta=1e-5).epsilon == 0.5


def test_charges_are_costs():
    accountant = RDPAccountant(epsilon=1.0, delta=1e-5, orders=[2.0, 4.0])
    with pytest.raises(TypeError, match="Cost"):
        accountant.reserve(np.zeros(2))


@pytest.mark.parametrize(
    "parts",
    [
        dict(mu_squared=-50.0),
        dict(mu_squared=np.nan),
        dict(pure=((-5.0, 1),)),
        dict(pure=((1.0, -10),)),
        dict(pure=((1.0, True),)),
        dict(pure=((np.nan, 1),)),
        dict(release=(-0.1, 3.0)),
        dict(release=(0.1, np.inf)),
    ],
)
def test_a_negative_or_nan_cost_is_refused_so_no_charge_refills_a_budget(parts):
    """Admitted, ``Cost(mu_squared=-50)`` let twenty fits of epsilon 0.9 in under a budget of 1 (the audit)."""
    with pytest.raises(ValueError, match="a cost's"):
        Cost(**parts)
    accountant = RDPAccountant(epsilon=1.0, delta=1e-5)
    accountant.settle(accountant.reserve(Cost(mu_squared=0.01)), Cost(mu_squared=0.01))
    assert accountant.spent_epsilon > 0
    assert Cost(mu_squared=np.inf, pure=((np.inf, 0),)).mu_squared == np.inf  # no privacy is a cost, not an error


def test_replace_one_cost_doubles_mu_and_pure_epsilons_of_an_add_remove_cost():
    """A replacement is a removal and an addition: sensitivity 2 D for a Gaussian part, group privacy for a pure one."""
    cost = Cost(mu_squared=0.25, pure=((0.5, 3),))
    assert replace_one_cost(cost, "replace-one") is cost
    assert replace_one_cost(cost, "add-remove") == Cost(mu_squared=1.0, pure=((1.0, 3),))
    with pytest.raises(ValueError, match="no replace-one conversion"):
        replace_one_cost(Cost(release=(0.1, 3.0)), "add-remove")
    with pytest.raises(ValueError, match="neighboring must be"):
        replace_one_cost(cost, "add-one")


@pytest.mark.parametrize("estimator", [CellCountClassifier, NoisyGDClassifier])
def test_an_add_remove_fit_is_charged_its_replace_one_cost(binary_split, estimator):
    """A budget is for replacing one row. Charged at their add-remove mu, eight CellCount fits of epsilon 0.3 went
    in under a budget of 1 whose releases are epsilon 1.43 under replace-one (the audit)."""
    X, y, X_public, _ = binary_split
    accountant = RDPAccountant(epsilon=4.0, delta=1e-5)
    model = estimator(epsilon=0.3, classes=[0, 1], neighboring="add-remove", accountant=accountant, random_state=0)
    model.fit(X, y, X_public=X_public)
    expected = RDPAccountant(epsilon=4.0, delta=1e-5)
    replaced = Cost(mu_squared=4.0 * gdp_mu(0.3, 1e-5) ** 2)
    expected.settle(expected.reserve(replaced), replaced)
    assert accountant.spent_epsilon == pytest.approx(expected.spent_epsilon, rel=1e-12)
    assert "charged for replace-one" in accountant.history()[0]["label"]
    assert model.privacy_spent_ == (0.3, 1e-5)  # the fit's own guarantee, for adding or removing one row


def test_a_settled_charge_is_final():
    accountant = RDPAccountant(epsilon=5.0, delta=1e-5)
    index = accountant.reserve(Cost(mu_squared=0.1), label="fit")
    accountant.settle(index, Cost(mu_squared=0.05))
    spent = accountant.spent_epsilon
    assert spent > 0
    with pytest.raises(ValueError, match="already settled"):
        accountant.cancel(index)  # would erase the charge of released answers
    with pytest.raises(ValueError, match="already settled"):
        accountant.settle(index, Cost())
    assert accountant.spent_epsilon == spent
    with pytest.raises(ValueError, match="more than it reserved"):
        accountant.settle(accountant.reserve(Cost(mu_squared=0.01)), Cost(mu_squared=0.02))
    with pytest.raises(IndexError):
        accountant.settle(7, Cost())


def test_pure_fits_compose_by_basic_composition_up_to_the_whole_budget():
    """A pure-DP fit of epsilon 1 was refused by a budget of 1 (its Renyi conversion alone cost 1.72 at budget 2):
    the pure filter admits pure fits while their epsilons sum to at most the budget, at no delta."""
    accountant = RDPAccountant(epsilon=1.0, delta=1e-5)
    for _ in range(4):
        accountant.reserve(Cost(pure=((0.125, 2),)))  # exact in binary: 4 x 2 x 0.125 = 1
    assert accountant.spent_epsilon == 1.0 and accountant.filters == ["pure"]
    with pytest.raises(BudgetExceededError):
        accountant.reserve(Cost(pure=((1e-9, 1),)))
    single = RDPAccountant(epsilon=1.0, delta=1e-5)
    single.reserve(Cost(pure=((1.0, 1),)))
    assert single.spent_epsilon == 1.0
    # The Renyi filter can beat the sum for many small parts: the best filter in force is reported.
    many = RDPAccountant(epsilon=1.0, delta=1e-5)
    many.reserve(Cost(pure=((0.01, 90),)))
    assert many.filters == [f"rdp({many.orders[0]:g})", "pure"] and many.spent_epsilon < 0.9
    # A Gaussian part (or a sanitized release) is not pure: it closes the pure filter, as a pure part closes GDP's.
    mixed = RDPAccountant(epsilon=4.0, delta=1e-5)
    mixed.reserve(Cost(pure=((0.5, 1),)))
    mixed.reserve(Cost(mu_squared=0.01))
    assert "pure" not in mixed.filters
    assert BudgetFilters(4.0, 1e-5).charge(Cost(mu_squared=0.01, pure=((0.5, 1),)))[-1] == np.inf


def test_an_accountant_pickled_before_the_pure_filter_reads_what_it_spent():
    """Its vectors are one filter short: read over this version's filters, its Renyi entry was taken for the pure
    one (spent 1.36 for 3.24), silently."""
    accountant = RDPAccountant(epsilon=5.0, delta=1e-5)
    for cost in (Cost(mu_squared=0.05), Cost(pure=((0.2, 2),)), Cost(mu_squared=0.3)):
        accountant.reserve(cost)
    function, (uid, state) = accountant.__reduce__()
    old_budget = copy.copy(state["_budget"])
    old_budget.limits = old_budget.limits[:-1]
    earlier = {  # what the earlier version pickled
        **state,
        "_budget": old_budget,
        "_alive": state["_alive"][:-1],
        "_charges": [charge[:-1] for charge in state["_charges"]],
    }
    restored = function("not live here", earlier)
    assert restored.spent_epsilon == accountant.spent_epsilon and restored.filters == accountant.filters
    assert restored.remaining_epsilon == accountant.remaining_epsilon


def test_a_pure_pate_fit_runs_under_a_budget_of_its_own_epsilon(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=1.0, delta=1e-5)
    clf = pate(accountant, aggregator="lnmax", epsilon=1.0, max_queries=None).fit(X, y, X_public=X_pub)
    assert clf.privacy_spent_[0] <= 1.0 and accountant.spent_epsilon <= 1.0 and accountant.n_fits == 1


def test_filters_are_fixed_in_advance_and_drop_out_as_they_fill():
    """Orders cannot be chosen after the charges: the filters are set before any fit, and a fit is
    admitted only by a filter that admitted every earlier one (Feldman & Zrnic 2021, delta split)."""
    accountant = RDPAccountant(epsilon=2.0, delta=1e-5, orders=[8.0, 40.0])
    assert accountant.filters == ["gdp", "rdp(8)", "rdp(40)", "pure"]
    # Budgets at delta / 3 (the pure filter takes no delta): 2 + log(8/7) + (log(1e-5/3) + log 8) / 7 = 0.629 and
    # 1.797 at order 40. A pure-DP charge (0.5 at both orders) cannot enter the Gaussian-DP filter; both orders and
    # the pure filter (0.5 <= 2) hold it.
    accountant.settle(accountant.reserve(Cost(pure=((0.5, 1),))), Cost(pure=((0.5, 1),)))
    assert accountant.filters == ["rdp(8)", "rdp(40)", "pure"]
    # mu^2 = 0.05 adds 0.2 at order 8 (0.7 > 0.629) and 1.0 at order 40 (1.5 <= 1.797): order 8 drops out.
    accountant.reserve(Cost(mu_squared=0.05))
    assert accountant.filters == ["rdp(40)"]
    np.testing.assert_array_equal(accountant.orders, [8.0, 40.0])  # nothing re-chosen
    with pytest.raises(BudgetExceededError):
        accountant.reserve(Cost(mu_squared=10.0))
    assert accountant.filters == ["rdp(40)"] and accountant.n_fits == 2


def test_default_order_depends_on_the_budget_only():
    a, b = RDPAccountant(epsilon=1.0, delta=1e-5), RDPAccountant(epsilon=1.0, delta=1e-5)
    b.reserve(Cost(mu_squared=0.01))
    np.testing.assert_array_equal(a.orders, b.orders)
    # rho-zCDP with rho + 2 sqrt(rho log(1/delta)) = 1 converts best at 1 + sqrt(log(1/delta) / rho).
    rho = (np.sqrt(np.log(1e5) + 1.0) - np.sqrt(np.log(1e5))) ** 2
    assert a.orders[0] == pytest.approx(1 + np.sqrt(np.log(1e5) / rho))


# ----------------------------------------------------- noise from a budget


@pytest.mark.parametrize("epsilon, n_queries", [(0.5, 10), (2.0, 1000), (8.0, 300)])
@pytest.mark.parametrize(
    "make, noise",
    [
        (lambda e, n: GNMax.for_budget(e, 1e-5, n), "sigma"),
        (lambda e, n: LNMax.for_budget(e, 1e-5, n), "scale"),
        (lambda e, n: ConfidentGNMax.for_budget(e, 1e-5, n, threshold=150), "sigma"),
    ],
)
def test_derived_noise_meets_the_budget_and_is_not_needlessly_large(make, noise, epsilon, n_queries):
    aggregator = make(epsilon, n_queries)
    # Through the public entry point, on real histograms, every query answered.
    votes = np.tile([[150, 60, 40]], (n_queries, 1))
    answered = np.ones(n_queries, dtype=bool)
    spent = analyze(votes, aggregator, 1e-5, answered=answered).epsilon
    assert spent <= epsilon
    smaller = clone(aggregator).set_params(**{noise: getattr(aggregator, noise) * 0.99})
    if isinstance(aggregator, ConfidentGNMax):
        smaller.set_params(sigma_threshold=aggregator.sigma_threshold * 0.99)
    assert analyze(votes, smaller, 1e-5, answered=answered).epsilon > epsilon


@pytest.mark.parametrize("epsilon, n, expected", [(1.0, 250, 83.4), (2.0, 1000, 89.2), (0.5, 100, 99.4)])
def test_gnmax_for_budget_is_the_exact_gaussian_dp_noise(epsilon, n, expected):
    """The reference values of shared/design/publishable-privacy.md: within 1% above, never below."""
    sigma = GNMax.for_budget(epsilon, 1e-5, n).sigma
    assert expected * (1 - 1e-3) <= sigma <= expected * 1.01
    assert gdp_delta(epsilon, np.sqrt(2 * n) / sigma) <= 1e-5  # never below: the budget holds exactly
    assert gdp_delta(epsilon, np.sqrt(2 * n) / (sigma * (1 - 1e-6))) > 1e-5  # and no looser than needed


def test_for_budget_includes_the_sanitized_release(data):
    X, y, X_pub = data
    aggregator = GNMax.for_budget(1.0, 1e-5, 50, sanitize_order=20.0)
    assert aggregator.sigma > GNMax.for_budget(1.0, 1e-5, 50).sigma
    clf = pate(None, aggregator=aggregator, sanitize_order=20.0).fit(X, y, X_public=X_pub)
    assert clf.privacy_report_.sanitized_epsilon is not None
    assert 0.99 <= clf.privacy_report_.epsilon <= 1.0  # was 1.20: the release came on top of the target
    with pytest.raises(ValueError, match="release"):
        GNMax.for_budget(0.01, 1e-5, 50, sanitize_order=20.0)


@pytest.mark.parametrize("n_teachers, n_classes", [(250, 2), (250, 10), (40, 3)])
def test_gnmax_for_ensemble_is_relative_noise_until_max_answers(n_teachers, n_classes):
    # By hand: 250 / 1.75; 250 / (1.75 sqrt 5) = 250 / 3.913; 40 / (1.75 sqrt 1.5) = 40 / 2.143.
    relative = {(250, 2): 142.857, (250, 10): 63.888, (40, 3): 18.663}[n_teachers, n_classes]
    # A small budget: fewer than max_answers answers at the relative noise, so the noise stays there.
    small = GNMax.for_ensemble(0.5, 1e-5, n_teachers, n_classes, max_answers=10**6)
    assert small.sigma == pytest.approx(relative, rel=1e-4)
    # A large one: the noise drops until exactly max_answers answers spend it.
    large = GNMax.for_ensemble(40.0, 1e-5, n_teachers, n_classes, max_answers=300)
    assert large.sigma == GNMax.for_budget(40.0, 1e-5, 300).sigma < relative
    assert largest_count(large.query_cost()[1], 40.0, 1e-5, limit=10**6) == 300
    # The default cap is 2,000 answers; the noise never grows with the budget, and more classes need less noise.
    assert GNMax.for_ensemble(40.0, 1e-5, n_teachers, n_classes).sigma == GNMax.for_budget(40.0, 1e-5, 2000).sigma
    sigmas = [GNMax.for_ensemble(eps, 1e-5, n_teachers, n_classes).sigma for eps in (0.5, 1, 2, 4, 8, 16)]
    assert np.all(np.diff(sigmas) <= 0)
    assert GNMax.for_ensemble(0.5, 1e-5, n_teachers, n_classes + 1).sigma < small.sigma


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: GNMax.for_ensemble(1.0, 1e-5, 250, 1), "n_classes must be an integer >= 2"),
        (lambda: GNMax.for_ensemble(1.0, 1e-5, 250, True), "n_classes"),
        (lambda: GNMax.for_ensemble(1.0, 1e-5, 250, 2.0), "n_classes"),
        (lambda: GNMax.for_ensemble(1.0, 1e-5, 0, 2), "n_teachers"),
        (lambda: GNMax.for_ensemble(1.0, 1e-5, 250, 2, max_answers=0), "max_answers"),
        (lambda: GNMax.for_ensemble(0.0, 1e-5, 250, 2), "epsilon"),
        (lambda: GNMax.for_budget(0.0, 1e-5, 10), "epsilon"),
        (lambda: GNMax.for_budget(np.inf, 1e-5, 10), "epsilon"),
        (lambda: GNMax.for_budget(1.0, 2.0, 10), "delta"),
        (lambda: LNMax.for_budget(1.0, 1e-5, 0), "n_queries"),
        (lambda: ConfidentGNMax.for_budget(1.0, 1e-5, 10, threshold=-5), "threshold"),
        (lambda: ConfidentGNMax.for_budget(1.0, 1e-5, 10, threshold=5, sigma_ratio=0), "sigma_ratio"),
    ],
)
def test_bad_budget_requests(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------- the publishable student


def test_exported_student_holds_no_teacher_private_row_or_vote(data):
    X, y, X_pub = data
    # Private rows carry values that occur nowhere in the public rows.
    X_private = X + 1e-3 * np.pi
    # Nearest-neighbour teachers store their private rows verbatim.
    clf = PATEClassifier(
        KNeighborsClassifier(),
        n_teachers=20,
        aggregator=GNMax(sigma=2.0),
        epsilon=None,
        classes=[0, 1, 2],
        student=LogisticRegression(),
        random_state=0,
    )
    clf.fit(X_private, y, X_public=X_pub)
    private_values = [value.tobytes() for value in np.unique(X_private)]

    def leaks(blob):
        return {
            "teacher": b"KNeighborsClassifier" in blob,
            "estimator": b"PATEClassifier" in blob,
            "per-query costs": b"rdp_per_query" in blob,
            "private row": any(value in blob for value in private_values),
        }

    # The test can fail: the fitted PATEClassifier itself leaks all of it.
    assert all(leaks(pickle.dumps(clf)).values())
    student = clf.export_student()
    assert not any(leaks(pickle.dumps(student)).values())
    np.testing.assert_array_equal(student.predict(X_pub), clf.predict(X_pub))
    # An independent copy: refitting the estimator does not change it.
    before = student.student.coef_.copy()
    clf.set_params(random_state=1).fit(X_private, y, X_public=X_pub)
    np.testing.assert_array_equal(student.student.coef_, before)


def test_export_before_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        pate(None).export_student()


# ------------------------------------------------ copies, deltas and extreme budgets


def test_a_pickle_loaded_in_the_same_process_is_the_accountant_itself():
    """The review's case: a pickled copy admitted two 0.9 fits under one 1.0 budget."""
    accountant = RDPAccountant(epsilon=1.0, delta=1e-5)
    fit = Cost(mu_squared=float(gdp_mu(0.9, 1e-5 / 2)) ** 2)  # epsilon 0.9 at the filter's delta
    copy_ = pickle.loads(pickle.dumps(accountant))
    assert copy_ is accountant and copy.copy(accountant) is not None
    accountant.reserve(fit)
    with pytest.raises(BudgetExceededError, match="exceed the budget"):
        copy_.reserve(fit)
    assert accountant.n_fits == 1


def test_a_copy_in_another_process_is_read_only_and_says_what_keeps_a_budget_across_processes(tmp_path):
    accountant = RDPAccountant(epsilon=1.0, delta=1e-5)
    accountant.reserve(Cost(mu_squared=0.01), label="yesterday")
    path = tmp_path / "accountant.pkl"
    path.write_bytes(pickle.dumps(accountant))
    script = (
        "import pickle, sys\nfrom skpate.privacy import Cost\n"
        f"a = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "print(a.n_fits, round(a.spent_epsilon, 6))\n"
        "try:\n    a.reserve(Cost(mu_squared=0.01))\nexcept RuntimeError as e:\n    print('refused:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == f"1 {round(accountant.spent_epsilon, 6)}"  # what was spent is readable
    assert "refused:" in out and "PrivacyLedger" in out


def test_a_delta_mismatch_is_named_in_the_refusal(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=1.0, delta=1e-7)
    gd = NoisyGDClassifier(epsilon=0.9, delta=1e-5, classes=[0, 1, 2], accountant=accountant)
    with pytest.raises(BudgetExceededError, match=r"calibrated at delta=1e-05, but the budget is at delta=1e-07"):
        gd.fit(X, y, X_public=X_pub)
    assert accountant.n_fits == 0


@pytest.mark.parametrize("epsilon", [1e3, 1e30, 1e300])
def test_an_extreme_budget_is_a_budget(epsilon):
    accountant = RDPAccountant(epsilon=epsilon, delta=1e-5)
    accountant.reserve(Cost(mu_squared=float(gdp_mu(1.0, 1e-5)) ** 2), label="one fit of epsilon 1")
    spent = accountant.spent_epsilon
    assert np.isfinite(spent) and 1.0 < spent < 1.5  # epsilon 1 at delta 1e-5, converted at the filters' delta
    assert accountant.remaining_epsilon == pytest.approx(epsilon - spent)
    with pytest.raises(BudgetExceededError):
        accountant.reserve(Cost(mu_squared=np.inf))  # a non-private fit fits no finite budget


def _exact_gdp_delta(epsilon, mu):
    """delta(epsilon; mu) of mu-GDP (Dong, Roth, Su, Cor. 2.13) in 80 digits."""
    with mp.workdps(80):
        e, m = mp.mpf(float(epsilon)), mp.mpf(float(mu))
        return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


#: Budgets where delta is far smaller than the first term of Cor. 2.13, so that the two terms nearly cancel in
#: floating point: before the rounding bound, 1e-6 at delta 1e-100 met its delta only to 3e-5 (relative).
ILL_CONDITIONED = [(1e-6, 1e-100), (1e-7, 1e-5), (1e-10, 1e-5), (1e-6, 1e-300), (3e-7, 3e-134), (0.01, 1e-10)]


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-5), (1.0, 1e-5), (8.0, 1e-9), *ILL_CONDITIONED])
def test_gdp_mu_meets_delta_exactly_and_converts_back_within_the_budget(epsilon, delta):
    mu = float(gdp_mu(epsilon, delta))
    assert _exact_gdp_delta(epsilon, mu) <= delta  # in high precision: never above delta
    assert gdp_delta(epsilon, mu) <= delta * (1 + 1e-12) and gdp_delta(epsilon, mu) >= _exact_gdp_delta(epsilon, mu)
    # What a report computes from the cost: the budget back, to the last bits (it refused 1e-7 before).
    assert gdp_epsilon(mu, delta) <= epsilon * (1 + 1e-13)
    if delta >= 1e-10:  # and tight where the float formula can tell: the budget is not thrown away
        assert _exact_gdp_delta(epsilon, mu * (1 + 1e-9)) > delta


def test_an_estimator_at_a_tiny_epsilon_reports_its_budget(binary_split):
    X, y, X_public, _ = binary_split
    model = NoisyGDClassifier(epsilon=1e-7, classes=[0, 1], random_state=0).fit(X, y, X_public=X_public)
    assert model.privacy_spent_[0] <= 1e-7 * (1 + 1e-9)


def test_gdp_mu_of_a_huge_epsilon_is_finite_and_valid():
    mu = gdp_mu(np.array([1e3, 1e6, 1e30, 1e300]), 1e-5)
    assert np.all(np.isfinite(mu)) and np.all(np.diff(mu) > 0)
    # delta(epsilon; mu) (Dong, Roth, Su, Cor. 2.13) at the returned mu, in high precision where floating point
    # cancels: at most delta, and nearly tight (the budget is not thrown away).
    with mp.workdps(400):
        for epsilon, m in zip([1e3, 1e6, 1e30, 1e300], mu):
            e, m = mp.mpf(epsilon), mp.mpf(float(m))
            delta = mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)
            assert delta <= 1e-5
            assert epsilon > 1e6 or delta > 0.99e-5  # tight where floating point can tell
