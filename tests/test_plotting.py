"""skpate.plotting: Display objects hold what they plot; numbers match the accounting."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.tree import DecisionTreeClassifier

from skpate import ConfidentGNMax, GNMax, PATEClassifier, analyze
from skpate.privacy import gdp_epsilon

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
from skpate import plotting  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    """Every display opens a figure: close them after each test (matplotlib warns past 20 open figures)."""
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


def pate(**params):
    """120 queries to 20 teachers at GNMax(sigma=2), no budget (``epsilon=None``: the papers' protocol)."""
    defaults = dict(
        n_teachers=20, aggregator=GNMax(sigma=2.0), max_queries=120, epsilon=None, random_state=0, classes=[0, 1, 2]
    )
    return PATEClassifier(DecisionTreeClassifier(max_depth=4), **{**defaults, **params})


def test_vote_gap_histogram(three_class_split):
    X, y, X_pub, _ = three_class_split
    votes = np.array([[20, 0, 0], [12, 8, 0], [10, 5, 5], [7, 7, 6]])
    display = plotting.VoteGapDisplay.from_votes(votes, bins=4)
    np.testing.assert_array_equal(display.gaps, [20, 4, 5, 0])
    assert sum(bar.get_height() for bar in display.bars_) == 4
    assert "private" in display.ax_.get_title()
    clf = pate().fit(X, y, X_public=X_pub)
    from_teachers = plotting.VoteGapDisplay.from_estimator(clf, X_pub[:50])
    assert from_teachers.gaps.size == 50 and from_teachers.n_teachers == 20
    predictions = np.stack([teacher.predict(X_pub[:50]) for teacher in clf.teachers_])
    top_two = np.sort(np.stack([(predictions == c).sum(axis=0) for c in clf.classes_], axis=1), axis=1)[:, -2:]
    np.testing.assert_array_equal(from_teachers.gaps, top_two[:, 1] - top_two[:, 0])
    heights, _ = np.histogram(from_teachers.gaps, bins=25, range=(0, 20))
    np.testing.assert_array_equal([bar.get_height() for bar in from_teachers.bars_], heights)


def test_cumulative_epsilon_ends_at_the_reported_epsilons(three_class_split):
    X, y, X_pub, _ = three_class_split
    clf = pate(aggregator=ConfidentGNMax(threshold=15, sigma_threshold=3.0, sigma=2.0)).fit(X, y, X_public=X_pub)
    display = plotting.CumulativeEpsilonDisplay.from_estimator(clf)
    report = clf.privacy_report_
    # The curves end where the report does: publishable first (a priori), data-dependent next.
    assert display.publishable_epsilon[-1] == pytest.approx(report.epsilon, rel=1e-12)
    assert display.data_dependent_epsilon[-1] == pytest.approx(report.data_dependent_epsilon, rel=1e-12)
    assert np.all(np.diff(display.publishable_epsilon) > 0)
    assert np.all(np.diff(display.data_dependent_epsilon) >= -1e-12)
    assert len(display.lines_) == 2 and display.lines_[0].get_xdata().size == clf.n_queries_
    np.testing.assert_array_equal(display.lines_[0].get_ydata(), display.publishable_epsilon)
    np.testing.assert_array_equal(display.lines_[1].get_ydata(), display.data_dependent_epsilon)
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


def test_privacy_utility_from_a_grid_search(three_class_split):
    X, y, X_pub, _ = three_class_split
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    search = GridSearchCV(pate(sanitize_order=None), {"aggregator__sigma": [1.0, 4.0, 16.0]}, cv=2).fit(X_all, y_all)
    display = plotting.PrivacyUtilityDisplay.from_cv_results(search)
    expected = [gdp_epsilon(np.sqrt(120 * 2) / s, 1e-5) for s in [1.0, 4.0, 16.0]]  # 120 answers, a priori
    np.testing.assert_allclose(display.epsilons, expected)
    np.testing.assert_allclose(display.scores, search.cv_results_["mean_test_score"])
    assert display.labels == ["sigma=1", "sigma=4", "sigma=16"]
    # Drawn in order of epsilon (the largest noise first), each point annotated with its candidate.
    np.testing.assert_allclose(display.line_.get_xdata(), expected[::-1])
    np.testing.assert_allclose(display.line_.get_ydata(), search.cv_results_["mean_test_score"][::-1])
    assert [text.get_text() for text in display.ax_.texts] == ["sigma=16", "sigma=4", "sigma=1"]
    unbounded = GridSearchCV(pate(max_queries=None), {"aggregator__sigma": [1.0]}, cv=2).fit(X_all, y_all)
    with pytest.raises(ValueError, match="max_queries"):
        plotting.PrivacyUtilityDisplay.from_cv_results(unbounded)


def test_privacy_utility_at_another_delta_converts_the_fitted_cost(three_class_split):
    # A budget of epsilon 1 at delta 1e-5 buys a number of queries; shown at delta 1e-7 the same queries cost
    # more than 1 (re-planning at 1e-7, as before, showed the budget again: noise and queries the fits never had).
    X, y, X_pub, _ = three_class_split
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


def test_privacy_utility_labels_non_numeric_grid_values(three_class_split):
    X, y, X_pub, _ = three_class_split
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    grid = {"aggregator": [GNMax(sigma=4.0), ConfidentGNMax(threshold=15, sigma_threshold=3.0, sigma=2.0)]}
    search = GridSearchCV(pate(), grid, cv=2).fit(X_all, y_all)  # was: TypeError from f"{v:g}"
    display = plotting.PrivacyUtilityDisplay.from_cv_results(search)
    assert display.labels[0].startswith("aggregator=GNMax(") and "ConfidentGNMax" in display.labels[1]
    assert display.epsilons[1] == pytest.approx(pate(aggregator=grid["aggregator"][1]).publishable_epsilon(10**6))


def test_label_accuracy_against_teachers(three_class_split):
    X, y, X_pub, y_pub = three_class_split
    display = plotting.TeacherCountDisplay.from_estimator(pate(), X, y, X_pub, y_pub, n_teachers=(5, 20))
    np.testing.assert_array_equal(display.n_teachers, [5, 20])
    assert np.all((display.label_accuracy > 0.4) & (display.label_accuracy <= 1))
    np.testing.assert_array_equal(display.answered, [120, 120])
    # Two fits on the same private data: each publishes its a-priori cost, and the figure costs both.
    for count, epsilon in zip((5, 20), display.epsilons):
        fitted = pate(n_teachers=count).fit(X, y, X_public=X_pub)
        assert epsilon == fitted.privacy_spent_[0] == pytest.approx(gdp_epsilon(np.sqrt(2 * 120) / 2.0, 1e-5))
    np.testing.assert_allclose(display.line_.get_ydata(), display.label_accuracy)


def test_displays_draw_their_data_on_a_given_axes():
    """Each display draws on the axes it is given, and what is drawn there is its data, with its labels."""
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 3)
    # Vote gaps: the histogram of the gaps over [0, n_teachers], one bar per bin, on the given axes only.
    gaps = np.array([0, 1, 1, 4, 7, 9, 10])
    histogram = plotting.VoteGapDisplay(gaps, 10).plot(ax=axes[0, 0], bins=5)
    assert histogram.ax_ is axes[0, 0] and histogram.figure_ is figure
    assert list(axes[0, 0].patches) == list(histogram.bars_) and len(histogram.bars_) == 5
    assert [bar.get_x() for bar in histogram.bars_] == [0, 2, 4, 6, 8]  # bins of width 2 from 0 to 10
    assert [bar.get_height() for bar in histogram.bars_] == [3, 0, 1, 1, 2]  # 10 falls in the last bin
    assert axes[0, 0].get_xlabel() == "gap between the two largest vote counts" and axes[0, 0].get_ylabel() == "queries"
    assert "10 teachers" in axes[0, 0].get_title() and "private" in axes[0, 0].get_title()
    # Cumulative epsilon: two curves over the queries 1..n, the publishable one first, and a legend naming them.
    report = analyze(np.tile([[18, 1, 1]], (30, 1)), GNMax(4.0), 1e-5)
    curves = plotting.CumulativeEpsilonDisplay.from_report(report, ax=axes[0, 1])
    assert curves.ax_ is axes[0, 1] and axes[0, 1].get_lines() == curves.lines_ and len(curves.lines_) == 2
    for line, values in zip(curves.lines_, (curves.publishable_epsilon, curves.data_dependent_epsilon)):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 31))
        np.testing.assert_array_equal(line.get_ydata(), values)
    assert curves.publishable_epsilon[-1] == pytest.approx(report.epsilon, rel=1e-12)
    assert [text.get_text() for text in axes[0, 1].get_legend().get_texts()] == [
        "publishable (a-priori bound or budget)",
        "data-dependent (private)",
    ]
    assert axes[0, 1].get_xlabel() == "queries" and axes[0, 1].get_ylabel() == "epsilon (delta = 1e-05)"
    public = plotting.CumulativeEpsilonDisplay.from_report(report, ax=axes[0, 2], data_dependent=False)
    assert axes[0, 2].get_lines() == public.lines_ and len(public.lines_) == 1
    np.testing.assert_array_equal(public.lines_[0].get_ydata(), curves.publishable_epsilon)
    # Privacy-utility: one line through the candidates in order of epsilon, each annotated with its parameters.
    utility = plotting.PrivacyUtilityDisplay(np.array([2.0, 0.5, 1.0]), np.array([0.9, 0.6, 0.8]), ["a", "b", "c"])
    utility.plot(ax=axes[1, 0])
    assert utility.ax_ is axes[1, 0] and axes[1, 0].get_lines() == [utility.line_]
    np.testing.assert_array_equal(utility.line_.get_xdata(), [0.5, 1.0, 2.0])
    np.testing.assert_array_equal(utility.line_.get_ydata(), [0.6, 0.8, 0.9])
    assert {text.get_text(): text.xy for text in axes[1, 0].texts} == {
        "a": (2.0, 0.9),
        "b": (0.5, 0.6),
        "c": (1.0, 0.8),
    }
    assert axes[1, 0].get_xlabel() == "publishable epsilon" and axes[1, 0].get_ylabel() == "mean test score"
    plain = plotting.PrivacyUtilityDisplay(utility.epsilons, utility.scores, utility.labels)
    plain.plot(ax=axes[1, 1], annotate=False)
    assert axes[1, 1].get_lines() == [plain.line_] and not axes[1, 1].texts  # annotate=False: no labels drawn
    # Teacher count: label accuracy against the number of teachers.
    counts = plotting.TeacherCountDisplay(np.array([5, 20, 50]), np.array([0.7, 0.9, 0.8]), np.array([120, 120, 90]))
    counts.plot(ax=axes[1, 2])
    assert counts.ax_ is axes[1, 2] and axes[1, 2].get_lines() == [counts.line_]
    np.testing.assert_array_equal(counts.line_.get_xdata(), [5, 20, 50])
    np.testing.assert_array_equal(counts.line_.get_ydata(), [0.7, 0.9, 0.8])
    assert axes[1, 2].get_xlabel() == "teachers" and axes[1, 2].get_ylabel() == "accuracy of the answered labels"
    # Nothing was drawn anywhere else: one figure, the given one.
    assert plt.get_fignums() == [figure.number]
