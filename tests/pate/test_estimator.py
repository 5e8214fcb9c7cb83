"""PATEClassifier: the fit flow, scikit-learn integration and clear errors."""

import copy
import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier

from skpate import NZC, ConfidentGNMax, GNMax, LNMax, PATEClassifier, Plurality, PrivacyLeakWarning
from skpate.pate._partition import disjoint_partitions
from skpate.pate.students import StudentInClasses
from skpate.privacy import Cost, RDPAccountant, analyze, gdp_epsilon


def small_pate(estimator=None, **params):
    """20 teachers, GNMax(sigma=2) and no budget (``epsilon=None``: the papers' protocol), labels 0, 1, 2."""
    defaults = dict(n_teachers=20, aggregator=GNMax(sigma=2.0), epsilon=None, classes=[0, 1, 2], random_state=0)
    defaults.update(params)
    return PATEClassifier(DecisionTreeClassifier(max_depth=4) if estimator is None else estimator, **defaults)


class RowRecorder(ClassifierMixin, BaseEstimator):
    """A teacher that keeps the ids (first column) of the rows it was fitted on and votes its majority class."""

    def fit(self, X, y):
        self.rows_ = np.asarray(X)[:, 0].astype(int)
        self.classes_, counts = np.unique(y, return_counts=True)
        self.majority_ = self.classes_[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


class WarnsItsClassCounts(RowRecorder):
    """A teacher that warns with its partition's class counts (as scikit-learn's "least populated class" does)."""

    def fit(self, X, y):
        warnings.warn(f"class counts {np.unique(y, return_counts=True)[1].tolist()}", UserWarning)
        return super().fit(X, y)

    def predict(self, X):
        warnings.warn(f"voting with majority {self.majority_}", RuntimeWarning)
        return super().predict(X)


def with_row_ids(X, start=0):
    """``X`` with a first column numbering its rows from ``start``."""
    return np.column_stack([np.arange(start, start + len(X)), X])


def rows_seen_by_teachers(X, y, X_public=None, groups=None, random_state=0):
    """The row ids each of 20 ``RowRecorder`` teachers was fitted on."""
    clf = PATEClassifier(
        RowRecorder(),
        n_teachers=20,
        aggregator=GNMax(sigma=2.0),
        epsilon=None,
        classes=[0, 1, 2],
        random_state=random_state,
    )
    clf.fit(X, y, X_public=X_public, groups=groups)
    return [t.rows_ for t in clf.teachers_]


# ------------------------------------------------------------------ the flow


def test_fit_sets_fitted_attributes(three_class_split):
    X, y, X_pub, y_pub = three_class_split
    clf = small_pate(max_queries=150).fit(X, y, X_public=X_pub)
    assert len(clf.teachers_) == 20
    assert clf.n_queries_ == 150 and clf.n_answered_ == 150
    assert list(clf.classes_) == [0, 1, 2]
    assert clf.public_labels_.shape == (300,)
    assert np.count_nonzero(clf.public_labels_ != -1) == 150
    epsilon, delta = clf.privacy_spent_
    assert delta == 1e-5 and epsilon == clf.privacy_report_.epsilon  # what to publish leads
    # 150 GNMax(2) answers, a priori: sqrt(150 * 2 / 2^2)-GDP.
    assert epsilon == pytest.approx(gdp_epsilon(np.sqrt(150 * 2 / 4), 1e-5), rel=1e-12)
    assert clf.privacy_report_.guarantee == "a-priori" and clf.aggregator_.get_params() == {"sigma": 2.0}
    assert clf.score(X_pub, y_pub) > 0.6
    assert clf.predict_proba(X_pub).shape == (300, 3)


def test_votes_and_privacy_match_the_teachers(three_class_split):
    """The report is the analysis of the real teachers' votes on the real queries."""
    X, y, X_pub, _ = three_class_split
    clf = small_pate(aggregator=Plurality()).fit(X, y, X_public=X_pub)
    queried = clf.public_labels_ != -1
    predictions = np.stack([t.predict(X_pub[queried]) for t in clf.teachers_])
    votes = np.stack([(predictions == c).sum(axis=0) for c in clf.classes_], axis=1)
    # Plurality is exact: the labels are the teachers' plurality.
    np.testing.assert_array_equal(clf.public_labels_[queried], clf.classes_[np.argmax(votes, axis=1)])
    report = analyze(votes, GNMax(sigma=2.0), 1e-5)
    gn = small_pate().fit(X, y, X_public=X_pub)
    assert gn.privacy_report_.epsilon == pytest.approx(report.epsilon)
    assert np.isinf(clf.privacy_spent_[0]) and not clf.privacy_report_.is_private


def test_public_rows_as_minus_one_labels_equal_x_public(three_class_split):
    X, y, X_pub, _ = three_class_split
    a = small_pate().fit(X, y, X_public=X_pub)
    b = small_pate().fit(np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), int)]))
    np.testing.assert_array_equal(a.public_labels_, b.public_labels_)
    np.testing.assert_array_equal(a.predict(X_pub), b.predict(X_pub))
    assert a.privacy_spent_ == b.privacy_spent_


