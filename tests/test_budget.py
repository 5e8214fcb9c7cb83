"""Budgets across fits (RDPAccountant), noise derived from a budget, the publishable student."""

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from skpate import ConfidentGNMax, GNMax, LNMax, PATEClassifier, Plurality
from skpate.privacy import DEFAULT_ORDERS, BudgetExceededError, RDPAccountant, analyze, rdp_to_dp


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=1500, n_features=8, n_informative=5, n_classes=3, random_state=0)
    return X[:1200], y[:1200], X[1200:]


def pate(accountant, **params):
    defaults = dict(n_teachers=20, aggregator=GNMax(sigma=20.0), max_queries=50, random_state=0, sanitize_order=None)
    defaults.update(params)
    return PATEClassifier(DecisionTreeClassifier(max_depth=4), accountant=accountant, **defaults)


# ------------------------------------------------------------ the accountant


def test_a_fit_is_charged_its_data_independent_curve(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=10.0, delta=1e-5)
    clf = pate(accountant).fit(X, y, X_public=X_pub)
    np.testing.assert_allclose(accountant.rdp, clf.privacy_report_.data_independent_rdp)
    assert accountant.spent_epsilon == pytest.approx(clf.privacy_report_.data_independent_epsilon)
    assert accountant.remaining_epsilon == pytest.approx(10.0 - accountant.spent_epsilon)
    assert accountant.ledger[0]["settled"] and accountant.n_fits == 1


def test_confident_fit_reserves_the_worst_case_then_pays_for_what_it_answered(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=50.0, delta=1e-5)
    aggregator = ConfidentGNMax(threshold=18, sigma_threshold=4.0, sigma=8.0)
    clf = pate(accountant, aggregator=aggregator).fit(X, y, X_public=X_pub)
    assert 0 < clf.n_answered_ < clf.n_queries_
    worst = aggregator.worst_case_rdp(clf.n_queries_, 20)
    assert np.all(accountant.rdp <= worst) and np.any(accountant.rdp < worst)
    np.testing.assert_allclose(accountant.rdp, clf.privacy_report_.data_independent_rdp)


def test_fit_over_budget_is_refused_before_any_teacher_is_trained(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=0.5, delta=1e-5)
    # max_depth=-1 would make every teacher's fit raise: the budget error must come first.
    clf = PATEClassifier(DecisionTreeClassifier(max_depth=-1), n_teachers=20, aggregator=GNMax(sigma=1.0),
                         accountant=accountant, sanitize_order=None)  # fmt: skip
    with pytest.raises(BudgetExceededError, match="budget 0.5"):
        clf.fit(X, y, X_public=X_pub)
    assert accountant.n_fits == 0 and accountant.spent_epsilon == 0.0
    assert not hasattr(clf, "student_")


def test_non_private_fit_never_fits_a_budget(data):
    X, y, X_pub = data
    with pytest.raises(BudgetExceededError, match="inf"):
        pate(RDPAccountant(epsilon=1e6, delta=1e-5), aggregator=Plurality()).fit(X, y, X_public=X_pub)


def test_fit_failing_before_any_vote_is_not_charged_but_one_failing_after_is(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=1e4, delta=1e-5)
    broken = PATEClassifier(DecisionTreeClassifier(max_depth=-1), n_teachers=20, aggregator=GNMax(sigma=20.0),
                            max_queries=50, accountant=accountant, sanitize_order=None)  # fmt: skip
    with pytest.raises(Exception):
        broken.fit(X, y, X_public=X_pub)
    assert accountant.n_fits == 1 and accountant.spent_epsilon == 0.0
    # Answers released, then the student fails: the worst case stays charged.
    silent = ConfidentGNMax(threshold=20, sigma_threshold=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="answered none"):
        pate(accountant, aggregator=silent).fit(X, np.arange(len(y)) % 2, X_public=X_pub)
    assert accountant.n_fits == 2 and accountant.spent_epsilon > 0


def test_composition_in_rdp_is_tighter_than_adding_epsilons(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=100.0, delta=1e-5)
    for seed in range(3):
        pate(accountant, random_state=seed).fit(X, y, X_public=X_pub)
    singles = [entry["epsilon"] for entry in accountant.ledger]
    assert accountant.spent_epsilon < sum(singles)
    assert accountant.spent_epsilon > max(singles)
    np.testing.assert_allclose(accountant.rdp, 3 * GNMax(20.0).worst_case_rdp(50, 20))


