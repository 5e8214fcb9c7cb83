"""Releasing the whole noisy histogram (GaussianHistogram) and students that regress it (VoteRegressionClassifier)."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpate import GaussianHistogram, GNMax, PATEClassifier, analyze, make_tabular_pate
from skpate.pate.aggregators import AGGREGATORS
from skpate.pate.students import VoteRegressionClassifier
from skpate.privacy import DEFAULT_ORDERS

VOTES = np.array([[250, 0], [125, 125], [200, 50], [0, 250], [130, 120]])


# ------------------------------------------------------------ GaussianHistogram


def test_histogram_argmax_is_gnmax_label_with_the_same_noise():
    votes = np.tile(VOTES, (200, 1))
    noisy = GaussianHistogram(sigma=30.0).noisy_votes(votes, random_state=7)
    assert noisy.shape == votes.shape and noisy.dtype == float
    labels = GNMax(sigma=30.0).aggregate(votes, random_state=7)
    np.testing.assert_array_equal(np.argmax(noisy, axis=1), labels)
    np.testing.assert_array_equal(GaussianHistogram(sigma=30.0).aggregate(votes, random_state=7), labels)


def test_histogram_noise_is_gaussian_with_sigma():
    votes = np.tile([[60, 40]], (20000, 1))
    noise = GaussianHistogram(sigma=12.0).noisy_votes(votes, random_state=0) - votes
    assert abs(noise.mean()) < 0.2 and noise.std() == pytest.approx(12.0, rel=0.02)
    assert abs(np.corrcoef(noise[:, 0], noise[:, 1])[0, 1]) < 0.03  # independent counts


def test_histogram_costs_gnmax_a_priori_and_has_no_data_dependent_discount():
    histogram, gnmax = GaussianHistogram(sigma=40.0), GNMax(sigma=40.0)
    assert histogram.query_cost() == gnmax.query_cost()
    np.testing.assert_allclose(
        histogram.privacy_cost(VOTES, data_dependent=False), gnmax.privacy_cost(VOTES, data_dependent=False)
    )
    # The margins are released, so the papers' argmax bound does not apply: every query costs the a-priori curve,
    # even a unanimous one, where GNMax's data-dependent cost is far smaller.
    dependent = histogram.privacy_cost(VOTES, data_dependent=True)
    np.testing.assert_array_equal(dependent, histogram.privacy_cost(VOTES, data_dependent=False))
    np.testing.assert_allclose(dependent[0], DEFAULT_ORDERS / 40.0**2)
    assert gnmax.privacy_cost(VOTES[:1], data_dependent=True)[0, 0] < dependent[0, 0] / 10  # at a low order
    unanimous, split = (analyze(np.tile(v, (100, 1)), histogram, 1e-5) for v in ([250, 0], [125, 125]))
    assert unanimous.data_dependent_epsilon == split.data_dependent_epsilon
    assert unanimous.epsilon == split.epsilon
    assert not histogram._sanitizable
    # The report says the number is the a-priori curve instead of calling a public number private.
    assert not unanimous.data_dependent_analysis and analyze(VOTES, gnmax, 1e-5).data_dependent_analysis
    assert "no data-dependent analysis" in str(unanimous) and "PRIVATE" not in str(unanimous)
    assert "PRIVATE: computed from the votes" in str(analyze(VOTES, gnmax, 1e-5))


def test_histogram_budget_constructors():
    assert GaussianHistogram.for_budget(1.0, 1e-5, 500).sigma == GNMax.for_budget(1.0, 1e-5, 500).sigma
    # Twice GNMax's noise relative to the ensemble (four times the answers) while the answer cap does not bind.
    wide = GaussianHistogram.for_ensemble(0.5, 1e-5, 250, 2)
    assert isinstance(wide, GaussianHistogram)
    assert wide.sigma == pytest.approx(2 * GNMax.for_ensemble(0.5, 1e-5, 250, 2).sigma)
    capped = GaussianHistogram.for_ensemble(4.0, 1e-5, 250, 2, max_answers=2000)
    assert capped.sigma == GaussianHistogram.for_budget(4.0, 1e-5, 2000).sigma < wide.sigma
    assert AGGREGATORS["gaussian-histogram"] is GaussianHistogram


@pytest.mark.parametrize("sigma", [0.0, -1.0, np.inf])
def test_histogram_rejects_bad_sigma(sigma):
    with pytest.raises(ValueError, match="sigma"):
        GaussianHistogram(sigma=sigma).noisy_votes(VOTES)


# ------------------------------------------------------ VoteRegressionClassifier


def test_vote_regression_predicts_the_argmax_of_regressed_counts():
    X = np.linspace(-1, 1, 40).reshape(-1, 1)
    counts = np.hstack([50 - 40 * X, 50 + 40 * X, np.full_like(X, 45.0)])  # exactly linear in X
    clf = VoteRegressionClassifier(LinearRegression(), classes=["a", "b", "c"]).fit(X, counts)
    expected = np.array(["a", "b", "c"])[np.argmax(counts, axis=1)]
    np.testing.assert_array_equal(clf.predict(X), expected)
    np.testing.assert_array_equal(clf.classes_, ["a", "b", "c"])
    # Centred counts: the row mean (noise common to every class) is removed.
    np.testing.assert_allclose(clf.decision_function(X), counts - counts.mean(axis=1, keepdims=True), atol=1e-9)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(np.argmax(proba, axis=1), np.argmax(counts, axis=1))


def test_vote_regression_binary_confidence_grows_with_the_margin():
    X = np.linspace(-1, 1, 41).reshape(-1, 1)
    counts = np.hstack([100 - 80 * X, 100 + 80 * X])
    clf = VoteRegressionClassifier(LinearRegression()).fit(X, counts)
    np.testing.assert_array_equal(clf.classes_, [0, 1])
    margin = clf.decision_function(X)
    assert margin.shape == (41,) and np.all(np.diff(margin) > 0)  # sklearn's binary convention: for classes_[1]
    top = clf.predict_proba(X).max(axis=1)
    assert top[20] == pytest.approx(0.5) and np.all(np.diff(top[20:]) > 0) and np.all(np.diff(top[:21]) < 0)


def test_vote_regression_on_labels_regresses_indicators():
    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    labels = np.where(y == 1, "yes", "no")
    clf = VoteRegressionClassifier(LinearRegression()).fit(X, labels)
    np.testing.assert_array_equal(clf.classes_, ["no", "yes"])
    assert clf.regressor_.coef_.shape == (2, 5)  # one column per class
    assert clf.score(X, labels) > 0.8


def test_vote_regression_errors_name_the_fix():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="classes names the class of each column of y: 3 classes needed"):
        VoteRegressionClassifier(classes=[0, 1]).fit(X, np.ones((4, 3)))
    with pytest.raises(ValueError, match="vote counts y must be finite"):
        VoteRegressionClassifier().fit(X, np.array([[1.0, np.nan]] * 4))
    with pytest.raises(ValueError, match="requires y to be passed"):
        VoteRegressionClassifier().fit(X, None)


def test_default_regressor_is_a_seeded_smoothing_forest():
    X, y = make_classification(n_samples=200, n_features=4, random_state=1)
    one, two = (VoteRegressionClassifier(random_state=3).fit(X, y) for _ in range(2))
    assert isinstance(one.regressor_, RandomForestRegressor)
    assert (one.regressor_.min_samples_leaf, one.regressor_.max_features) == (10, "sqrt")
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))


# ------------------------------------------------------------ PATEClassifier


def test_vote_student_gets_the_released_histograms(binary_string_split):
    X, y, X_pub, _, _ = binary_string_split
    student = VoteRegressionClassifier(KNeighborsRegressor(n_neighbors=1))
    clf = PATEClassifier(
        LogisticRegression(), n_teachers=20, student=student, aggregator="gaussian-histogram", max_queries=150,
        epsilon=None, classes=["neg", "pos"], random_state=0,
    ).fit(X, y, X_public=X_pub)  # fmt: skip
    fitted = clf.student_
    assert fitted.regressor_.n_samples_fit_ == clf.n_answered_ == 150
    np.testing.assert_array_equal(fitted.classes_, ["neg", "pos"])  # the estimator's label set, not 0..K-1
    # 1-NN on the answered rows returns each row's released histogram, whose argmax is its public label.
    answered = clf.public_labels_ != -1
    np.testing.assert_array_equal(clf.predict(X_pub[answered]), clf.public_labels_[answered])
    assert clf.student is student and student.classes is None  # the parameter is untouched; the clone is set


def test_histogram_labels_match_gnmax_with_the_same_seed(binary_string_split):
    X, y, X_pub, _, _ = binary_string_split
    fits = [
        PATEClassifier(
            LogisticRegression(), n_teachers=20, aggregator=aggregator, max_queries=200, epsilon=None,
            classes=["neg", "pos"], random_state=4,
        ).fit(X, y, X_public=X_pub)
        for aggregator in (GNMax(sigma=4.0), GaussianHistogram(sigma=4.0))
    ]  # fmt: skip
    np.testing.assert_array_equal(fits[0].public_labels_, fits[1].public_labels_)
    assert fits[0].privacy_spent_ == fits[1].privacy_spent_
    assert fits[1].privacy_report_.data_dependent_epsilon > fits[0].privacy_report_.data_dependent_epsilon


def test_budget_fit_with_a_vote_student_picks_the_histogram(binary_string_split):
    X, y, X_pub, X_eval, y_eval = binary_string_split
    student = VoteRegressionClassifier(random_state=0)
    clf = PATEClassifier(
        LogisticRegression(), n_teachers=40, student=student, epsilon=2.0, classes=["neg", "pos"], random_state=0
    )
    expected = GaussianHistogram.for_ensemble(2.0, 1e-5, 40, 2, max_answers=len(X_pub))
    assert 1.9 < clf.publishable_epsilon(n_public=len(X_pub)) <= 2.0  # whole queries: a hair under the budget
    clf.fit(X, y, X_public=X_pub)
    assert isinstance(clf.aggregator_, GaussianHistogram) and clf.aggregator_.sigma == expected.sigma
    assert clf.privacy_spent_[0] <= 2.0 and clf.privacy_report_.guarantee == "a-priori"
    assert clf.n_rounds == "auto" and clf.n_queries_ > 0
    assert clf.score(X_eval, y_eval) > max(np.mean(y_eval == "pos"), np.mean(y_eval == "neg")) + 0.1
    # The published student holds the regressor of released values only: no teacher, no raw vote.
    published = pickle.dumps(clf.export_student())
    assert b"teachers_" not in published and b"TeacherEnsemble" not in published


def test_vote_student_needs_released_histograms(binary_string_split):
    X, y, X_pub, _, _ = binary_string_split
    student = make_pipeline(StandardScaler(), VoteRegressionClassifier())
    with pytest.raises(ValueError, match="does not release; use aggregator='gaussian-histogram'"):
        PATEClassifier(LogisticRegression(), n_teachers=20, student=student, aggregator=GNMax(4.0),
                       classes=["neg", "pos"]).fit(X, y, X_public=X_pub)  # fmt: skip
    with pytest.raises(ValueError, match="semi_supervised=True"):
        PATEClassifier(LogisticRegression(), n_teachers=20, student=student, semi_supervised=True,
                       classes=["neg", "pos"]).fit(X, y, X_public=X_pub)  # fmt: skip


def test_recipe_with_vote_regression(binary_string_split):
    X, y, X_pub, X_eval, y_eval = binary_string_split
    recipe = make_tabular_pate(StandardScaler(), epsilon=1.0, classes=["neg", "pos"], n_teachers=40,
                               vote_regression=True, random_state=0)  # fmt: skip
    # The recipe resolves its settings in fit; the PATEClassifier it plans is known before, from public quantities.
    fixed = make_tabular_pate(epsilon=1.0, classes=[0, 1], n_teachers=40, max_answers=300, vote_regression=True)
    assert repr(fixed.configured_pate().aggregator) == repr(GaussianHistogram.for_ensemble(1.0, 1e-5, 40, 2, 300))
    recipe.fit(X, y, X_public=X_pub)
    pate = recipe.pate_
    assert recipe.vote_regression_ and isinstance(pate.student[-1], VoteRegressionClassifier)
    assert pate.aggregator is None and isinstance(pate.estimator[-1], RandomForestClassifier)
    assert isinstance(pate.aggregator_, GaussianHistogram) and recipe.privacy_spent_ == pate.privacy_spent_
    assert recipe.privacy_spent_[0] <= 1.0
    assert recipe.score(X_eval, y_eval) > 0.7


def test_released_margins_leak_what_gnmax_data_dependent_bound_would_miss():
    # Unanimous teachers and a neighbour where one teacher moved: GNMax's label is class 0 in both (its
    # data-dependent cost is near 0), but the released count of class 1 tells them apart.
    votes, neighbour, sigma, trials = np.array([[250, 0]]), np.array([[249, 1]]), 1.0, 200_000
    histogram = GaussianHistogram(sigma=sigma)
    rng = np.random.default_rng(0)
    high = [np.mean(histogram.noisy_votes(np.repeat(v, trials, axis=0), rng)[:, 1] > 0.5) for v in (votes, neighbour)]
    margin = 4 * np.sqrt(0.25 / trials)  # four standard errors of a proportion
    lower_bound = np.log((high[1] - margin) / (high[0] + margin))  # an epsilon any valid claim must exceed (delta 0)
    assert lower_bound > 0.7
    gnmax_dependent = analyze(votes, GNMax(sigma=sigma), delta=1e-5).data_dependent_epsilon
    assert gnmax_dependent < lower_bound  # the argmax bound does not cover the histogram
    assert analyze(votes, histogram, delta=1e-5).epsilon > lower_bound
    assert analyze(votes, histogram, delta=1e-5).data_dependent_epsilon > lower_bound