def test_seeded_fit_is_reproducible_and_n_jobs_invariant(three_class_split):
    X, y, X_pub, _ = three_class_split
    a = small_pate(n_jobs=1).fit(X, y, X_public=X_pub)
    b = small_pate(n_jobs=2).fit(X, y, X_public=X_pub)
    np.testing.assert_array_equal(a.public_labels_, b.public_labels_)
    assert a.privacy_spent_ == b.privacy_spent_


def test_unseeded_fits_draw_fresh_noise(three_class_split):
    X, y, X_pub, _ = three_class_split
    labels = [
        small_pate(random_state=None, aggregator=GNMax(sigma=20.0)).fit(X, y, X_public=X_pub).public_labels_
        for _ in range(2)
    ]
    assert np.any(labels[0] != labels[1])


def test_disjoint_partitions_is_a_seeded_balanced_random_split():
    parts = disjoint_partitions(1003, 20, np.random.default_rng(0))  # 1003 = 3 * 51 + 17 * 50
    assert len(parts) == 20
    rows = np.concatenate(parts)
    assert np.array_equal(np.sort(rows), np.arange(1003))  # disjoint and covering: each row exactly once
    assert sorted(len(p) for p in parts) == [50] * 17 + [51] * 3
    assert all(np.all(np.diff(p) > 0) for p in parts)  # sorted, as documented
    same = disjoint_partitions(1003, 20, np.random.default_rng(0))
    assert all(np.array_equal(a, b) for a, b in zip(parts, same))
    # Another seed, another split (as a set of sets, whatever the order of the teachers).
    other = disjoint_partitions(1003, 20, np.random.default_rng(1))
    assert {frozenset(p.tolist()) for p in parts} != {frozenset(p.tolist()) for p in other}
    # A shuffle, not the row order cut into chunks.
    assert not any(np.array_equal(p, np.arange(p[0], p[0] + len(p))) for p in parts)


def test_teachers_see_disjoint_partitions(three_class_split):
    X, y, X_pub, _ = three_class_split
    n = 1190  # not a multiple of 20: shares of 59 and 60 rows
    seen = rows_seen_by_teachers(with_row_ids(X[:n]), y[:n], X_public=with_row_ids(X_pub, n))
    assert np.array_equal(np.sort(np.concatenate(seen)), np.arange(n))  # every private row, one teacher each
    assert sorted(len(rows) for rows in seen) == [59] * 10 + [60] * 10
    again = rows_seen_by_teachers(with_row_ids(X[:n]), y[:n], X_public=with_row_ids(X_pub, n))
    assert all(np.array_equal(a, b) for a, b in zip(seen, again))
    other = rows_seen_by_teachers(with_row_ids(X[:n]), y[:n], X_public=with_row_ids(X_pub, n), random_state=1)
    assert {frozenset(r.tolist()) for r in seen} != {frozenset(r.tolist()) for r in other}


def test_groups_keep_each_group_in_one_partition():
    rng = np.random.default_rng(1)
    groups = rng.integers(0, 300, size=2000)
    parts = disjoint_partitions(2000, 10, np.random.default_rng(0), groups)
    owner = {}
    for k, part in enumerate(parts):
        for g in np.unique(groups[part]):
            assert owner.setdefault(g, k) == k
    assert sum(len(p) for p in parts) == 2000
    # A group's teacher does not depend on the other groups (add/remove-one-user stability).
    keep = groups != groups[0]
    parts_without = disjoint_partitions(int(keep.sum()), 10, np.random.default_rng(0), groups[keep])
    teacher_of = {g: k for k, p in enumerate(parts) for g in groups[p]}
    teacher_without = {g: k for k, p in enumerate(parts_without) for g in groups[keep][p]}
    assert all(teacher_of[g] == k for g, k in teacher_without.items())


@pytest.mark.parametrize("n_groups", [5, 40])
def test_a_refusal_that_depends_on_the_private_groups_is_charged(three_class_split, n_groups):
    """With groups, their number is private: more teachers than groups (5), or a teacher the hashed groups leave
    empty (40 groups, 20 teachers), was refused before the budget, for free, so varying n_teachers learnt it."""
    X, y, X_public, _ = three_class_split
    accountant = RDPAccountant(epsilon=100.0, delta=1e-5)
    groups = np.arange(len(y)) % n_groups
    pate = small_pate(epsilon=10.0, accountant=accountant)
    with pytest.raises(ValueError, match="groups"):
        pate.fit(X, y, X_public=X_public, groups=groups)
    assert accountant.n_fits == 1 and accountant.spent_epsilon > 0
    assert not hasattr(pate, "privacy_spent_")


