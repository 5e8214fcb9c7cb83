"""Issue 30: no error, warning, log or output of a private fit quotes a private value, whether the fit fails or not.

Every private estimator (the three pool learners, the selection, the one call, PATE and the tabular recipe) is
fitted on private rows with planted markers (a category the public rows never show, two numbers no public row
holds, one beyond float32's range), in configurations that make the fit fail (an encoder that raises on an unknown
category, missing values without an imputer, a string in a numeric column, a user's step that quotes what it
cannot handle, a private label outside the public ``classes``) and in configurations that succeed. What the user
or a log could see (the exception with its chain and traceback, every warning, the log records, stdout and
stderr) must hold no marker. The guard every private transform runs under
(:func:`skpate._validation.on_private_rows`) is tested first.
"""

import logging
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from skpate import (
    CellCountClassifier,
    GNMax,
    LeafRefitClassifier,
    NoisyBoostingClassifier,
    NoisyGDClassifier,
    PATEClassifier,
    PrivacyLeakWarning,
    PrivateClassifier,
    PrivateModelSelection,
    TabularPATEClassifier,
)
from skpate._validation import (
    check_handles_unknown,
    on_private_rows,
    reemit_sanitized,
    sanitized_records,
    transform_private,
)
from skpate.preprocessing import PublicPreprocessor

SECRET = "SECRET-ZIP-90210"
LABEL = "SECRET-LABEL-42"
NUMBER = 123456.789
HUGE = 1e39
#: How the markers print (repr, str, numpy's and pandas' formats).
MARKERS = (SECRET, LABEL, "123456.7", "1.2345678", "1e+39", "1e39", "1.e+39", "1.0e+39", "1.000000e+39")
CLASSES = ["high", "low", "mid"]


def assert_quotes_nothing(text):
    found = [marker for marker in MARKERS if marker in text]
    assert not found, f"{found} in:\n{text}"


# ------------------------------------------------------------------------------------------------ the guard


def _quotes(X):
    raise ValueError(f"cannot handle {SECRET!r}")


def _warns(X):
    warnings.warn(f"odd value {SECRET}", RuntimeWarning)
    warnings.warn(f"odd value {NUMBER}", RuntimeWarning)
    warnings.warn(f"other {SECRET}", DeprecationWarning)
    warnings.warn("classes were not given", PrivacyLeakWarning)  # skpate's own: its text passes
    return X


def test_the_guard_turns_any_error_into_one_that_names_the_step_and_the_fix_and_drops_the_original(error_text):
    with pytest.raises(ValueError) as caught:
        on_private_rows("MyEstimator", "the preprocessor's transform", _quotes, [[1.0]])
    error = caught.value
    assert str(error).startswith(
        "MyEstimator: the preprocessor's transform failed on the private rows (it raised a ValueError; its message is "
        "not shown"
    )
    assert "SimpleImputer" in str(error) and "handle_unknown='ignore'" in str(error)
    assert error.__cause__ is None and error.__context__ is None and error.__suppress_context__
    assert_quotes_nothing(error_text(error))
    # Even when raised while another exception is being handled (its __context__ would be that one, not ours).
    with pytest.raises(ValueError, match="it raised a KeyError"):
        on_private_rows("MyEstimator", "a step", {}.__getitem__, SECRET)


