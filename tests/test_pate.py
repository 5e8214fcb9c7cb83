"""PATEClassifier: the fit flow, scikit-learn integration and clear errors."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier

from skpate import NZC, ConfidentGNMax, GNMax, LNMax, PATEClassifier, Plurality
from skpate._partition import disjoint_partitions
from skpate.privacy import analyze, gdp_epsilon


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=1500, n_features=8, n_informative=5, n_classes=3, random_state=0)
    return X[:1200], y[:1200], X[1200:], y[1200:]


def small_pate(**params):
    defaults = dict(n_teachers=20, aggregator=GNMax(sigma=2.0), random_state=0)
    defaults.update(params)
    return PATEClassifier(DecisionTreeClassifier(max_depth=4), **defaults)


# ------------------------------------------------------------------ the flow


def test_fit_sets_fitted_attributes(data):
    X, y, X_pub, y_pub = data
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


def test_votes_and_privacy_match_the_teachers(data):
    """The report is the analysis of the real teachers' votes on the real queries."""
    X, y, X_pub, _ = data
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


def test_public_rows_as_minus_one_labels_equal_x_public(data):
    X, y, X_pub, _ = data
    a = small_pate().fit(X, y, X_public=X_pub)
    b = small_pate().fit(np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), int)]))
    np.testing.assert_array_equal(a.public_labels_, b.public_labels_)
    np.testing.assert_array_equal(a.predict(X_pub), b.predict(X_pub))
    assert a.privacy_spent_ == b.privacy_spent_


def test_seeded_fit_is_reproducible_and_n_jobs_invariant(data):
    X, y, X_pub, _ = data
    a = small_pate(n_jobs=1).fit(X, y, X_public=X_pub)
    b = small_pate(n_jobs=2).fit(X, y, X_public=X_pub)
    np.testing.assert_array_equal(a.public_labels_, b.public_labels_)
    assert a.privacy_spent_ == b.privacy_spent_


def test_unseeded_fits_draw_fresh_noise(data):
    X, y, X_pub, _ = data
    labels = [
        small_pate(random_state=None, aggregator=GNMax(sigma=20.0)).fit(X, y, X_public=X_pub).public_labels_
        for _ in range(2)
    ]
    assert np.any(labels[0] != labels[1])


def test_teachers_see_disjoint_partitions(data):
    X, y, X_pub, _ = data
    clf = small_pate().fit(X, y, X_public=X_pub)
    parts = disjoint_partitions(len(y), 20, np.random.default_rng(0))
    assert sorted(np.concatenate(parts).tolist()) == list(range(len(y)))
    # Each teacher saw one near-equal share: the root of its tree counts its rows.
    sizes = [t.tree_.n_node_samples[0] for t in clf.teachers_]
    assert sum(sizes) == len(y) and max(sizes) - min(sizes) <= 1


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


def test_fit_with_groups(data):
    X, y, X_pub, _ = data
    groups = np.arange(len(y)) // 4
    clf = small_pate().fit(X, y, X_public=X_pub, groups=groups)
    assert sum(t.tree_.n_node_samples[0] for t in clf.teachers_) == len(y)


def test_max_queries_chooses_random_public_rows(data):
    X, y, X_pub, _ = data
    a = small_pate(max_queries=50, random_state=0).fit(X, y, X_public=X_pub)
    b = small_pate(max_queries=50, random_state=1).fit(X, y, X_public=X_pub)
    assert a.n_queries_ == 50
    assert np.any((a.public_labels_ != -1) != (b.public_labels_ != -1))


def test_confident_gnmax_answers_some(data):
    X, y, X_pub, _ = data
    clf = small_pate(aggregator=ConfidentGNMax(threshold=15, sigma_threshold=3, sigma=2)).fit(X, y, X_public=X_pub)
    assert 0 < clf.n_answered_ < clf.n_queries_
    assert clf.privacy_report_.n_answered == clf.n_answered_