@pytest.mark.parametrize("aggregator", [GNMax(sigma=20.0), LNMax(scale=20.0)])
def test_a_fit_with_groups_is_charged_its_cost_for_replacing_one_row(three_class_split, aggregator):
    """A budget's unit is one row. With groups, the fit's cost is per group (one teacher changes); replacing a row may
    move it to another group, so two teachers: the replace-one cost, mu^2 times 4 (a pure part doubled)."""
    X, y, X_public, _ = three_class_split
    groups = np.arange(len(y)) // 3

    def spent(cost):  # what a budget of these filters spends on ``cost``
        accountant = RDPAccountant(epsilon=20.0, delta=1e-5)
        accountant.reserve(cost)
        return accountant.spent_epsilon

    accountant = RDPAccountant(epsilon=20.0, delta=1e-5)
    pate = small_pate(aggregator=aggregator, accountant=accountant, max_queries=20)
    pate.fit(X, y, X_public=X_public, groups=groups)
    per_group = pate.privacy_report_.cost
    replace_one = Cost(4 * per_group.mu_squared, tuple((2 * eps0, n) for eps0, n in per_group.pure))
    assert accountant.spent_epsilon == spent(replace_one) > spent(per_group)
    (entry,) = accountant.history()
    assert "per-group cost, charged for replacing one row" in entry["label"]
    # The published epsilon is per group, and says so (it said replace-one).
    assert pate.privacy_report_.neighboring == "groups" and "groups]" in str(pate.privacy_report_)
    assert pate.privacy_report_.publishable()["neighboring"] == "groups"
    without_groups = RDPAccountant(epsilon=20.0, delta=1e-5)
    pate = small_pate(aggregator=aggregator, accountant=without_groups, max_queries=20).fit(X, y, X_public=X_public)
    assert without_groups.spent_epsilon == spent(pate.privacy_report_.cost)  # as it was
    assert pate.privacy_report_.neighboring == "replace-one"


def test_with_groups_no_output_depends_on_the_number_of_private_rows(three_class_split):
    """Groups may be added or removed, so the number of rows is private: no private rows at all was refused for
    free (a dataset of one group is refused after the budget), and the delta >= 1/n warning came for n, not n - 1."""
    X, y, X_public, _ = three_class_split
    for n in (0, 1):  # one group is fewer groups than teachers: both refused, both charged
        accountant = RDPAccountant(epsilon=100.0, delta=1e-5)
        with pytest.raises(ValueError, match="exceeds the number of groups"):
            small_pate(accountant=accountant, max_queries=10).fit(X[:n], y[:n], X_public=X_public, groups=np.arange(n))
        assert accountant.n_fits == 1
    n = 300
    for rows in (n - 1, n):  # delta between 1/n and 1/(n-1)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            small_pate(delta=1 / (n - 0.5), max_queries=10).fit(
                X[:rows], y[:rows], X_public=X_public, groups=np.arange(rows) // 3
            )
    with pytest.warns(PrivacyLeakWarning, match="at least 1/n"):  # without groups the number of rows is public
        small_pate(delta=1 / (n - 0.5), max_queries=10).fit(X[:n], y[:n], X_public=X_public)