def test_warnings_recorded_in_a_worker_are_warned_again_as_the_guard_does():
    """What a joblib worker returns (sanitized_records) is warned again in the caller: other categories once each
    without their text, skpate's own with their text and in their own category (not as a UserWarning)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _warns(np.ones((3, 2)))
    records = sanitized_records(caught)
    assert pickle.loads(pickle.dumps(records)) == records and SECRET not in repr(records)
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        reemit_sanitized(records, "MyEstimator", "a step")
    assert [w.category for w in again] == [RuntimeWarning, DeprecationWarning, PrivacyLeakWarning]
    assert str(again[2].message) == "classes were not given"
    assert_quotes_nothing(" ".join(str(w.message) for w in again))


def test_the_guard_reemits_warnings_by_category_without_their_text():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Z = transform_private(FunctionTransformer(_warns), np.ones((3, 2)), "MyEstimator")
    assert Z.shape == (3, 2)
    assert [w.category for w in caught] == [RuntimeWarning, DeprecationWarning, PrivacyLeakWarning]
    assert str(caught[0].message).startswith(
        "MyEstimator: the preprocessor (FunctionTransformer) raised a RuntimeWarning"
    )
    assert str(caught[2].message) == "classes were not given"
    assert_quotes_nothing(" ".join(str(w.message) for w in caught))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the user's filters still apply
        with pytest.raises(RuntimeWarning, match="MyEstimator"):
            transform_private(FunctionTransformer(_warns), np.ones((3, 2)), "MyEstimator")


def test_the_configuration_check_finds_nested_encoders_and_names_the_fix():
    inner = ColumnTransformer([("city", OneHotEncoder(), ["city"])])
    with pytest.raises(ValueError, match=r"preprocessor step 'pipe__columntransformer__city' \(OneHotEncoder\)"):
        check_handles_unknown(
            ColumnTransformer([("pipe", make_pipeline(inner), ["city"])]), "MyEstimator"
        )  # fmt: skip
    check_handles_unknown(make_pipeline(OneHotEncoder(handle_unknown="ignore")), "MyEstimator")
    check_handles_unknown("passthrough", "MyEstimator")
    check_handles_unknown(None, "MyEstimator")


# ------------------------------------------------------------------------------------------------ every estimator


@pytest.fixture(scope="module")
def planted(mixed_split):
    """The mixed table with the markers in the private rows; labels named, ``CLASSES`` public."""
    X, y, X_public = mixed_split
    X = X.copy()
    X.loc[:4, "city"] = SECRET
    X.loc[5, "income"] = NUMBER
    X.loc[6, "income"] = HUGE
    labels = np.array(CLASSES, dtype=object)[y]
    return X, labels, X_public


def _numbers_encoder(**encoder):
    """Numbers scaled (no imputer), the city one-hot."""
    return ColumnTransformer(
        [("numbers", StandardScaler(), ["age", "income"]), ("city", OneHotEncoder(**encoder), ["city"])]
    )


def _leaky(X):
    """A user's step that fails on a value its fit never saw, quoting it (as scikit-learn's encoders do)."""
    values = np.asarray(X, dtype=object)
    if (values == SECRET).any():
        raise ValueError(f"cannot encode {values[np.nonzero(values == SECRET)][0]!r} ({values[:7]!r})")
    return np.asarray(values[:, :2], dtype=float)


def _estimator(name, preprocessor, **params):
    """``name`` configured with ``preprocessor`` (its teachers' and student's, for PATE) and small settings."""
    params = {"classes": CLASSES, **params}
    if name == "CellCountClassifier":
        return CellCountClassifier(preprocessor=preprocessor, n_cells=10, n_partitions=2, **params)
    if name == "NoisyGDClassifier":
        return NoisyGDClassifier(preprocessor=preprocessor, n_iter=10, **params)
    if name == "NoisyBoostingClassifier":
        return NoisyBoostingClassifier(preprocessor=preprocessor, **params)
    if name == "LeafRefitClassifier":
        part = NoisyGDClassifier(preprocessor=preprocessor, n_iter=10)
        return LeafRefitClassifier(part, preprocessor=preprocessor, n_estimators=3, n_refits=1, **params)
    if name == "PrivateClassifier":
        return PrivateClassifier(preprocessor=preprocessor, verbose=1, **params)
    if name == "PrivateModelSelection":
        candidates = [
            ("linear", NoisyGDClassifier(preprocessor=preprocessor, n_iter=10)),
            ("cells", CellCountClassifier(preprocessor=preprocessor, n_cells=10, n_partitions=2)),
        ]
        return PrivateModelSelection(candidates, verbose=1, **params)
    if name == "PATEClassifier":
        teacher = make_pipeline(preprocessor, DecisionTreeClassifier(max_depth=3))
        return PATEClassifier(
            teacher, student=make_pipeline(PublicPreprocessor(), LogisticRegression()), n_teachers=20,
            aggregator=GNMax(sigma=5.0), max_queries=100, epsilon=None, verbose=2, **params,
        )  # fmt: skip
    return TabularPATEClassifier(preprocessor=preprocessor, n_teachers=20, epsilon=4.0, verbose=2, **params)


ESTIMATORS = [
    "CellCountClassifier",
    "NoisyGDClassifier",
    "NoisyBoostingClassifier",
    "LeafRefitClassifier",
    "PrivateClassifier",
    "PrivateModelSelection",
    "PATEClassifier",
    "TabularPATEClassifier",
]

#: name: (preprocessor, how the rows are changed, whether the fit fails). None for the outcome: it depends on the
#: estimator (PATE's teachers fit the private rows themselves: an encoder fitted on them knows their categories).
CONFIGURATIONS = {
    "public preprocessing": (lambda: PublicPreprocessor(), None, False),
    "encoder that ignores unknown categories": (lambda: _numbers_encoder(handle_unknown="ignore"), None, False),
    "encoder that raises on unknown categories": (lambda: _numbers_encoder(), None, None),
    "missing values without an imputer": (lambda: _numbers_encoder(handle_unknown="ignore"), "nan", True),
    "a string in a numeric column": (lambda: StandardScaler(), "string in numbers", True),
    "a step that quotes what it cannot handle": (lambda: FunctionTransformer(_leaky), None, True),
    "a private label outside the public classes": (lambda: PublicPreprocessor(), "label", True),
    "a private label and no public classes": (lambda: PublicPreprocessor(), "label, no classes", False),
}


def _rows(planted, change):
    X, y, X_public = planted
    X, y = X.copy(), y.copy()
    if change == "nan":
        X.loc[:9, "age"] = np.nan  # the rows that hold the markers
    if change == "string in numbers":
        X, X_public = X[["age", "income"]].astype(object), X_public[["age", "income"]].astype(object)
        X.loc[:4, "income"] = SECRET
    if change and change.startswith("label"):
        y[:3] = LABEL
    return X, y, X_public


PATE = ("PATEClassifier", "TabularPATEClassifier")


def _fails(name, configuration):
    """Whether the fit fails: the configuration's outcome, where PATE's differs (its tree teachers take NaN)."""
    expected = CONFIGURATIONS[configuration][2]
    if name in PATE and configuration == "missing values without an imputer":
        return False  # PATE's tree teachers take NaN
    if expected is None:
        return True  # refused from the configuration
    return expected


@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
@pytest.mark.parametrize("name", ESTIMATORS)
def test_no_private_value_reaches_an_error_a_warning_a_log_or_the_output(
    planted, name, configuration, capsys, caplog, error_text, request
):
    make_preprocessor, change, _ = CONFIGURATIONS[configuration]
    X, y, X_public = _rows(planted, change)
    params = {"classes": None} if change == "label, no classes" else {}
    estimator = _estimator(name, make_preprocessor(), **params)
    caplog.set_level(logging.DEBUG)
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator.fit(X, y, X_public=X_public)
            estimator.predict(X_public)
        except Exception as raised:  # noqa: BLE001 - every error is read below
            error = raised
    out, err = capsys.readouterr()
    seen = [out, err, caplog.text, *(str(w.message) for w in caught)]
    if error is not None:
        seen.append(error_text(error))
    assert_quotes_nothing("\n".join(seen))
    assert (error is not None) == _fails(name, configuration), error_text(error) if error is not None else "fitted"
    if error is not None:
        assert isinstance(error, ValueError)
    if change == "label, no classes":  # the label set is read from the private rows, and the warning says so
        assert any(w.category is PrivacyLeakWarning for w in caught)


@pytest.mark.parametrize("shape", ["a 1-d X", "a scalar X", "complex X", "complex y"])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_errors_on_the_shape_or_type_of_the_rows_keep_the_fix_and_drop_the_values(planted, name, shape, error_text):
    """scikit-learn's input checks quote the array when it is 1-d, a scalar or complex; skpate's keep their words."""
    X, y, X_public = planted
    numbers, public = X[["age", "income"]].to_numpy(), X_public[["age", "income"]].to_numpy()
    rows = {
        "a 1-d X": (numbers[:, 1], y, public[:, 1]),
        "a scalar X": (np.asarray(NUMBER), y, public),
        "complex X": (numbers + 1j, y, public),
        "complex y": (numbers, np.where(y == CLASSES[0], NUMBER + 1j, 1j), public),
    }[shape]
    with pytest.raises(ValueError, match="the values are not shown") as raised:
        _estimator(name, "passthrough" if name != "NoisyGDClassifier" else "auto").fit(*rows[:2], X_public=rows[2])
    assert_quotes_nothing(error_text(raised.value))
    if shape.endswith("X") and shape != "complex X":
        assert "Reshape your data" in str(raised.value)


def test_markers_would_be_found(planted, error_text):
    """The check itself: each marker, printed the usual ways, is caught."""
    X, _, _ = planted
    for text in (repr(X.iloc[:7]), str(X.iloc[:7].to_numpy()), repr(NUMBER), str(HUGE)):
        with pytest.raises(AssertionError):
            assert_quotes_nothing(text)
    with pytest.raises(AssertionError):
        try:
            raise ValueError("outer") from KeyError(SECRET)
        except ValueError as error:
            assert_quotes_nothing(error_text(error))
    frame = pd.DataFrame({"income": [NUMBER, HUGE]})
    with pytest.raises(AssertionError):
        assert_quotes_nothing(repr(frame) + str(frame.to_numpy()))


# ------------------------------------------------------------------------------------------------ no private refusal


def _plain(name):
    """``name`` on numeric rows, each with its own default handling of them."""
    if name in ("CellCountClassifier", "LeafRefitClassifier", "NoisyBoostingClassifier"):
        return _estimator(name, "passthrough")
    if name == "NoisyGDClassifier":
        return _estimator(name, "auto")
    if name == "PrivateModelSelection":
        return _estimator(name, "passthrough")
    if name == "PATEClassifier":
        return _estimator(name, "passthrough").set_params(student=DecisionTreeClassifier(max_depth=3))
    return _estimator(name, "passthrough" if name == "TabularPATEClassifier" else "auto")


@pytest.mark.parametrize("labels", ["one class", "a class without a row"])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_private_rows_need_not_show_every_public_class(three_class_split_small, name, labels):
    X, y, X_public = three_class_split_small
    y = np.array(CLASSES, dtype=object)[np.zeros_like(y) if labels == "one class" else np.where(y == 2, 1, y)]
    model = _plain(name)
    model.fit(X, y, X_public=X_public)
    assert list(model.classes_) == CLASSES and model.predict_proba(X_public).shape == (len(X_public), 3)


def test_pate_whose_released_labels_hold_one_class_says_so_for_a_student_that_needs_two(three_class_split_small):
    """The refusal reads only the noisy labels PATE released (post-processing, no privacy cost), and names the fix."""
    X, y, X_public = three_class_split_small
    y = np.full(len(y), CLASSES[0], dtype=object)
    with pytest.raises(ValueError, match=r"answered queries \(1 distinct labels\).*Answer more queries") as error:
        # Almost no noise: the released labels are the teachers' one class, every time.
        model = _plain("PATEClassifier").set_params(student=LogisticRegression(), aggregator=GNMax(sigma=0.5))
        model.fit(X, y, X_public=X_public)
    assert isinstance(error.value.__cause__, ValueError)  # the student's own error: on released labels only


@pytest.mark.parametrize("value", [HUGE, 1e300])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_a_huge_private_value_is_accepted(three_class_split_small, name, value, request):
    X, y, X_public = three_class_split_small
    X = X.copy()
    X[0, 0], X[1] = value, value
    y = np.array(CLASSES, dtype=object)[y]
    model = _plain(name)
    model.fit(X, y, X_public=X_public)
    # PATE's student is the user's model: predicting a query row of 1e39 is the user's business, not the fit's.
    assert np.isfinite(model.predict_proba(X_public[:3] if name in PATE else X[:3])).all()