@pytest.mark.parametrize("name", ["plurality", "lnmax", "gnmax", "confident-gnmax"])
def test_aggregator_by_name(data, name):
    X, y, X_pub, _ = data
    clf = PATEClassifier(DecisionTreeClassifier(), n_teachers=250, aggregator=name, random_state=0, max_queries=100)
    Xb = np.vstack([X, X]) if name == "confident-gnmax" else X  # 250 teachers need rows
    yb = np.concatenate([y, y]) if name == "confident-gnmax" else y
    try:
        clf.fit(Xb, yb, X_public=X_pub)
    except ValueError as exc:  # the default threshold may answer nothing on this toy data
        assert "answered none" in str(exc)


def test_string_labels_and_dataframes(data):
    X, y, X_pub, y_pub = data
    names = np.array(["cat", "dog", "eel"])
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame_pub = pd.DataFrame(X_pub, columns=frame.columns)
    clf = small_pate().fit(frame, names[y], X_public=frame_pub)
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
    clf = PATEClassifier(DecisionTreeClassifier(), n_teachers=50, aggregator=GNMax(sigma=1.0), random_state=0)
    clf.fit(X, y, X_public=rng.normal(size=(200, 3)))
    assert list(clf.classes_) == [0, 1, 2]
    assert sum(2 in t.classes_ for t in clf.teachers_) <= 5
    proba = clf.predict_proba(rng.normal(size=(10, 3)))
    assert proba.shape == (10, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


# ------------------------------------------------------------ integrations


@pytest.fixture(scope="module")
def adult_small():
    from skpate.datasets import load_adult

    train, test = load_adult()
    train = train.sample(3000, random_state=0)
    X = pd.concat([train.drop(columns="income"), test.drop(columns="income").iloc[:500]], ignore_index=True)
    y = np.concatenate([train["income"].to_numpy(), np.full(500, -1, dtype=object)])
    return X, y, test.drop(columns="income").iloc[500:1500], test["income"].to_numpy()[500:1500]


def test_pipeline_with_column_transformer_on_raw_adult(adult_small):
    X, y, X_eval, y_eval = adult_small
    categorical = X.select_dtypes(exclude="number").columns
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), categorical)], remainder="passthrough")
    pipe = Pipeline(
        [
            ("prep", prep),
            (
                "pate",
                PATEClassifier(
                    RandomForestClassifier(n_estimators=10), n_teachers=20, aggregator=GNMax(sigma=2.0), random_state=0
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
        random_state=0,
    )
    clf.fit(X, y)
    assert clf.score(X_eval, y_eval) > 0.78


def test_grid_search_over_noise(data):
    X, y, X_pub, _ = data
    X_all = np.vstack([X, X_pub])
    y_all = np.concatenate([y, np.full(len(X_pub), -1)])
    search = GridSearchCV(small_pate(), {"aggregator__sigma": [1.0, 50.0]}, cv=3)
    search.fit(X_all, y_all)
    assert search.best_params_ == {"aggregator__sigma": 1.0}
    scores = search.cv_results_["mean_test_score"]
    assert scores[0] > scores[1]


def test_clone_and_pickle(data):
    X, y, X_pub, _ = data
    clf = small_pate(aggregator=ConfidentGNMax(threshold=15, sigma_threshold=3, sigma=2))
    cloned = clone(clf)
    assert cloned.get_params()["aggregator__threshold"] == 15
    assert cloned.aggregator is not clf.aggregator
    clf.fit(X, y, X_public=X_pub)
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(restored.predict(X_pub), clf.predict(X_pub))
    # fit does not write into the aggregator parameter
    assert not hasattr(clf.aggregator, "teachers_")


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
def test_bad_parameters(data, params, match):
    X, y, X_pub, _ = data
    with pytest.raises(ValueError, match=match):
        small_pate(**params).fit(X, y, X_public=X_pub)


def test_threshold_error_comes_before_any_teacher_is_fit(data, monkeypatch):
    X, y, X_pub, _ = data
    fitted = []
    monkeypatch.setattr(DecisionTreeClassifier, "fit", lambda self, *a, **k: fitted.append(1) or self)
    with pytest.raises(ValueError, match="threshold"):
        small_pate(aggregator=ConfidentGNMax(threshold=21)).fit(X, y, X_public=X_pub)
    assert not fitted


def test_data_errors(data):
    X, y, X_pub, _ = data
    with pytest.raises(ValueError, match="n_teachers=2000 exceeds"):
        small_pate(n_teachers=2000).fit(X, y, X_public=X_pub)
    with pytest.raises(ValueError, match="no public rows"):
        small_pate().fit(X, y)
    with pytest.raises(ValueError, match="given twice"):
        small_pate().fit(np.vstack([X, X_pub]), np.concatenate([y, -np.ones(len(X_pub), int)]), X_public=X_pub)
    with pytest.raises(ValueError, match="one class"):
        small_pate().fit(X, np.zeros(len(y), int), X_public=X_pub)
    with pytest.raises(ValueError, match="inconsistent"):
        small_pate().fit(X, y[:-1], X_public=X_pub)
    with pytest.raises(ValueError, match="no private rows"):
        small_pate().fit(X, -np.ones(len(y), int))
    with pytest.raises(ValueError, match="features of X"):
        small_pate().fit(X, y, X_public=X_pub[:, :3])
    with pytest.raises(ValueError, match="groups"):
        small_pate().fit(X, y, X_public=X_pub, groups=np.arange(10))


def test_partition_too_small_names_the_fix(data):
    X, y, X_pub, _ = data
    clf = PATEClassifier(LogisticRegression(), n_teachers=600, aggregator=GNMax(sigma=1.0), random_state=0)
    with pytest.raises(ValueError, match="lower n_teachers"):
        clf.fit(X, y, X_public=X_pub)


def test_student_with_no_answered_query(data):
    """Labels unrelated to X: 20 teachers are never unanimous, so a threshold of 20 answers nothing."""
    X, y, X_pub, _ = data
    clf = small_pate(aggregator=ConfidentGNMax(threshold=20, sigma_threshold=1e-3, sigma=1.0))
    with pytest.raises(ValueError, match="answered none.*still paid for"):
        clf.fit(X, np.arange(len(y)) % 2, X_public=X_pub)
    # No partial state: a failed fit sets no fitted attribute.
    assert not [name for name in vars(clf) if name.endswith("_") and not name.startswith("_")]


def test_predict_before_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        small_pate().predict(np.zeros((2, 8)))


def test_memory_trains_the_teachers_once_per_split_in_a_grid_search(data, tmp_path):
    import joblib

    X, y, X_pub, _ = data
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


def test_memory_as_a_path_and_a_different_seed_misses(data, tmp_path):
    X, y, X_pub, _ = data
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


def test_memory_hit_unpickles_the_teachers_only_when_used(data, tmp_path):
    X, y, X_pub, _ = data
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


def test_verbose_levels_print_phases_and_progress_but_no_data(data, capsys):
    X, y, X_pub, _ = data
    small_pate(max_queries=100).fit(X, y, X_public=X_pub)
    assert capsys.readouterr() == ("", "")
    clf = small_pate(max_queries=100, verbose=1).fit(X, y, X_public=X_pub)
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert [line.split()[1] for line in lines] == ["partitioned", "fitted", "aggregated", "fitted"]
    assert err == ""
    small_pate(max_queries=100, verbose=2, n_jobs=2).fit(X, y, X_public=X_pub)
    out, err = capsys.readouterr()
    assert err.endswith("teachers 20/20\n") and err.count("teachers ") > 2
    # Counts and timings only: no vote histogram or private value appears.
    assert str(X[0, 0])[:8] not in out + err
    assert not any(str(list(row)) in out for row in clf.privacy_report_.rdp_per_query[:3])