def test_a_sanitized_release_with_groups_is_refused_before_a_budget_for_rows(three_class_split):
    X, y, X_public, _ = three_class_split
    accountant = RDPAccountant(epsilon=20.0, delta=1e-5)
    pate = small_pate(accountant=accountant, max_queries=20, sanitize_order=20.0)
    with pytest.raises(ValueError, match=r"groups.*sanitize_order=20.0.*Pass sanitize_order=None"):
        pate.fit(X, y, X_public=X_public, groups=np.arange(len(y)) // 3)
    assert accountant.n_fits == 0
    small_pate(max_queries=20, sanitize_order=20.0).fit(X, y, X_public=X_public, groups=np.arange(len(y)) // 3)


def test_fit_with_groups(three_class_split):
    X, y, X_pub, _ = three_class_split
    # Public rows (y == -1) shuffled among the private ones: groups are given per row of X.
    order = np.random.default_rng(0).permutation(len(y) + len(X_pub))
    X_all = with_row_ids(np.vstack([X, X_pub])[order])
    y_all = np.concatenate([y, np.full(len(X_pub), -1)])[order]
    groups = np.arange(len(y_all)) // 4  # groups of 4 consecutive rows, 0 to 4 of them private
    seen = rows_seen_by_teachers(X_all, y_all, groups=groups)
    private = np.flatnonzero(y_all != -1)
    assert np.array_equal(np.sort(np.concatenate(seen)), private)  # every private row, one teacher each
    teacher_of_row = np.full(len(y_all), -1)
    for k, rows in enumerate(seen):
        teacher_of_row[rows] = k
    teachers_of_group = {}
    for row in private:
        teachers_of_group.setdefault(groups[row], set()).add(teacher_of_row[row])
    assert np.count_nonzero(np.bincount(groups[private]) > 1) > 200  # many groups have several private rows
    assert all(len(teachers) == 1 for teachers in teachers_of_group.values())


def test_max_queries_chooses_random_public_rows(three_class_split):
    X, y, X_pub, _ = three_class_split
    a = small_pate(max_queries=50, random_state=0).fit(X, y, X_public=X_pub)
    b = small_pate(max_queries=50, random_state=1).fit(X, y, X_public=X_pub)
    assert a.n_queries_ == 50
    assert np.any((a.public_labels_ != -1) != (b.public_labels_ != -1))


def test_confident_gnmax_answers_some(three_class_split):
    X, y, X_pub, _ = three_class_split
    clf = small_pate(aggregator=ConfidentGNMax(threshold=15, sigma_threshold=3, sigma=2)).fit(X, y, X_public=X_pub)
    assert 0 < clf.n_answered_ < clf.n_queries_
    assert clf.privacy_report_.n_answered == clf.n_answered_


@pytest.mark.parametrize(
    "name, cls", [("plurality", Plurality), ("lnmax", LNMax), ("gnmax", GNMax), ("confident-gnmax", ConfidentGNMax)]
)
def test_aggregator_by_name(three_class_split, name, cls):
    X, y, X_pub, _ = three_class_split
    clf = PATEClassifier(
        DecisionTreeClassifier(),
        n_teachers=250,
        aggregator=name,
        epsilon=None,
        classes=[0, 1, 2],
        random_state=0,
        max_queries=100,
    )
    Xb = np.vstack([X, X]) if name == "confident-gnmax" else X  # 250 teachers need rows
    yb = np.concatenate([y, y]) if name == "confident-gnmax" else y
    clf.fit(Xb, yb, X_public=X_pub)
    # The name stands for the class with its default parameters; the parameter stays the name.
    assert type(clf.aggregator_) is cls and clf.aggregator_.get_params() == cls().get_params()
    assert clf.aggregator == name and clf.n_queries_ == 100
    # Confident-GNMax's default check (threshold 200 of 250 votes, sigma_threshold 150) passes each query with
    # probability between about 0.2 and 0.65: some of 100 queries are answered, not all. The others answer all.
    if cls is ConfidentGNMax:
        assert 0 < clf.n_answered_ < 100
    else:
        assert clf.n_answered_ == 100
    assert np.isinf(clf.privacy_spent_[0]) == (cls is Plurality)


def test_an_exported_student_keeps_a_column_for_each_class_it_never_saw(binary_split, three_class_split):
    X, y, X_public, _ = binary_split
    clf = small_pate().fit(X, y, X_public=X_public)  # labels 0, 1, 2; the private rows hold 0 and 1 only
    model = clf.export_model()
    assert isinstance(model, StudentInClasses) and list(model.classes_) == [0, 1, 2]
    assert list(model.student.classes_) == [0, 1]
    np.testing.assert_array_equal(model.predict_proba(X_public), clf.predict_proba(X_public))
    np.testing.assert_array_equal(model.predict(X_public), clf.predict(X_public))
    assert (model.predict_proba(X_public)[:, 2] == 0).all()
    with pytest.raises(TypeError, match="published model"):  # not refittable on rows
        model.fit(X, y)
    assert not hasattr(model, "decision_function")  # its columns would not be classes_
    X, y, X_public, _ = three_class_split  # a student that saw every class: published in the same model
    clf = small_pate(LogisticRegression()).fit(X, y, X_public=X_public)
    model = clf.export_model()
    assert isinstance(model, StudentInClasses) and isinstance(model.student, LogisticRegression)
    np.testing.assert_array_equal(model.decision_function(X_public), clf.student_.decision_function(X_public))
    with pytest.raises(TypeError, match="published model"):  # cross_val_score(model, private rows) would refit it
        model.fit(X, y)


class NearestMean(ClassifierMixin, BaseEstimator):
    """A student that reads its rows by position: it records no column names of its own."""

    def fit(self, X, y):
        X = np.asarray(X, dtype=float)
        self.classes_ = np.unique(y)
        self.means_ = np.array([X[y == label].mean(axis=0) for label in self.classes_])
        return self

    def predict(self, X):
        distances = ((np.asarray(X, dtype=float)[:, None, :] - self.means_) ** 2).sum(axis=-1)
        return self.classes_[distances.argmin(axis=1)]


def test_the_exported_student_refuses_the_columns_the_estimator_refuses(three_class_split):
    """It recorded the estimator's columns but did not check them: a positional student read reordered ones."""
    X, y, X_public, _ = three_class_split
    columns = [f"x{j}" for j in range(X.shape[1])]
    frame, public = pd.DataFrame(X, columns=columns), pd.DataFrame(X_public, columns=columns)
    clf = small_pate(student=NearestMean()).fit(frame, y, X_public=public)
    model = clf.export_model()
    np.testing.assert_array_equal(model.predict(public), clf.predict(public))
    for wrong in (public[columns[::-1]], public.iloc[:, :-1]):
        for predictor in (clf, model):
            with pytest.raises(ValueError, match="feature names|features"):
                predictor.predict(wrong)


def test_string_labels_and_dataframes(three_class_split):
    X, y, X_pub, y_pub = three_class_split
    names = np.array(["cat", "dog", "eel"])
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame_pub = pd.DataFrame(X_pub, columns=frame.columns)
    clf = small_pate(classes=names).fit(frame, names[y], X_public=frame_pub)
    assert list(clf.classes_) == ["cat", "dog", "eel"]
    assert set(clf.predict(frame_pub)) <= set(names)
    assert clf.public_labels_.dtype == object
    assert clf.score(frame_pub, names[y_pub]) > 0.6
    np.testing.assert_array_equal(clf.feature_names_in_, frame.columns)


def test_classes_missing_from_partitions():
    """A rare class absent from most partitions still gets its column of votes."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 3))
    y = (X[:, 0] > 0).astype(int)
    y[:5] = 2  # five rows of a rare class: most teachers never see it
    clf = PATEClassifier(
        DecisionTreeClassifier(),
        n_teachers=50,
        aggregator=GNMax(sigma=1.0),
        epsilon=None,
        classes=[0, 1, 2],
        random_state=0,
    )
    clf.fit(X, y, X_public=rng.normal(size=(200, 3)))
    assert list(clf.classes_) == [0, 1, 2]
    assert sum(2 in t.classes_ for t in clf.teachers_) <= 5
    proba = clf.predict_proba(rng.normal(size=(10, 3)))
    assert proba.shape == (10, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


# ------------------------------------------------------------ integrations

#: The label set of UCI Adult's income column: public (the dataset's schema).
ADULT_CLASSES = ["<=50K", ">50K"]


def test_pipeline_with_column_transformer_on_raw_adult(adult_small):
    X, y, X_eval, y_eval = adult_small
    # A list: scikit-learn 1.6 rejects an Index of pandas 3 strings.
    categorical = list(X.select_dtypes(exclude="number").columns)
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), categorical)], remainder="passthrough")
    pipe = Pipeline(
        [
            ("prep", prep),
            (
                "pate",
                PATEClassifier(
                    RandomForestClassifier(n_estimators=10),
                    n_teachers=20,
                    aggregator=GNMax(sigma=2.0),
                    epsilon=None,
                    classes=ADULT_CLASSES,
                    random_state=0,
                ),
            ),
        ]
    )
    pipe.fit(X, y)
    assert pipe[-1].n_queries_ == 500
    majority = np.mean(y_eval == "<=50K")
    assert pipe.score(X_eval, y_eval) > majority + 0.02


def test_teacher_pipelines_on_raw_dataframes(adult_small):
    X, y, X_eval, y_eval = adult_small
    categorical = list(X.select_dtypes(exclude="number").columns)
    encoder = ColumnTransformer(
        [
            (
                "cat",
                OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=-1),
                categorical,
            )
        ],
        remainder="passthrough",
    )
    clf = PATEClassifier(
        make_pipeline(encoder, RandomForestClassifier(n_estimators=10)),
        n_teachers=20,
        aggregator=GNMax(sigma=2.0),
        epsilon=None,
        classes=ADULT_CLASSES,
        random_state=0,
    )
    clf.fit(X, y)
    assert clf.score(X_eval, y_eval) > 0.78


def test_grid_search_over_noise(three_class_split):
    X, y, X_pub, _ = three_class_split
    X_all = np.vstack([X, X_pub])
    y_all = np.concatenate([y, np.full(len(X_pub), -1)])
    search = GridSearchCV(small_pate(), {"aggregator__sigma": [1.0, 50.0]}, cv=3)
    search.fit(X_all, y_all)
    assert search.best_params_ == {"aggregator__sigma": 1.0}
    scores = search.cv_results_["mean_test_score"]
    assert scores[0] > scores[1]


def test_clone_and_pickle(three_class_split):
    X, y, X_pub, _ = three_class_split
    clf = small_pate(aggregator=ConfidentGNMax(threshold=15, sigma_threshold=3, sigma=2))
    cloned = clone(clf)
    assert cloned.get_params()["aggregator__threshold"] == 15
    assert cloned.aggregator is not clf.aggregator
    param = clf.aggregator
    state = copy.deepcopy(vars(param))
    clf.fit(X, y, X_public=X_pub)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict(X_pub), clf.predict(X_pub))
    # fit works on a copy of the aggregator parameter and writes nothing into it
    assert clf.aggregator is param and vars(param) == state
    assert clf.aggregator_ is not param and clf.aggregator_.get_params() == param.get_params()


# --------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(n_teachers=0), "n_teachers"),
        (dict(n_teachers=-3), "n_teachers"),
        (dict(aggregator="gnmaxx"), "aggregator"),
        (dict(aggregator=object()), "aggregator"),
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), "delta"),
        (dict(max_queries=0), "max_queries"),
        (dict(aggregator=GNMax(sigma=0)), "sigma"),
        (dict(aggregator=LNMax(scale=-1)), "scale"),
        (dict(aggregator=ConfidentGNMax(threshold=25, sigma_threshold=1, sigma=1)), "threshold"),
        (dict(aggregator=NZC(constant=1.0)), "scale"),
    ],
)
def test_bad_parameters(three_class_split, params, match):
    X, y, X_pub, _ = three_class_split
    with pytest.raises(ValueError, match=match):
        small_pate(**params).fit(X, y, X_public=X_pub)


def test_threshold_error_comes_before_any_teacher_is_fit(three_class_split, monkeypatch):
    X, y, X_pub, _ = three_class_split
    fitted = []
    monkeypatch.setattr(DecisionTreeClassifier, "fit", lambda self, *a, **k: fitted.append(1) or self)
    with pytest.raises(ValueError, match="threshold"):
        small_pate(aggregator=ConfidentGNMax(threshold=21)).fit(X, y, X_public=X_pub)
    assert not fitted


def test_data_errors(three_class_split):
    X, y, X_pub, _ = three_class_split
    with pytest.raises(ValueError, match="n_teachers=2000 exceeds"):
        small_pate(n_teachers=2000).fit(X, y, X_public=X_pub)
    with pytest.raises(ValueError, match="no public rows"):
        small_pate().fit(X, y)
    with pytest.raises(ValueError, match="given twice"):
        small_pate().fit(np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), int)]), X_public=X_pub)
    with pytest.raises(ValueError, match="one class"):  # without classes, the label set would be these rows'
        small_pate(classes=None).fit(X, np.zeros(len(y), int), X_public=X_pub)
    # With the label set given, one class among the private rows is no reason to refuse (the refusal would
    # depend on the private data): the fit runs over the given classes.
    one_class = small_pate().fit(X, np.zeros(len(y), int), X_public=X_pub)
    assert list(one_class.classes_) == [0, 1, 2] and one_class.predict_proba(X_pub).shape == (len(X_pub), 3)
    with pytest.raises(ValueError, match="inconsistent"):
        small_pate().fit(X, y[:-1], X_public=X_pub)
    with pytest.raises(ValueError, match="no private rows"):
        small_pate().fit(X, -np.ones(len(y), int))
    with pytest.raises(ValueError, match="features of X"):
        small_pate().fit(X, y, X_public=X_pub[:, :3])
    with pytest.raises(ValueError, match="groups"):
        small_pate().fit(X, y, X_public=X_pub, groups=np.arange(10))


def test_error_messages_quote_no_private_value(three_class_split):
    """Errors may be pasted anywhere: they name the problem and the fix, not private labels, values or counts."""
    X, y, X_pub, _ = three_class_split
    secret = np.where(y == 1, "secret-positive", "secret-negative")
    from sklearn.linear_model import LogisticRegression

    with (
        pytest.raises(ValueError, match="more rows") as teacher,  # LogisticRegression quotes the one class it saw
        pytest.warns(PrivacyLeakWarning, match="takes them from the private labels"),  # the labels are private here
    ):
        small_pate(estimator=LogisticRegression(), n_teachers=300, classes=None).fit(X, secret, X_public=X_pub)
    assert "secret" not in str(teacher.value) and teacher.value.__cause__ is None and teacher.value.__context__ is None
    with pytest.raises(ValueError, match="only one class") as one_class:
        small_pate(classes=None).fit(X, np.full(len(y), "secret-positive"), X_public=X_pub)
    assert "secret" not in str(one_class.value)
    with pytest.raises(ValueError, match="not in classes") as unknown:
        small_pate(classes=["secret-negative", "b"]).fit(X, secret, X_public=X_pub)
    assert "secret" not in str(unknown.value)
    groups = np.arange(len(y)) % 7
    with pytest.raises(ValueError, match="exceeds the number of groups") as too_many:
        small_pate(n_teachers=10).fit(X, y, X_public=X_pub, groups=groups)
    assert "7" not in str(too_many.value)


def test_partition_too_small_names_the_fix(three_class_split):
    X, y, X_pub, _ = three_class_split
    clf = PATEClassifier(
        LogisticRegression(),
        n_teachers=600,
        aggregator=GNMax(sigma=1.0),
        epsilon=None,
        classes=[0, 1, 2],
        random_state=0,
    )
    with pytest.raises(ValueError, match="lower n_teachers"):
        clf.fit(X, y, X_public=X_pub)


def test_student_with_no_answered_query(three_class_split):
    """Labels unrelated to X: 20 teachers are never unanimous, so a threshold of 20 answers nothing."""
    X, y, X_pub, _ = three_class_split
    clf = small_pate(aggregator=ConfidentGNMax(threshold=20, sigma_threshold=1e-3, sigma=1.0))
    with pytest.raises(ValueError, match="answered none.*still paid for"):
        clf.fit(X, np.arange(len(y)) % 2, X_public=X_pub)
    # No partial state: a failed fit sets no fitted attribute.
    assert not [name for name in vars(clf) if name.endswith("_") and not name.startswith("_")]


def test_predict_before_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        small_pate().predict(np.zeros((2, 8)))


def test_memory_trains_the_teachers_once_per_split_in_a_grid_search(three_class_split, tmp_path):
    import joblib

    X, y, X_pub, _ = three_class_split
    X_all, y_all = np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    memory = joblib.Memory(tmp_path, verbose=0)
    grid = {"aggregator__sigma": [1.0, 2.0, 4.0, 8.0]}
    cached = GridSearchCV(small_pate(max_queries=100, memory=memory), grid, cv=2).fit(X_all, y_all)
    plain = GridSearchCV(small_pate(max_queries=100), grid, cv=2).fit(X_all, y_all)
    # 4 candidates x 2 splits + refit = 9 fits, but only 2 splits + the refit's data: 3 teacher ensembles.
    calls = [path for path in tmp_path.rglob("output.pkl")]
    assert len(calls) == 3
    np.testing.assert_allclose(cached.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(cached.best_estimator_.public_labels_, plain.best_estimator_.public_labels_)


def test_memory_as_a_path_and_a_different_seed_misses(three_class_split, tmp_path):
    X, y, X_pub, _ = three_class_split
    first = small_pate(memory=str(tmp_path), max_queries=100).fit(X, y, X_public=X_pub)
    again = small_pate(memory=str(tmp_path), max_queries=100, aggregator=GNMax(sigma=3.0)).fit(X, y, X_public=X_pub)
    assert len(list(tmp_path.rglob("output.pkl"))) == 1
    other = small_pate(memory=str(tmp_path), max_queries=100, random_state=1).fit(X, y, X_public=X_pub)
    assert len(list(tmp_path.rglob("output.pkl"))) == 2
    assert first.n_queries_ == again.n_queries_ == other.n_queries_
    # One private value or label changed: other teachers, never a stale cache hit.
    X_changed, y_changed = X.copy(), y.copy()
    X_changed[7, 3] += 1e-9
    y_changed[11] = (y_changed[11] + 1) % 3
    small_pate(memory=str(tmp_path), max_queries=100).fit(X_changed, y, X_public=X_pub)
    small_pate(memory=str(tmp_path), max_queries=100).fit(X, y_changed, X_public=X_pub)
    small_pate(memory=str(tmp_path), max_queries=100).fit(pd.DataFrame(X), y, X_public=pd.DataFrame(X_pub))
    df = pd.DataFrame(X)
    df.iloc[7, 3] += 1e-9
    small_pate(memory=str(tmp_path), max_queries=100).fit(df, y, X_public=pd.DataFrame(X_pub))
    assert len(list(tmp_path.rglob("output.pkl"))) == 6


def test_memory_hit_unpickles_the_teachers_only_when_used(three_class_split, tmp_path):
    X, y, X_pub, _ = three_class_split
    plain = small_pate(max_queries=100, n_rounds=2, query_strategy="uncertainty").fit(X, y, X_public=X_pub)
    small_pate(memory=str(tmp_path), max_queries=100).fit(X, y, X_public=X_pub)
    hit = small_pate(memory=str(tmp_path), max_queries=100).fit(X, y, X_public=X_pub)
    assert len(hit.teachers_) == 20 and hit.teachers_._teachers is None  # votes only so far
    # Used, they are the teachers a fit without memory trains.
    for cached, fitted in zip(hit.teachers_, small_pate(max_queries=100).fit(X, y, X_public=X_pub).teachers_):
        np.testing.assert_array_equal(cached.predict(X_pub), fitted.predict(X_pub))
    restored = pickle.loads(pickle.dumps(hit))
    assert restored.teachers_._teachers is None and len(restored.teachers_) == 20
    # A second round votes with the cached teachers: same result as without memory.
    rounds = small_pate(memory=str(tmp_path), max_queries=100, n_rounds=2, query_strategy="uncertainty")
    np.testing.assert_array_equal(rounds.fit(X, y, X_public=X_pub).public_labels_, plain.public_labels_)


def test_verbose_levels_print_phases_and_progress_but_no_data(three_class_split, capsys):
    X, y, X_pub, _ = three_class_split
    small_pate(max_queries=100).fit(X, y, X_public=X_pub)
    assert capsys.readouterr() == ("", "")
    small_pate(max_queries=100, verbose=1).fit(X, y, X_public=X_pub)
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert [line.split()[1] for line in lines] == ["partitioned", "fitted", "aggregated", "fitted"]
    assert err == ""
    small_pate(max_queries=100, verbose=2, n_jobs=2).fit(X, y, X_public=X_pub)
    out2, err = capsys.readouterr()
    # Progress on stderr, one carriage-returned count of the teachers done, counting up to 20.
    progress = [re.fullmatch(r"\[PATEClassifier\] teachers (\d+)/20", part) for part in err[:-1].split("\r")[1:]]
    assert err.startswith("\r") and err.endswith("\n") and all(progress)
    done = [int(match[1]) for match in progress]
    assert len(done) > 2 and done == sorted(done) and done[-1] == 20
    # stdout: the same lines at both levels, holding public counts (20 teachers, 100 queries), the aggregator's
    # parameter and timings only: no vote histogram, label, private value or count (not the 1200 private rows).
    untimed = [re.sub(r" \(\d+\.\d+s\)$", "", line) for line in out.splitlines()]
    assert untimed == [re.sub(r" \(\d+\.\d+s\)$", "", line) for line in out2.splitlines()]
    assert set(re.findall(r"\d+(?:\.\d+)?", "\n".join(untimed))) == {"20", "100", "2.0"}


def test_teachers_are_one_type_and_unseeded_fits_are_never_cached(three_class_split, tmp_path):
    from skpate.pate._teachers import TeacherEnsemble

    X, y, X_pub, _ = three_class_split
    plain = small_pate(max_queries=50).fit(X, y, X_public=X_pub)
    cached = small_pate(max_queries=50, memory=str(tmp_path)).fit(X, y, X_public=X_pub)
    assert type(plain.teachers_) is type(cached.teachers_) is TeacherEnsemble
    assert len(list(tmp_path.rglob("output.pkl"))) == 1
    # Unseeded: the teachers' seeds are fresh every time, so a cache entry could never be hit again.
    small_pate(max_queries=50, memory=str(tmp_path), random_state=None).fit(X, y, X_public=X_pub)
    assert len(list(tmp_path.rglob("output.pkl"))) == 1


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_teacher_warnings_reach_the_caller_without_their_text(three_class_split, n_jobs):
    """A teacher's warning may quote its partition (a class count): it is warned again by category, once, its
    text not shown, whether the teachers ran here or in worker processes (whose own stderr would print it)."""
    X, y, X_public, _ = three_class_split
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        teachers = small_pate(WarnsItsClassCounts(), student=DecisionTreeClassifier(max_depth=3), n_jobs=n_jobs)
        teachers.fit(X, y, X_public=X_public)
    texts = [str(w.message) for w in caught if w.category in (UserWarning, RuntimeWarning)]
    assert not [text for text in texts if "class counts" in text or "majority" in text], texts
    teachers = [text for text in texts if "a teacher" in text and "its text is not shown" in text]
    assert len(teachers) == 2  # one per category


def test_teacher_errors_blame_small_partitions_only_when_they_are_small(three_class_split):
    X, y, X_pub, _ = three_class_split
    with pytest.raises(ValueError, match="max_depth") as bad_parameter:
        small_pate(estimator=DecisionTreeClassifier(max_depth=-1)).fit(X, y, X_public=X_pub)
    assert "more rows" not in str(bad_parameter.value)
    from sklearn.linear_model import LogisticRegression

    with pytest.raises(ValueError, match="more rows"):  # 300 teachers of 4 rows: some see one class only
        small_pate(estimator=LogisticRegression(), n_teachers=300).fit(X, y, X_public=X_pub)


def test_teacher_errors_spot_non_finite_values_in_any_input_type():
    """The columns holding NaN or infinity, by name (DataFrame) or index: schema, never a value."""
    import scipy.sparse as sp

    from skpate.pate._teachers import non_finite_columns

    with_na = pd.DataFrame({"job": ["a", "b"], "age": pd.array([30, None], dtype="Int64")})
    assert non_finite_columns(with_na) == "['age']"
    assert non_finite_columns(sp.csr_matrix(np.array([[0.0, np.inf, 0.0]]))) == "[1]"
    assert non_finite_columns(np.array([[0.0, 1.0, np.nan]])) == "[2]"
    assert not non_finite_columns(pd.DataFrame({"age": [30.0, 40.0], "job": ["a", "b"]}))
    assert not non_finite_columns(np.array([["a", "b"]])) and not non_finite_columns(np.ones((2, 2)))
    assert non_finite_columns(np.full((1, 30), np.nan)) == f"{list(range(10))} and 20 more"  # a short message


def test_teacher_errors_on_sparse_input_say_sparse():
    """scikit-learn's check_estimator_sparse_array wants a failure on unsupported sparse input to say so."""
    import scipy.sparse as sp

    from skpate.pate._teachers import _teacher_error

    for matrix in (sp.csr_matrix(np.eye(3)), sp.coo_matrix(np.eye(3)), sp.csc_array(np.eye(3))):
        message = str(_teacher_error(ValueError, matrix))
        assert f"sparse {matrix.format} matrix" in message and "3" not in message  # no count of private rows
    assert "sparse" not in str(_teacher_error(ValueError, np.eye(3)))
