"""Better students: semi-supervised students, uncertainty queries, interactive rounds, warm start."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OutputCodeClassifier
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from skpate import ConfidentGNMax, GNMax, InteractiveGNMax, PATEClassifier
from skpate.pate.estimator import _confidence


def pate(**params):
    """20 logistic regressions, GNMax(sigma=2) and no budget (``epsilon=None``: the papers' protocol), labels 0, 1."""
    defaults = dict(n_teachers=20, aggregator=GNMax(sigma=2.0), epsilon=None, classes=[0, 1], random_state=0)
    defaults.update(params)
    return PATEClassifier(LogisticRegression(), **defaults)


def test_semi_supervised_student_gets_every_public_row(binary_split):
    X, y, X_pub, _ = binary_split
    student = SelfTrainingClassifier(LogisticRegression(), max_iter=1)
    clf = pate(student=student, max_queries=100).fit(X, y, X_public=X_pub)
    fitted = clf.student_
    assert fitted.transduction_.shape == (len(X_pub),)
    assert np.count_nonzero(fitted.labeled_iter_ == 0) == clf.n_answered_ == 100
    # Off by choice: only the answered rows.
    with pytest.raises(AttributeError):
        pate(student=LogisticRegression(), max_queries=100).fit(X, y, X_public=X_pub).student_.transduction_
    with pytest.warns(UserWarning, match="no unlabeled samples"):  # sklearn: only answered rows reached it
        forced = pate(student=student, max_queries=100, semi_supervised=False).fit(X, y, X_public=X_pub)
    assert forced.student_.transduction_.shape == (100,)


def test_uncertainty_queries_the_rows_near_the_boundary(binary_split):
    X, y, X_pub, _ = binary_split
    clf = pate(max_queries=200, n_rounds=4, query_strategy="uncertainty").fit(X, y, X_public=X_pub)
    margin = np.abs(clf.student_.decision_function(X_pub))
    queried = clf.public_labels_ != -1
    assert queried.sum() == 200
    assert margin[queried].mean() < 0.6 * margin[~queried].mean()
    random = pate(max_queries=200, n_rounds=4).fit(X, y, X_public=X_pub)
    # Random queries sit where the public rows are (their margin is the pool's).
    assert margin[random.public_queried_].mean() > 0.8 * margin.mean()
    assert margin[queried].mean() < 0.6 * margin.mean()


def test_uncertainty_without_predict_proba_ranks_by_decision_scores(binary_split):
    X, y, X_pub, _ = binary_split
    clf = pate(student=LinearSVC(), max_queries=200, n_rounds=4, query_strategy="uncertainty").fit(X, y, X_public=X_pub)
    margin = np.abs(clf.student_.decision_function(X_pub))
    queried = clf.public_labels_ != -1
    assert margin[queried].mean() < 0.6 * margin[~queried].mean()
    # More classes: the gap between the two highest scores.
    X3, y3 = make_classification(n_samples=300, n_features=6, n_informative=4, n_classes=3, random_state=0)
    student = LinearSVC().fit(X3, y3)
    top = np.sort(student.decision_function(X3), axis=1)
    np.testing.assert_allclose(_confidence(student, X3), top[:, -1] - top[:, -2])
    # A student that can say neither: a clear error, or random queries under "auto".
    with pytest.raises(ValueError, match="predict_proba or decision_function"):
        pate(student=OutputCodeClassifier(LogisticRegression(), random_state=0), n_rounds=2,
             query_strategy="uncertainty").fit(X, y, X_public=X_pub)  # fmt: skip


def test_auto_queries_are_uncertainty_rounds_under_a_budget_and_random_without(binary_split):
    X, y, X_pub, _ = binary_split

    def fit(**params):
        return pate(**params).fit(X, y, X_public=X_pub)

    def same(a, b):
        queried, labels = (np.array_equal(getattr(a, k), getattr(b, k)) for k in ("public_queried_", "public_labels_"))
        return queried and labels

    budget = dict(aggregator=GNMax(sigma=30.0), epsilon=2.0)
    auto = fit(**budget)
    assert 0 < auto.n_queries_ < len(X_pub)
    assert same(auto, fit(**budget, query_strategy="uncertainty", n_rounds=5))
    assert not same(auto, fit(**budget, query_strategy="random", n_rounds=1))
    # No budget: random queries in one round, as in the papers.
    assert same(fit(max_queries=150), fit(max_queries=150, query_strategy="random", n_rounds=1))
    # "auto" rounds follow the strategy given.
    assert same(fit(max_queries=150, query_strategy="uncertainty"), fit(max_queries=150, query_strategy="uncertainty",
                                                                        n_rounds=5))  # fmt: skip
    assert same(fit(**budget, query_strategy="random"), fit(**budget, query_strategy="random", n_rounds=1))
    # A student without predict_proba ranks rows by its decision scores; one with neither cannot: random, one round.
    assert same(fit(student=LinearSVC(), **budget), fit(student=LinearSVC(), **budget, query_strategy="uncertainty",
                                                         n_rounds=5))  # fmt: skip
    codes = OutputCodeClassifier(LogisticRegression(), random_state=0)
    assert same(fit(student=codes, **budget), fit(student=codes, **budget, query_strategy="random", n_rounds=1))


def test_interactive_rounds_compose_and_reinforce(binary_split):
    X, y, X_pub, _ = binary_split
    agg = InteractiveGNMax(threshold=8, sigma_threshold=2.0, sigma=2.0, confidence=0.8)
    clf = pate(aggregator=agg, max_queries=300, n_rounds=3).fit(X, y, X_public=X_pub)
    report = clf.privacy_report_
    assert report.n_queries == clf.n_queries_ == 300
    np.testing.assert_allclose(report.rdp, report.rdp_per_query.sum(axis=0))
    # Some labels come from the confident student (free), so more rows are labeled than the teachers answered.
    assert clf.n_labeled_ > clf.n_answered_ == report.n_answered > 0
    single = pate(aggregator=agg, max_queries=100).fit(X, y, X_public=X_pub)
    assert report.epsilon > single.privacy_report_.epsilon


def test_first_interactive_round_is_confident_gnmax_with_shifted_threshold(binary_split):
    X, y, X_pub, _ = binary_split
    a = pate(aggregator=InteractiveGNMax(threshold=5, sigma_threshold=2.0, sigma=2.0, confidence=1.0), max_queries=200)
    b = pate(aggregator=ConfidentGNMax(threshold=5 + 20 / 2, sigma_threshold=2.0, sigma=2.0), max_queries=200)
    a.fit(X, y, X_public=X_pub)
    b.fit(X, y, X_public=X_pub)
    np.testing.assert_array_equal(a.public_labels_, b.public_labels_)
    assert a.privacy_spent_[0] == pytest.approx(b.privacy_spent_[0])


def test_the_first_rounds_stand_in_student_labels_nothing():
    """Issue 13: with confidence below 1/n_classes the uniform stand-in counted as a confident student
    and labeled every unanswered query as class 0 (43 of 60 rows here)."""
    X, y = make_classification(n_samples=400, n_features=6, n_informative=4, random_state=0)
    aggregator = InteractiveGNMax(threshold=1.5, sigma_threshold=1.0, sigma=1.0, confidence=0.4)
    clf = PATEClassifier(DecisionTreeClassifier(max_depth=3), n_teachers=5, aggregator=aggregator, epsilon=None,
                         classes=[0, 1], random_state=0).fit(X[:340], y[:340], X_public=X[340:])  # fmt: skip
    assert 0 < clf.n_answered_ < clf.n_queries_ == 60
    assert clf.n_labeled_ == clf.n_answered_  # one round: no student yet, so only the teachers label


def test_warm_start_reuses_the_teachers_and_their_votes(binary_split, monkeypatch):
    X, y, X_pub, _ = binary_split
    clf = PATEClassifier(DecisionTreeClassifier(), n_teachers=10, warm_start=True, epsilon=None, classes=[0, 1],
                         random_state=0, max_queries=200)  # fmt: skip
    clf.fit(X, y, X_public=X_pub)
    first = clf.teachers_
    # A refit that changes the aggregator or the student asks the same rows: no teacher fits or votes again.
    monkeypatch.setattr(DecisionTreeClassifier, "fit", lambda *a, **k: pytest.fail("a teacher was refit"))
    monkeypatch.setattr(DecisionTreeClassifier, "predict", lambda *a, **k: pytest.fail("a teacher voted again"))
    clf.set_params(aggregator=ConfidentGNMax(threshold=8, sigma_threshold=2, sigma=1), student=RandomForestClassifier())
    clf.fit(X, y, X_public=X_pub)
    assert clf.teachers_ is first
    # More queries: only the new rows are voted on.
    calls = []
    monkeypatch.setattr(DecisionTreeClassifier, "predict", lambda self, X: calls.append(len(X)) or np.zeros(len(X)))
    clf.set_params(max_queries=250).fit(X, y, X_public=X_pub)
    assert calls and sum(calls) < 10 * 250 and sum(calls) % 10 == 0


def test_warm_start_reuses_the_teachers(binary_split, monkeypatch):
    X, y, X_pub, _ = binary_split
    clf = PATEClassifier(DecisionTreeClassifier(), n_teachers=10, warm_start=True, epsilon=None, classes=[0, 1],
                         random_state=0)  # fmt: skip
    clf.fit(X, y, X_public=X_pub)
    first = clf.teachers_
    monkeypatch.setattr(DecisionTreeClassifier, "fit", lambda *a, **k: pytest.fail("a teacher was refit"))
    clf.set_params(aggregator=ConfidentGNMax(threshold=8, sigma_threshold=2, sigma=1), student=RandomForestClassifier())
    clf.fit(X, y, X_public=X_pub)
    assert clf.teachers_ is first


def test_changing_the_student_keeps_queries_and_noise(binary_split):
    X, y, X_pub, _ = binary_split
    a = pate(aggregator=GNMax(sigma=8.0), max_queries=300).fit(X, y, X_public=X_pub)
    b = pate(aggregator=GNMax(sigma=8.0), max_queries=300, student=RandomForestClassifier()).fit(X, y, X_public=X_pub)
    np.testing.assert_array_equal(a.public_labels_, b.public_labels_)
    assert a.privacy_spent_ == b.privacy_spent_