def test_sanitized_release_is_budgeted_in_advance(data):
    X, y, X_pub = data
    accountant = RDPAccountant(epsilon=50.0, delta=1e-5)
    with pytest.raises(ValueError, match="sanitize_order"):
        pate(accountant, sanitize_order="auto").fit(X, y, X_public=X_pub)
    assert accountant.n_fits == 0
    report = pate(accountant, sanitize_order=20.0).fit(X, y, X_public=X_pub).privacy_report_
    assert report.sanitization.order == 20.0 and report.sanitized_epsilon > 0
    # The release is a mechanism on the private data: charged with the labels.
    np.testing.assert_allclose(accountant.rdp, report.data_independent_rdp)
    without = pate(None).fit(X, y, X_public=X_pub).privacy_report_
    assert np.all(report.data_independent_rdp > without.data_independent_rdp)
    assert report.data_independent_epsilon > without.data_independent_epsilon


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
    assert accountant.n_fits == 7 and all(entry["settled"] for entry in accountant.ledger)
    expected = sum(GNMax(sigma).worst_case_rdp(50, 20) for sigma in [10.0, 20.0, 40.0]) * 2
    expected += GNMax(search.best_params_["aggregator__sigma"]).worst_case_rdp(50, 20)
    np.testing.assert_allclose(accountant.rdp, expected)
    cross_val_score(pate(accountant), X_all, y_all, cv=2)
    assert accountant.n_fits == 9


def test_budget_runs_out_inside_a_search(data):
    X, y, X_pub = data
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    one_fit = rdp_to_dp(DEFAULT_ORDERS, GNMax(20.0).worst_case_rdp(50, 20), 1e-5)[0]
    # Gaussian costs compose like sqrt(k): two fits cost ~1.4x one, so the second is refused.
    accountant = RDPAccountant(epsilon=1.2 * one_fit, delta=1e-5)
    search = GridSearchCV(pate(accountant), {"aggregator__sigma": [20.0, 20.0]}, cv=2, error_score="raise")
    with pytest.raises(BudgetExceededError):
        search.fit(X_all, y_all)
    assert accountant.n_fits == 1 and one_fit <= accountant.spent_epsilon <= accountant.epsilon


def test_accountant_copied_to_another_process_refuses_to_charge(data):
    X, y, X_pub = data
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    accountant = RDPAccountant(epsilon=100.0, delta=1e-5)
    search = GridSearchCV(pate(accountant), {"aggregator__sigma": [10.0, 20.0]}, cv=2, n_jobs=2, error_score="raise")
    with pytest.raises(RuntimeError, match="n_jobs=1"):
        search.fit(X_all, y_all)
    assert accountant.n_fits == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epsilon=0.0, delta=1e-5), "epsilon"),
        (dict(epsilon=-1.0, delta=1e-5), "epsilon"),
        (dict(epsilon="1", delta=1e-5), "epsilon"),
        (dict(epsilon=1.0, delta=1.0), "delta"),
        (dict(epsilon=1.0, delta=1e-5, orders=[0.5, 2]), "orders"),
    ],
)
def test_bad_budget(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RDPAccountant(**kwargs)


def test_orders_must_match_the_accountant():
    accountant = RDPAccountant(epsilon=1.0, delta=1e-5, orders=[2.0, 4.0])
    with pytest.raises(ValueError, match="orders"):
        accountant.reserve(np.zeros(3))


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
    spent = analyze(votes, aggregator, 1e-5, answered=answered).data_independent_epsilon
    assert spent <= epsilon
    smaller = clone(aggregator).set_params(**{noise: getattr(aggregator, noise) * 0.99})
    if isinstance(aggregator, ConfidentGNMax):
        smaller.set_params(sigma_threshold=aggregator.sigma_threshold * 0.99)
    assert analyze(votes, smaller, 1e-5, answered=answered).data_independent_epsilon > epsilon


def test_gnmax_for_budget_matches_the_closed_form_optimum():
    """eps(sigma) = min_lam n lam / sigma^2 + log(1/delta) / (lam - 1); over a fine order grid the
    optimum lam = 1 + sigma sqrt(log(1/delta) / n) gives eps = n/sigma^2 + 2 sqrt(n log(1/delta)) / sigma."""
    n, delta, epsilon = 400, 1e-6, 1.5
    orders = np.linspace(1.01, 400, 200_000)
    sigma = GNMax.for_budget(epsilon, delta, n, orders=orders).sigma
    c = np.sqrt(n * np.log(1 / delta))
    closed = (c + np.sqrt(c**2 + n * epsilon)) / epsilon  # root of eps sigma^2 - 2 c sigma - n = 0
    assert sigma == pytest.approx(closed, rel=1e-4)


@pytest.mark.parametrize(
    "call, match",
    [
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
    clf = PATEClassifier(KNeighborsClassifier(), n_teachers=20, aggregator=GNMax(sigma=2.0),
                         student=LogisticRegression(), random_state=0).fit(X_private, y, X_public=X_pub)  # fmt: skip
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
    before = student.coef_.copy()
    clf.set_params(random_state=1).fit(X_private, y, X_public=X_pub)
    np.testing.assert_array_equal(student.coef_, before)


def test_export_before_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        pate(None).export_student()
