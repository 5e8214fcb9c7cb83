"""Issue 30: every crash of a PATE fit or analysis is a clear error that names the parameter and the fix, and quotes
no private value (feature values, labels, per-partition counts)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.tree import DecisionTreeClassifier

from skpate import GNMax, PATEClassifier
from skpate.pate.semi_supervised import PseudoLabelClassifier
from skpate.preprocessing import PublicPreprocessor
from skpate.privacy import RDPAccountant, analyze, gdp_epsilon


def pate(estimator=None, **params):
    """10 teachers, 40 queries at GNMax(sigma=2), no budget, labels 0, 1, 2."""
    defaults = dict(n_teachers=10, aggregator=GNMax(sigma=2.0), max_queries=40, epsilon=None, classes=[0, 1, 2])
    return PATEClassifier(DecisionTreeClassifier(max_depth=3) if estimator is None else estimator, **defaults | params)


class Unreadable:
    """Rows that fail on any read: a fit refused from its parameters never touches them."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("the private rows were read")

    def __len__(self):
        raise AssertionError("the private rows were read")


# -------------------------------------------------------- 1. teachers that are not classifiers


@pytest.mark.parametrize("estimator", [LinearRegression(), make_pipeline(StandardScaler(), LinearRegression())])
def test_a_regressor_teacher_is_refused_before_any_row_is_read(estimator):
    with pytest.raises(ValueError, match=r"estimator must be a classifier.*got LinearRegression.*Use a classifier"):
        pate(estimator).fit(Unreadable(), Unreadable(), X_public=Unreadable())


def test_a_regressor_student_is_refused_and_pointed_at_vote_regression():
    with pytest.raises(ValueError, match="student must be a classifier.*VoteRegressionClassifier"):
        pate(student=LinearRegression()).fit(Unreadable(), Unreadable(), X_public=Unreadable())


def test_public_rows_the_teachers_cannot_read_are_refused_before_the_budget(three_class_split_small):
    """They were refused by the student's uncertainty sampling with scikit-learn's bare message, after a charge."""
    X, y, X_public = three_class_split_small
    X_public = np.array(X_public, dtype=float)
    X_public[0, 1] = np.nan
    accountant = RDPAccountant(epsilon=100.0, delta=1e-5)
    model = pate(LogisticRegression(), epsilon=10.0, max_queries=None, accountant=accountant)
    with pytest.raises(
        ValueError, match=r"public rows .* hold NaN or infinity in columns \[1\].*\(LogisticRegression\)"
    ):
        model.check_public(X_public)
    with pytest.raises(ValueError, match=r"public rows .* hold NaN or infinity in columns \[1\]"):
        model.fit(X, y, X_public=X_public)
    assert accountant.n_fits == 0
    # Trees take NaN, and a ColumnTransformer's branches may impute it: neither is refused.
    pate(DecisionTreeClassifier(), student=DecisionTreeClassifier()).check_public(X_public)


@pytest.mark.parametrize("student", [DecisionTreeClassifier(), make_pipeline(StandardScaler(), LogisticRegression())])
def test_semi_supervised_true_with_a_student_that_would_learn_minus_one_as_a_class_is_refused(
    three_class_split_small, student
):
    """Such a student learnt -1 as a class and predicted it for most rows, with probabilities that summed to 0.04."""
    X, y, X_public = three_class_split_small
    with pytest.raises(ValueError, match=r"semi_supervised=True .* would learn as a class.*semi_supervised='auto'"):
        pate(student=student, semi_supervised=True).fit(X, y, X_public=X_public)
    semi = pate(student=SelfTrainingClassifier(LogisticRegression(), max_iter=2), semi_supervised=True)
    assert set(semi.fit(X, y, X_public=X_public).predict(X_public)) <= {0, 1, 2}


