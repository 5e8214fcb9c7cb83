"""skpate.plotting: Display objects hold what they plot; numbers match the accounting."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV
from sklearn.tree import DecisionTreeClassifier

from skpate import ConfidentGNMax, GNMax, PATEClassifier, analyze
from skpate.privacy import gdp_epsilon

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
from skpate import plotting  # noqa: E402


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=1500, n_features=8, n_informative=5, n_classes=3, random_state=0)
    return X[:1200], y[:1200], X[1200:], y[1200:]


def pate(**params):
    defaults = dict(n_teachers=20, aggregator=GNMax(sigma=2.0), max_queries=120, random_state=0, classes=[0, 1, 2])
    return PATEClassifier(DecisionTreeClassifier(max_depth=4), **{**defaults, **params})


def test_vote_gap_histogram(data):
    X, y, X_pub, _ = data
    votes = np.array([[20, 0, 0], [12, 8, 0], [10, 5, 5], [7, 7, 6]])
    display = plotting.VoteGapDisplay.from_votes(votes, bins=4)
    np.testing.assert_array_equal(display.gaps, [20, 4, 5, 0])
    assert sum(bar.get_height() for bar in display.bars_) == 4
    assert "private" in display.ax_.get_title()
    clf = pate().fit(X, y, X_public=X_pub)
    from_teachers = plotting.VoteGapDisplay.from_estimator(clf, X_pub[:50])
    assert from_teachers.gaps.size == 50 and from_teachers.n_teachers == 20


def test_cumulative_epsilon_ends_at_the_reported_epsilons(data):
    X, y, X_pub, _ = data
    clf = pate(aggregator=ConfidentGNMax(threshold=15, sigma_threshold=3.0, sigma=2.0)).fit(X, y, X_public=X_pub)
    display = plotting.CumulativeEpsilonDisplay.from_estimator(clf)
    report = clf.privacy_report_
    # The curves end where the report does: publishable first (a priori), data-dependent next.
    assert display.publishable_epsilon[-1] == pytest.approx(report.epsilon, rel=1e-12)
    assert display.data_dependent_epsilon[-1] == pytest.approx(report.data_dependent_epsilon, rel=1e-12)
    assert np.all(np.diff(display.publishable_epsilon) > 0)
    assert np.all(np.diff(display.data_dependent_epsilon) >= -1e-12)
    assert len(display.lines_) == 2 and display.lines_[0].get_xdata().size == clf.n_queries_
    assert "publishable" in display.lines_[0].get_label()
    publishable_only = plotting.CumulativeEpsilonDisplay.from_estimator(clf, data_dependent=False)
    assert [line.get_label() for line in publishable_only.lines_] == [display.lines_[0].get_label()]
    assert "private" not in publishable_only.ax_.get_legend().get_texts()[0].get_text()
    assert len(publishable_only.ax_.get_lines()) == 1
    votes = np.tile([[18, 1, 1]], (30, 1))
    from_votes = plotting.CumulativeEpsilonDisplay.from_votes(votes, GNMax(4.0), 1e-5)
    assert from_votes.publishable_epsilon[-1] == pytest.approx(analyze(votes, GNMax(4.0), 1e-5).epsilon)
    # With a sanitized release its cost is in every point, and the last one is the report's.
    released = analyze(votes, GNMax(4.0), 1e-5, sanitize_order=10.0, random_state=0)
    with_release = plotting.CumulativeEpsilonDisplay.from_report(released)
    assert with_release.publishable_epsilon[-1] == pytest.approx(released.epsilon, rel=1e-12)
    assert np.all(with_release.publishable_epsilon > from_votes.publishable_epsilon)


def test_privacy_utility_from_a_grid_search(data):
    X, y, X_pub, _ = data
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    search = GridSearchCV(pate(sanitize_order=None), {"aggregator__sigma": [1.0, 4.0, 16.0]}, cv=2).fit(X_all, y_all)
    display = plotting.PrivacyUtilityDisplay.from_cv_results(search)
    expected = [gdp_epsilon(np.sqrt(120 * 2) / s, 1e-5) for s in [1.0, 4.0, 16.0]]  # 120 answers, a priori
    np.testing.assert_allclose(display.epsilons, expected)
    np.testing.assert_allclose(display.scores, search.cv_results_["mean_test_score"])
    assert display.labels == ["sigma=1", "sigma=4", "sigma=16"]
    assert np.all(np.diff(display.line_.get_xdata()) > 0)
    unbounded = GridSearchCV(pate(max_queries=None), {"aggregator__sigma": [1.0]}, cv=2).fit(X_all, y_all)
    with pytest.raises(ValueError, match="max_queries"):
        plotting.PrivacyUtilityDisplay.from_cv_results(unbounded)


def test_privacy_utility_at_another_delta_converts_the_fitted_cost(data):
    # A budget of epsilon 1 at delta 1e-5 buys a number of queries; shown at delta 1e-7 the same queries cost
    # more than 1 (re-planning at 1e-7, as before, showed the budget again: noise and queries the fits never had).
    X, y, X_pub, _ = data
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    grid = {"aggregator__sigma": [20.0, 40.0]}
    search = GridSearchCV(pate(max_queries=None, epsilon=1.0), grid, cv=2, refit=False).fit(X_all, y_all)
    at_own_delta = plotting.PrivacyUtilityDisplay.from_cv_results(search)
    assert np.all((at_own_delta.epsilons <= 1.0) & (at_own_delta.epsilons > 0.95))  # whole queries: at most the budget
    display = plotting.PrivacyUtilityDisplay.from_cv_results(search, delta=1e-7)
    for sigma, epsilon in zip(grid["aggregator__sigma"], display.epsilons):
        fitted = pate(max_queries=None, epsilon=1.0, aggregator=GNMax(sigma=sigma)).fit(X, y, X_public=X_pub)
        assert fitted.n_queries_ < len(X_pub)  # the budget, not the public pool, bounds the queries
        assert epsilon == pytest.approx(gdp_epsilon(np.sqrt(2 * fitted.n_queries_) / sigma, 1e-7), rel=1e-9)
        assert epsilon > 1.0
    with pytest.raises(ValueError, match="delta"):
        plotting.PrivacyUtilityDisplay.from_cv_results(search, delta=2.0)


def test_privacy_utility_labels_non_numeric_grid_values(data):
    X, y, X_pub, _ = data
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    grid = {"aggregator": [GNMax(sigma=4.0), ConfidentGNMax(threshold=15, sigma_threshold=3.0, sigma=2.0)]}
    search = GridSearchCV(pate(), grid, cv=2).fit(X_all, y_all)  # was: TypeError from f"{v:g}"
    display = plotting.PrivacyUtilityDisplay.from_cv_results(search)
    assert display.labels[0].startswith("aggregator=GNMax(") and "ConfidentGNMax" in display.labels[1]
    assert display.epsilons[1] == pytest.approx(pate(aggregator=grid["aggregator"][1]).publishable_epsilon(10**6))


def test_label_accuracy_against_teachers(data):
    X, y, X_pub, y_pub = data
    display = plotting.TeacherCountDisplay.from_estimator(pate(), X, y, X_pub, y_pub, n_teachers=(5, 20))
    np.testing.assert_array_equal(display.n_teachers, [5, 20])
    assert np.all((display.label_accuracy > 0.4) & (display.label_accuracy <= 1))
    np.testing.assert_array_equal(display.answered, [120, 120])
    # Two fits on the same private data: each publishes its a-priori cost, and the figure costs both.
    for count, epsilon in zip((5, 20), display.epsilons):
        fitted = pate(n_teachers=count).fit(X, y, X_public=X_pub)
        assert epsilon == fitted.privacy_spent_[0] == pytest.approx(gdp_epsilon(np.sqrt(2 * 120) / 2.0, 1e-5))
    np.testing.assert_allclose(display.line_.get_ydata(), display.label_accuracy)


def test_displays_draw_on_a_given_axes():
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    display = plotting.VoteGapDisplay(np.array([1, 2, 3]), 10).plot(ax=ax)
    assert display.ax_ is ax
    plt.close("all")
