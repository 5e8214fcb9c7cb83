"""PseudoLabelClassifier, and semi-supervised teachers that also fit the public pool."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_classification
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.tree import DecisionTreeClassifier

from skpate import GNMax, PATEClassifier
from skpate.pate.semi_supervised import PseudoLabelClassifier


def _few_labels(n_labeled=6, random_state=0):
    """Two well separated blobs per class, stretched, with only a few labeled rows."""
    X, y = make_blobs(n_samples=600, centers=[[-3, 0], [3, 0]], cluster_std=[1.0, 1.0], random_state=random_state)
    X = X @ np.array([[1.0, 0.0], [0.0, 6.0]])  # the second axis is noise, wider than the gap
    rng = np.random.default_rng(random_state)
    labeled = np.concatenate([rng.choice(np.flatnonzero(y == c), n_labeled // 2, replace=False) for c in (0, 1)])
    y_semi = np.full_like(y, -1)
    y_semi[labeled] = y[labeled]
    return X, y, y_semi


def test_it_is_the_weighted_alternation_it_claims():
    X, _, y_semi = _few_labels()
    clf = PseudoLabelClassifier(RidgeClassifier(alpha=1.0), unlabeled_weight=2.0, max_iter=2).fit(X, y_semi)
    labeled = y_semi != -1
    expected = RidgeClassifier(alpha=1.0).fit(X[labeled], y_semi[labeled])
    weight = np.where(labeled, 1.0, 2.0 * labeled.sum() / (~labeled).sum())  # together twice the labeled rows
    assert weight[~labeled].sum() == pytest.approx(2.0 * labeled.sum())
    for _ in range(2):
        pseudo = np.where(labeled, y_semi, expected.predict(X))
        expected = RidgeClassifier(alpha=1.0).fit(X, pseudo, sample_weight=weight)
    np.testing.assert_allclose(clf.estimator_.coef_, expected.coef_, rtol=1e-12)
    np.testing.assert_array_equal(clf.classes_, [0, 1])
    assert clf.n_iter_ == 3


@pytest.mark.parametrize("params", [dict(unlabeled_weight=0.0), dict(max_iter=0)])
def test_without_pseudo_labels_it_is_the_supervised_estimator(params):
    X, _, y_semi = _few_labels()
    clf = PseudoLabelClassifier(LogisticRegression(), **params).fit(X, y_semi)
    plain = LogisticRegression().fit(X[y_semi != -1], y_semi[y_semi != -1])
    np.testing.assert_allclose(clf.predict_proba(X), plain.predict_proba(X))
    assert clf.n_iter_ == 1


def test_unlabeled_rows_help_where_the_labels_are_few():
    accuracy = {True: [], False: []}
    for seed in range(10):
        X, y, y_semi = _few_labels(n_labeled=2, random_state=seed)  # one labeled row per class
        for semi in (True, False):
            clf = PseudoLabelClassifier(RidgeClassifier(alpha=1.0), max_iter=3 if semi else 0).fit(X, y_semi)
            accuracy[semi].append(clf.score(X, y))
    assert np.mean(accuracy[True]) > np.mean(accuracy[False]) + 0.05, accuracy  # measured: 0.82 against 0.73


def test_string_labels_with_minus_one_for_the_unlabeled_rows():
    X, y, y_semi = _few_labels()
    names = np.array(["no", "yes"], dtype=object)[y]
    y_obj = np.where(y_semi == -1, -1, names).astype(object)
    clf = PseudoLabelClassifier(RidgeClassifier()).fit(X, y_obj)
    assert clf.classes_.tolist() == ["no", "yes"] and set(clf.predict(X)) <= {"no", "yes"}
    assert clf.n_iter_ == 3
    # String arrays cannot hold -1: every row is labeled.
    assert PseudoLabelClassifier(RidgeClassifier()).fit(X, names.astype(str)).n_iter_ == 1


def test_bad_input_names_the_fix():
    X, _, y_semi = _few_labels()
    with pytest.raises(ValueError, match="wrap its final classifier"):
        PseudoLabelClassifier(make_pipeline(StandardScaler(), RidgeClassifier())).fit(X, y_semi)
    with pytest.raises(ValueError, match="does not accept sample_weight"):
        PseudoLabelClassifier(KNeighborsClassifier()).fit(X, y_semi)
    assert PseudoLabelClassifier(KNeighborsClassifier(), max_iter=0).fit(X, y_semi).n_iter_ == 1  # no weights used
    with pytest.raises(ValueError, match="needs some labeled rows"):
        PseudoLabelClassifier(RidgeClassifier()).fit(X, np.full(len(X), -1))
    with pytest.raises(ValueError, match="unlabeled_weight"):
        PseudoLabelClassifier(RidgeClassifier(), unlabeled_weight=-1.0).fit(X, y_semi)
    assert not hasattr(PseudoLabelClassifier(RidgeClassifier()), "predict_proba")  # the estimator has none


# ----------------------------------------------------------- teachers that fit the public pool


def _pate_data():
    X, y = make_classification(n_samples=900, n_features=5, n_informative=3, random_state=0)
    return X[:600], y[:600], X[600:]


@pytest.mark.parametrize(
    "teacher, n_fitted",
    [
        (PseudoLabelClassifier(DecisionTreeClassifier(max_depth=3)), lambda t: t.estimator_.tree_.n_node_samples[0]),
        (
            make_pipeline(StandardScaler(), PseudoLabelClassifier(DecisionTreeClassifier(max_depth=3))),
            lambda t: t[-1].estimator_.tree_.n_node_samples[0],
        ),  # fmt: skip
        (SelfTrainingClassifier(LogisticRegression()), lambda t: t.transduction_.shape[0]),
        (DecisionTreeClassifier(max_depth=3), lambda t: t.tree_.n_node_samples[0]),
    ],
)
def test_semi_supervised_teachers_fit_their_partition_and_the_public_rows(teacher, n_fitted):
    X, y, X_pub = _pate_data()
    pate = PATEClassifier(teacher, n_teachers=4, aggregator=GNMax(sigma=1.0), max_queries=50, epsilon=None,
                          classes=[0, 1], student=LogisticRegression(), random_state=0)  # fmt: skip
    pate.fit(X, y, X_public=X_pub)
    public = len(X_pub) if not isinstance(teacher, DecisionTreeClassifier) else 0
    assert [n_fitted(t) for t in pate.teachers_] == [150 + public] * 4


def test_a_semi_supervised_teacher_still_depends_on_its_partition_only():
    """Changing a private row changes one teacher: the public rows every teacher fits are the same for all."""
    X, y, X_pub = _pate_data()
    params = dict(n_teachers=4, aggregator=GNMax(sigma=1.0), max_queries=50, epsilon=None, classes=[0, 1],
                  student=LogisticRegression(), random_state=0)  # fmt: skip
    teacher = PseudoLabelClassifier(RidgeClassifier())
    first = PATEClassifier(teacher, **params).fit(X, y, X_public=X_pub)
    changed = X.copy()
    changed[first.teachers_.partitions[2][0]] += 10.0
    second = PATEClassifier(teacher, **params).fit(changed, y, X_public=X_pub)
    same = [np.array_equal(a.estimator_.coef_, b.estimator_.coef_) for a, b in zip(first.teachers_, second.teachers_)]
    assert same == [True, True, False, True]


def test_warm_start_refuses_semi_supervised_teachers_of_another_public_pool():
    X, y, X_pub = _pate_data()
    pate = PATEClassifier(PseudoLabelClassifier(RidgeClassifier()), n_teachers=4, aggregator=GNMax(sigma=1.0),
                          max_queries=50, epsilon=None, classes=[0, 1], student=LogisticRegression(), warm_start=True,
                          random_state=0)  # fmt: skip
    teachers = pate.fit(X, y, X_public=X_pub).teachers_
    assert pate.fit(X, y, X_public=X_pub).teachers_ is teachers  # the same public rows: reused
    with pytest.raises(ValueError, match="warm_start reuses semi-supervised teachers"):
        pate.fit(X, y, X_public=X_pub[:200])
    # Supervised teachers never saw the public rows: reused with any pool.
    plain = clone(pate).set_params(estimator=RidgeClassifier())
    teachers = plain.fit(X, y, X_public=X_pub).teachers_
    assert plain.fit(X, y, X_public=X_pub[:200]).teachers_ is teachers