@pytest.mark.parametrize(
    "estimator",
    [
        SelfTrainingClassifier(LogisticRegression(), max_iter=2),
        make_pipeline(StandardScaler(), PseudoLabelClassifier(LogisticRegression())),
    ],
)
def test_semi_supervised_classifiers_stay_teachers(three_class_split_small, estimator):
    X, y, X_pub = three_class_split_small
    clf = pate(estimator, n_teachers=5, student=LogisticRegression()).fit(X, y, X_public=X_pub)
    assert clf.n_queries_ == 40


class FloatPredictor(ClassifierMixin, BaseEstimator):
    """Tagged a classifier, but predicts numbers that are no label: a crash guard for what is_classifier misses."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), 0.5)


def test_a_teacher_predicting_other_labels_is_a_clear_error(three_class_split_small):
    X, y, X_pub = three_class_split_small
    with pytest.raises(ValueError, match="predicted labels that are not among classes.*must be a classifier") as error:
        pate(FloatPredictor()).fit(X, y, X_public=X_pub)
    assert "0.5" not in str(error.value)


# ------------------------------------------------- 2. a string column without an encoder


def city_table(n, rng):
    return pd.DataFrame({"income": rng.normal(size=n), "city": rng.choice(["secret-paris", "secret-rome"], n)})


def test_a_string_column_names_the_column_and_the_fix_not_its_values():
    rng = np.random.default_rng(0)
    X, X_pub = city_table(400, rng), city_table(100, rng)
    y = rng.integers(0, 3, 400)
    with pytest.raises(ValueError, match="could not be fit") as error:
        pate(LogisticRegression()).fit(X, y, X_public=X_pub)
    message = str(error.value)
    assert "X has non-numeric columns ['city']" in message
    assert "OneHotEncoder(handle_unknown='ignore')" in message and "skpate.PrivateClassifier" in message
    assert "secret" not in message and error.value.__cause__ is None and error.value.__context__ is None
    assert not hasattr(error.value, "estimator_error")  # not kept: an error may be logged, pickled, reported


def test_a_teacher_that_reads_strings_and_nan_gets_no_hint_about_them():
    rng = np.random.default_rng(0)
    X, X_pub = city_table(400, rng), city_table(100, rng)
    X.loc[::7, "income"] = np.nan
    y = np.where(np.arange(400) < 5, 1, 0)  # 5 positives, 10 partitions: one holds one class, its regression fails
    teacher = make_pipeline(PublicPreprocessor(), LogisticRegression())  # it encodes the city and imputes the NaN
    with pytest.raises(ValueError, match="could not be fit") as error:
        pate(teacher, classes=[0, 1]).fit(X, y, X_public=X_pub)
    message = str(error.value)
    assert "if its partition is too small or misses classes: give every teacher more rows" in message
    assert "non-numeric" not in message and "NaN" not in message
    with pytest.raises(ValueError, match=r"\['city'\]; put an encoder.*If the private rows hold NaN or infinity.*"
                       r"Or, if its partition is too small or misses classes"):  # fmt: skip
        pate(LogisticRegression(), classes=[0, 1]).fit(X, y, X_public=X_pub)  # each cause is possible


def test_a_teacher_error_is_the_same_for_neighbouring_datasets(three_class_split):
    """The message used to quote the classes present in the failing partition: a private count. Now it depends
    on public quantities only, so two datasets that differ in one label give the same message."""
    X, y, X_pub, _ = three_class_split
    neighbour = y.copy()
    neighbour[0] = (y[0] + 1) % 3
    messages = []
    for labels in (y, neighbour):
        with pytest.raises(ValueError, match="lower n_teachers") as error:  # 4 rows per teacher: some see one class
            pate(LogisticRegression(), n_teachers=300).fit(X, labels, X_public=X_pub)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert not any(str(n) in messages[0] for n in (1, 2, 3, 4, 300, 1200))  # no count, no class tally


class LabelQuoter(ClassifierMixin, BaseEstimator):
    """A teacher whose error quotes a private label, as a KeyError does (the key)."""

    def fit(self, X, y):
        raise KeyError(y[0])

    def predict(self, X):
        return np.zeros(len(X))


def test_any_teacher_crash_is_a_value_error_that_quotes_nothing(three_class_split_small):
    X, y, X_pub = three_class_split_small
    secret = np.array(["secret-a", "secret-b", "secret-c"])[y]
    with pytest.raises(ValueError, match="raised a KeyError; its message is not shown") as error:
        pate(LabelQuoter(), classes=["secret-a", "secret-b", "secret-c"]).fit(X, secret, X_public=X_pub)
    assert "secret" not in str(error.value) and error.value.__context__ is None


def test_a_groups_length_error_quotes_no_count(three_class_split_small):
    X, y, X_pub = three_class_split_small
    with pytest.raises(ValueError, match="groups must have one entry per row of X") as error:
        pate().fit(X, y, X_public=X_pub, groups=np.arange(10))
    assert not any(ch.isdigit() for ch in str(error.value))


# ------------------------------------------------------- 3. NaN or infinity: where, which column


def with_value(X, row, column, value):
    X = np.array(X, dtype=float)
    X[row, column] = value
    return X


def test_nan_in_the_private_rows_is_a_possible_cause_that_names_no_column(three_class_split_small):
    """Which private columns hold NaN (and whether any does) depends on the rows: the hint is the same for any."""
    X, y, X_pub = three_class_split_small
    messages = []
    for column in (1, 2):
        with pytest.raises(ValueError, match=r"If the private rows hold NaN or infinity \(not checked") as error:
            pate(LogisticRegression()).fit(with_value(X, 7, column, np.nan), y, X_public=X_pub)
        messages.append(str(error.value))
    assert messages[0] == messages[1] and "public" not in messages[0] and "columns" not in messages[0]
    pate().fit(with_value(X, 7, 4, -1e39), y, X_public=X_pub)  # a number beyond float32 is set to its end


def test_nan_in_the_public_rows_names_them_and_the_column(three_class_split_small):
    X, y, X_pub = three_class_split_small
    expected = r"the public rows \(X_public, or rows of X with y == -1\) hold NaN or infinity in columns \[2\]"
    with pytest.raises(ValueError, match=expected):
        pate(LogisticRegression(), max_queries=None).fit(X, y, X_public=with_value(X_pub, 3, 2, np.nan))
    # The same rows as rows of X labeled -1.
    X_all = np.vstack([X, with_value(X_pub, 3, 2, np.nan)])
    y_all = np.concatenate([y, np.full(len(X_pub), -1)])
    with pytest.raises(ValueError, match=expected):
        pate(LogisticRegression(), max_queries=None).fit(X_all, y_all)


def test_nan_columns_of_public_data_frame_rows_are_named(three_class_split_small):
    X, y, X_pub = three_class_split_small
    columns = [f"f{i}" for i in range(X.shape[1])]
    X_pub = pd.DataFrame(with_value(X_pub, 0, 3, np.nan), columns=columns)
    with pytest.raises(ValueError, match=r"public rows .* hold NaN or infinity in columns \['f3'\]"):
        pate(LogisticRegression()).fit(pd.DataFrame(X, columns=columns), y, X_public=X_pub)


def test_nan_in_public_rows_that_semi_supervised_teachers_fit(three_class_split_small):
    X, y, X_pub = three_class_split_small
    teacher = PseudoLabelClassifier(LogisticRegression())
    with pytest.raises(ValueError, match=r"public rows .* in columns \[5\], which the estimator \(PseudoLabelClass"):
        pate(teacher, student=LogisticRegression()).fit(X, y, X_public=with_value(X_pub, 0, 5, np.nan))


def test_nan_is_fine_for_teachers_that_take_it(three_class_split_small):
    X, y, X_pub = three_class_split_small
    clf = pate().fit(with_value(X, 7, 1, np.nan), y, X_public=X_pub)  # decision trees handle missing values
    assert clf.n_queries_ == 40


# ------------------------------------------------------------------------- 4. warm_start


def test_warm_start_refuses_another_number_of_private_rows(three_class_split_small, monkeypatch):
    X, y, X_pub = three_class_split_small
    clf = pate(warm_start=True, student=LogisticRegression()).fit(X, y, X_public=X_pub)
    teachers = clf.teachers_
    monkeypatch.setattr(DecisionTreeClassifier, "fit", lambda *a, **k: pytest.fail("a teacher was trained"))
    with pytest.raises(ValueError, match="warm_start.*same private rows.*warm_start=False") as error:
        clf.fit(X[:-50], y[:-50], X_public=X_pub)
    assert not any(str(n) in str(error.value) for n in (550, 600))
    assert clf.teachers_ is teachers
    clf.fit(X, y, X_public=X_pub[:200])  # the same private rows, other public rows: more votes, no new teacher
    assert clf.teachers_ is teachers


def test_warm_start_refuses_groups_it_was_not_trained_with(three_class_split_small):
    X, y, X_pub = three_class_split_small
    groups = np.arange(len(y)) // 3
    clf = pate(warm_start=True).fit(X, y, X_public=X_pub)
    with pytest.raises(ValueError, match="warm_start reuses teachers partitioned without groups"):
        clf.fit(X, y, X_public=X_pub, groups=groups)
    grouped = pate(warm_start=True).fit(X, y, X_public=X_pub, groups=groups)
    with pytest.raises(ValueError, match="warm_start reuses teachers partitioned by groups"):
        grouped.fit(X, y, X_public=X_pub)
    teachers = grouped.teachers_
    grouped.fit(X, y, X_public=X_pub, groups=groups)  # with groups the number of rows is private: not compared
    assert grouped.teachers_ is teachers


def test_warm_start_without_it_trains_new_teachers(three_class_split_small):
    X, y, X_pub = three_class_split_small
    clf = pate(warm_start=True).fit(X, y, X_public=X_pub)
    teachers = clf.teachers_
    clf.set_params(warm_start=False).fit(X[:-50], y[:-50], X_public=X_pub)
    assert clf.teachers_ is not teachers


# --------------------------------------------------------------- 5. analyze: counts that overflow


@pytest.mark.parametrize(
    "votes",
    [
        np.array([[2**62, 2**62 - 10, 10]] * 3, dtype=np.int64),  # rows sum past int64
        np.array([[2**52, 2**52]] * 3, dtype=np.int64),  # each count exact, the sum is not
        np.array([[2.0**60, 0.0]] * 3),  # a float count beyond exact integers
        np.array([[2**63 + 5, 2**63 - 5]], dtype=np.uint64),  # used to wrap to a "negative value"
    ],
)
def test_analyze_refuses_counts_that_overflow(votes):
    with pytest.raises(ValueError, match=r"votes must count teachers.*below 2\*\*53") as error:
        analyze(votes, GNMax(sigma=40.0), 1e-5)
    assert not any(ch.isdigit() for ch in str(error.value).replace("2**53", "").replace("(n_queries, n_classes)", ""))


def test_analyze_takes_counts_just_below_the_limit():
    votes = np.array([[2**52, 2**52 - 1]] * 3)  # rows sum to 2**53 - 1
    report = analyze(votes, GNMax(sigma=40.0), 1e-5)
    # Three GNMax(40) queries, a priori: sqrt(3 * 2 / 40^2)-GDP, whatever the votes.
    assert report.epsilon == pytest.approx(gdp_epsilon(np.sqrt(3 * 2 / 40**2), 1e-5), rel=1e-9)


def test_unequal_row_sums_quote_no_count():
    with pytest.raises(ValueError, match="same number of teachers") as error:
        analyze(np.array([[170, 3], [171, 3]]), GNMax(sigma=40.0), 1e-5)
    assert "17" not in str(error.value) and "174" not in str(error.value)


def test_the_command_line_reports_the_overflow(tmp_path, capsys):
    from skpate.__main__ import main

    path = tmp_path / "votes.npy"
    np.save(path, np.array([[2**62, 2**62]] * 3, dtype=np.int64))
    assert main(["analyze", str(path), "--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5"]) == 2
    assert "votes must count teachers" in capsys.readouterr().err
