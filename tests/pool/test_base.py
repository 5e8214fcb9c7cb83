"""What every public-pool learner shares: the public preprocessing, the private rows' guard, what a fit accepts.

Parametrized over :class:`CellCountClassifier`, :class:`NoisyGDClassifier` and :class:`LeafRefitClassifier`
(with a noisy-gradient PATE part, whose input handling is the pool's own; PATE's teachers are tested in
``tests/pate``).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, OrdinalEncoder, StandardScaler

from skpate import (
    CellCountClassifier,
    LeafRefitClassifier,
    NoisyBoostingClassifier,
    NoisyGDClassifier,
    PrivateClassifier,
    SeededNoiseWarning,
)
from skpate._validation import FLOAT32_MAX, within_float32
from skpate.pool.linear import in_unit_ball, row_norms
from skpate.preprocessing import PublicPreprocessor, QuantileClipScaler
from skpate.privacy import RDPAccountant

SECRET = "SECRET-ZIP-90210"
CLASSES = [0, 1, 2]
NAMES = ["CellCountClassifier", "NoisyGDClassifier", "LeafRefitClassifier"]
#: With the boosting: given the same public preprocessor, its input handling is theirs.
WITH_BOOSTING = [*NAMES, "NoisyBoostingClassifier"]


def make(name, preprocessor="default", **params):
    """A small fit of ``name`` with the public classes 0, 1, 2; ``preprocessor`` "default": the estimator's own."""
    params = {"classes": CLASSES, "random_state": 0, **params}
    if preprocessor != "default":
        params["preprocessor"] = preprocessor
    if name == "CellCountClassifier":
        return CellCountClassifier(n_cells=15, n_partitions=3, **params)
    if name == "NoisyGDClassifier":
        return NoisyGDClassifier(n_iter=20, **params)
    if name == "NoisyBoostingClassifier":
        return NoisyBoostingClassifier(**params)
    part = NoisyGDClassifier(preprocessor=PublicPreprocessor(), n_iter=20)  # reads DataFrames and arrays alike
    return LeafRefitClassifier(part, n_refits=2, n_estimators=5, min_samples_leaf=10, **params)


def table_encoder(**encoder):
    """The usual preprocessing of the mixed table: numbers scaled, the city one-hot."""
    return ColumnTransformer(
        [("numbers", StandardScaler(), ["age", "income"]), ("city", OneHotEncoder(**encoder), ["city"])],
        sparse_threshold=0.0,
    )


def _leaky(X):
    """A user's step that fails on a value its fit never saw, quoting it (as scikit-learn's encoders do)."""
    values = np.asarray(X, dtype=object)
    if (values == SECRET).any():
        raise ValueError(f"cannot encode {SECRET!r} in {values[:2]!r}")
    return np.asarray(values[:, :2], dtype=float)


def _warns_with_value(X):
    """A user's step that warns quoting a value of the rows, and passes the numbers through."""
    values = np.asarray(X, dtype=object)
    if (values == SECRET).any():
        warnings.warn(f"odd city {SECRET}", RuntimeWarning)
    return np.asarray(values[:, :2], dtype=float)


@pytest.fixture
def planted(mixed_split):
    """The mixed table with a city the public rows never show in five private rows."""
    X, y, X_public = mixed_split
    X = X.copy()
    X.loc[:4, "city"] = SECRET
    return X, y, X_public


# ------------------------------------------------------------------ unknown categories: the configuration decides


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "preprocessor, step",
    [
        (table_encoder(), "'city' (OneHotEncoder)"),
        (make_pipeline(table_encoder(handle_unknown="ignore"), FunctionTransformer()), None),
        (
            ColumnTransformer([("codes", OrdinalEncoder(), ["city"])], remainder="passthrough"),
            "'codes' (OrdinalEncoder)",
        ),
        (FeatureUnion([("city", ColumnTransformer([("hot", OneHotEncoder(), ["city"])]))]), "'city__hot' (OneHot"),
        (OneHotEncoder(), "preprocessor (OneHotEncoder)"),
    ],
)
def test_an_encoder_that_raises_on_an_unknown_category_is_refused_from_its_configuration(
    planted, name, preprocessor, step
):
    X, y, X_public = planted
    accountant = RDPAccountant(epsilon=10.0, delta=1e-5)
    model = make(name, preprocessor, accountant=accountant)
    if step is None:  # handle_unknown="ignore": the secret city encodes as zeros
        model.fit(X, y, X_public=X_public)
        assert accountant.n_fits == 1
        return
    with pytest.raises(ValueError, match="handle_unknown='error'") as caught:
        model.fit(X, y, X_public=X_public)
    message = str(caught.value)
    assert name in message and step in message and "PublicPreprocessor" in message
    assert ("use_encoded_value" if "Ordinal" in step else "handle_unknown='ignore' or 'infrequent_if_exist'") in message
    assert SECRET not in message
    assert accountant.n_fits == 0  # refused before any private row was read: nothing to pay


@pytest.mark.parametrize("name", NAMES)
def test_a_fitted_frozen_encoder_is_checked_too(planted, name):
    X, y, X_public = planted
    frozen = FrozenEstimator(table_encoder().fit(X_public))
    with pytest.raises(ValueError, match=r"preprocessor step 'estimator__city' \(OneHotEncoder\)"):
        make(name, frozen).fit(X, y, X_public=X_public)


# ------------------------------------------------------------------ failures and warnings on the private rows


@pytest.mark.parametrize("name", NAMES)
def test_a_failure_on_the_private_rows_names_the_estimator_and_the_fix_and_quotes_nothing(planted, name, error_text):
    X, y, X_public = planted
    accountant = RDPAccountant(epsilon=10.0, delta=1e-5)
    with pytest.raises(ValueError) as caught:
        make(name, FunctionTransformer(_leaky), accountant=accountant).fit(X, y, X_public=X_public)
    error = caught.value
    message = str(error)
    assert message.startswith(f"{name}: the preprocessor (FunctionTransformer) failed on the private rows")
    assert "it raised a ValueError" in message and "SimpleImputer" in message and "handle_unknown" in message
    assert error.__cause__ is None and error.__context__ is None  # the original (which quotes it) is gone
    assert SECRET not in error_text(error)
    assert accountant.n_fits == 1  # the failure depends on the private rows: paid for, like the fit


@pytest.mark.parametrize("name", NAMES)
def test_non_numeric_private_values_after_the_preprocessor_fail_without_being_quoted(mixed_split, name, error_text):
    X, y, X_public = mixed_split
    X, X_public = X[["age", "income"]].astype(object), X_public[["age", "income"]].astype(object)
    X.loc[3, "income"] = SECRET  # the public column holds numbers only
    with pytest.raises(ValueError, match=f"{name}: .* failed on the private rows") as caught:
        make(name, "passthrough").fit(X, y, X_public=X_public)
    assert SECRET not in error_text(caught.value)


@pytest.mark.parametrize("name", NAMES)
def test_warnings_on_the_private_rows_keep_their_category_and_lose_their_text(planted, name):
    X, y, X_public = planted
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", SeededNoiseWarning)  # the tests' seeds
        make(name, FunctionTransformer(_warns_with_value)).fit(X, y, X_public=X_public)
    relevant = [w for w in caught if w.category is RuntimeWarning]
    assert len(relevant) == 1, [str(w.message) for w in caught]  # once, whatever the number of rows
    assert "the preprocessor (FunctionTransformer) raised a RuntimeWarning on the private rows" in str(
        relevant[0].message
    )
    assert not any(SECRET in str(w.message) for w in caught)


# ------------------------------------------------------------------ what a fit accepts


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("labels", ["one class", "a class without a row"])
def test_private_rows_need_not_show_every_public_class(three_class_split_small, name, labels):
    X, y, X_public = three_class_split_small
    y = np.zeros_like(y) if labels == "one class" else np.where(y == 2, 1, y)
    model = make(name).fit(X, y, X_public=X_public)
    assert list(model.classes_) == CLASSES
    assert model.predict_proba(X_public).shape == (len(X_public), 3)
    assert set(model.predict(X_public)) <= set(CLASSES)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("value", [1e39, 1e300, -1e300])
def test_extreme_private_values_are_accepted(three_class_split_small, name, value):
    X, y, X_public = three_class_split_small
    X = X.copy()
    X[0, 0], X[1] = value, value  # one feature, and a whole row
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        warnings.simplefilter("ignore", SeededNoiseWarning)  # the tests' seeds
        model = make(name, **({"preprocessor": "passthrough"} if name == "CellCountClassifier" else {}))
        model.fit(X, y, X_public=X_public)
        proba = model.predict_proba(X[:3])
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)


def test_the_public_preprocessor_clips_inf_and_counts_a_non_number_as_missing(mixed_split):
    _, _, X_public = mixed_split
    odd, plain = X_public.iloc[:4].astype({"age": object}), X_public.iloc[:4].copy()
    odd.loc[:3, "age"] = [np.inf, -np.inf, "forty", -(10**400)]  # in a column the public rows hold as numbers
    plain.loc[:3, "age"] = [1e300, -1e300, np.nan, -1e300]  # beyond the public range both ways, and missing
    for encoding in ["onehot", "ordinal"]:
        preprocessor = PublicPreprocessor(encoding=encoding).fit(X_public)
        np.testing.assert_array_equal(preprocessor.transform(odd), preprocessor.transform(plain))
    scaler = QuantileClipScaler().fit(X_public[["age"]].to_numpy())
    np.testing.assert_allclose(scaler.transform([[np.inf], [-np.inf], [np.nan]]), [[1.0], [-1.0], [np.nan]])


def test_inf_in_the_public_rows_is_refused_naming_the_column(mixed_split):
    _, _, X_public = mixed_split
    X_public = X_public.copy()
    X_public.loc[5, "income"] = -np.inf
    with pytest.raises(ValueError, match=r"numeric column\(s\) \['income'\] hold inf or -inf: replace"):
        PublicPreprocessor().fit(X_public)
    with pytest.raises(ValueError, match=r"numeric column\(s\) \[1\] hold inf"):  # an array's columns by index
        PublicPreprocessor().fit(X_public[["age", "income"]].to_numpy())
    with pytest.raises(ValueError, match="infinity"):
        QuantileClipScaler().fit(X_public[["income"]])


def test_public_numbers_written_as_strings_warn_where_categories_would_merge_them(mixed_split):
    _, _, X_public = mixed_split
    written = X_public.assign(income=X_public["income"].round().astype(str))  # many distinct numbers, as strings
    with pytest.warns(UserWarning, match=r"numbers written as strings in column\(s\) \['income'\].*pd.to_numeric"):
        PublicPreprocessor().fit(written)
    with pytest.warns(UserWarning, match=r"column\(s\) \[1\]"):  # an array's columns by index
        PublicPreprocessor().fit(written[["city", "income"]].to_numpy(dtype=object))
    few = X_public.assign(code=np.where(X_public["age"] > 40, "1", "2"))  # two codes: categories lose nothing
    for quiet in [few, written.assign(income=pd.to_numeric(written["income"]))]:
        PublicPreprocessor().fit(quiet)  # warnings are errors in the suite
    PublicPreprocessor(max_categories=len(written)).fit(written)
    PublicPreprocessor(schema={"income": sorted(set(written["income"]))}).fit(written)


@pytest.mark.parametrize("name", WITH_BOOSTING)
def test_inf_and_non_numbers_in_the_private_rows_are_accepted(mixed_split, name):
    X, y, X_public = mixed_split
    X = X.astype({"income": object})
    X.loc[:2, "income"] = [np.inf, -np.inf, "n/a"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either
        warnings.simplefilter("ignore", SeededNoiseWarning)  # the tests' seeds
        model = make(name, PublicPreprocessor()).fit(X, y, X_public=X_public)
        proba = model.predict_proba(X[:3])  # new rows with the same values
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)


def test_an_object_column_whose_public_values_are_numbers_is_numeric(mixed_split):
    """Public rows labelled -1 share X's dtypes with the private rows, and one private string makes a column of numbers
    ``object``: the column's kind is read from the public values, so that the public encoding stays the same."""
    X, _, X_public = mixed_split
    rows = pd.concat([X, X_public], ignore_index=True)
    odd = rows.astype({"income": object})
    odd.loc[0, "income"] = "n/a"  # a private row
    public, odd_public = rows.iloc[len(X) :], odd.iloc[len(X) :]
    assert odd_public["income"].dtype == object
    fitted = [PublicPreprocessor().fit(part) for part in (public, odd_public)]
    assert fitted[1].numeric_columns_ == fitted[0].numeric_columns_ == ["age", "income"]
    np.testing.assert_array_equal(fitted[0].transform(X_public), fitted[1].transform(X_public))
    # An array of objects: column by column (numbers, strings), not every column a category.
    array = PublicPreprocessor().fit(X_public[["age", "city"]].to_numpy(dtype=object))
    assert (array.numeric_columns_, array.categorical_columns_) == ([0], [1])
    # Booleans stay categories; so does a column of a schema, as its dtype says.
    flags = PublicPreprocessor(schema={"income": ["low", "high"]}).fit(
        X_public.assign(flag=X_public["age"] > 40).astype({"flag": object, "income": object})
    )
    assert flags.categorical_columns_ == ["income", "city", "flag"]


def _times(n, seed):
    rng = np.random.default_rng(seed)
    days = pd.to_timedelta(rng.integers(0, 1000, n), unit="D")
    return pd.DataFrame({
        "when": pd.Timestamp("2020-01-01") + days,
        "zoned": pd.Timestamp("2020-01-01", tz="Europe/Paris") + days,
        "took": pd.to_timedelta(rng.integers(0, 100, n), unit="h"),
    })  # fmt: skip


def test_dates_and_durations_are_numbers_of_seconds():
    """Not categories (each date its own, the rare ones merged): seconds since 1970 UTC, seconds; NaT missing."""
    public, private = _times(300, 0), _times(5, 1)
    private.loc[0, ["when", "zoned", "took"]] = pd.NaT
    fitted = PublicPreprocessor(quantile_range=(0.0, 1.0)).fit(public)
    assert fitted.numeric_columns_ == ["when", "zoned", "took"] and fitted.categorical_columns_ == []
    # The numbers the scaler sees, by hand: a zoned date is its UTC instant (Paris in winter is UTC+1).
    expected = {
        "when": (public["when"] - pd.Timestamp("1970-01-01")).dt.total_seconds(),
        "zoned": (public["zoned"] - pd.Timestamp("1970-01-01", tz="UTC")).dt.total_seconds(),
        "took": public["took"].dt.total_seconds(),
    }
    assert expected["zoned"][0] == expected["when"][0] - 3600
    numbers = fitted.transformer_.named_transformers_["numeric"][0].transform(public)
    np.testing.assert_allclose(numbers, np.column_stack(list(expected.values())))
    encoded = fitted.transform(private)
    assert encoded.shape == (5, 3) and np.isfinite(encoded).all() and np.abs(encoded).max() <= 1.0
    same_resolution = PublicPreprocessor().fit(public.astype({"when": "datetime64[ns]", "took": "timedelta64[s]"}))
    np.testing.assert_allclose(same_resolution.transform(private), PublicPreprocessor().fit(public).transform(private))


def test_a_date_column_keeps_its_kind_and_its_private_values_whatever_their_python_type():
    """Public rows inside X share its dtypes: one private string makes a date column ``object``, and its kind is
    then read from the public values. Private dates as strings, Timestamps or ``datetime.date`` are dates; a value
    of another kind (a number, a duration, a word, a boolean) is missing, never an error."""
    public, private = _times(300, 0), _times(6, 1)
    fitted = PublicPreprocessor().fit(public)
    odd_public = PublicPreprocessor().fit(public.astype(object))  # as sliced from an X with one private string
    assert odd_public.numeric_columns_ == fitted.numeric_columns_ == ["when", "zoned", "took"]
    np.testing.assert_array_equal(odd_public.transform(public), fitted.transform(public))
    expected = fitted.transform(private)
    as_objects = private.astype(object)
    as_objects["when"] = [private["when"][0].isoformat(), private["when"][1].date(), *private["when"][2:]]
    as_objects["took"] = [str(private["took"][0]), *private["took"][1:]]
    np.testing.assert_allclose(fitted.transform(as_objects), expected)
    odd = private.astype(object)
    odd.loc[:3, "when"] = [5, pd.Timedelta(hours=1), "n/a", True]
    odd.loc[:1, "took"] = [7, pd.Timestamp("2020-01-01")]
    missing = PublicPreprocessor().fit(public.assign(when=public["when"].where(public.index > 0)))
    encoded = missing.transform(odd)
    assert np.isfinite(encoded).all()
    assert (encoded[:4, -1] == 1).all() and (encoded[4:, -1] == 0).all()  # the missing-value indicator of "when"
    # A date without a time zone is read as UTC: Paris wall-clock times without their zone are read 1 or 2 hours
    # later than they happened (winter, summer).
    wall_clock = private["zoned"].dt.tz_localize(None)
    offset = private["zoned"].map(lambda t: t.utcoffset())
    np.testing.assert_allclose(
        fitted.transform(private.assign(zoned=wall_clock))[:, 1],
        fitted.transform(private.assign(zoned=private["zoned"] + offset))[:, 1],
    )
    assert set(offset) == {pd.Timedelta(hours=1), pd.Timedelta(hours=2)}
    # Periods, and Python dates in an object column, are dates too.
    months = PublicPreprocessor().fit(pd.DataFrame({"month": public["when"].dt.to_period("M")}))
    days = PublicPreprocessor().fit(pd.DataFrame({"day": [d.date() for d in public["when"]]}))
    assert months.numeric_columns_ == ["month"] and days.numeric_columns_ == ["day"]


@pytest.mark.parametrize("encoding", ["onehot", "ordinal"])
def test_one_missing_private_value_leaves_the_other_rows_categories_alone(mixed_split, encoding):
    """A column of integer categories that one missing value turns into floats keeps its categories: read as "3.0"
    against the public rows' "3", every private row of the column would fall outside them, so one row would move
    every other row's cell."""
    X, _, X_public = mixed_split
    codes = pd.DataFrame({"code": np.arange(len(X)) % 5, "city": X["city"]})
    public = pd.DataFrame({"code": pd.Categorical(np.arange(len(X_public)) % 5), "city": X_public["city"]})
    fitted = PublicPreprocessor(encoding=encoding).fit(public)
    neighbour = codes.copy()
    neighbour.loc[0, "code"] = np.nan  # int64 -> float64
    assert neighbour["code"].dtype == np.float64
    np.testing.assert_array_equal(fitted.transform(neighbour)[1:], fitted.transform(codes)[1:])
    known = fitted.transform(codes)[:, 0] >= 0 if encoding == "ordinal" else fitted.transform(codes)[:, :5].sum(1) == 1
    assert known.all()
    # The same across dtypes: public float or string categories, private integers (or the reverse).
    for public_codes, private_codes in [
        (np.arange(len(X_public)) % 5 * 1.0, codes["code"]),
        ((np.arange(len(X_public)) % 5).astype(str), codes["code"] * 1.0),
        (pd.Categorical(np.arange(len(X_public)) % 5), codes["code"].astype(object)),
    ]:
        schema = {"code": [0, 1, 2, 3, 4]}
        for fitted_on in (public.assign(code=public_codes), public.assign(code=pd.Series(public_codes, dtype=object))):
            for given in (None, schema) if not pd.api.types.is_numeric_dtype(fitted_on["code"]) else (None,):
                encoder = PublicPreprocessor(encoding=encoding, schema=given).fit(fitted_on)
                if "code" in encoder.categorical_columns_:
                    encoded = encoder.transform(codes.assign(code=private_codes))
                    names = encoder.get_feature_names_out()
                    if encoding == "ordinal":
                        assert set(encoded[:, list(names).index("categorical__code")]) == {0, 1, 2, 3, 4}
                    else:  # each row in one of the five public categories
                        block = [
                            i for i, name in enumerate(names) if name in {f"categorical__code_{k}" for k in range(5)}
                        ]
                        assert len(block) == 5 and (encoded[:, block].sum(axis=1) == 1).all()


@pytest.mark.parametrize("names", [[2, 0, 1], [10, 20, 30], ["age", "income", "city"]], ids=str)
def test_columns_are_read_by_name_whatever_the_names(mixed_split, names):
    """Integer column names are names, not positions (scikit-learn's ColumnTransformer reads them as positions), and a
    frame with other columns or another order is refused at transform with the fitted names."""
    X, _, X_public = mixed_split
    reference = PublicPreprocessor().fit(X_public)
    renamed = PublicPreprocessor().fit(X_public.set_axis(names, axis=1))
    assert renamed.numeric_columns_ == names[:2] and renamed.categorical_columns_ == names[2:]
    np.testing.assert_array_equal(renamed.transform(X.set_axis(names, axis=1)), reference.transform(X))
    for other in (X.set_axis(names, axis=1)[names[::-1]], X.set_axis([7, 8, 9], axis=1)):
        with pytest.raises(ValueError, match="PublicPreprocessor was fitted on the columns|feature names"):
            renamed.transform(other)
    with pytest.raises(ValueError, match="columns with the same name: rename them"):
        PublicPreprocessor().fit(X_public.set_axis(["a", "a", "c"], axis=1))


def test_an_ordered_categorical_keeps_its_order_and_only_its_public_categories(mixed_split):
    X, _, X_public = mixed_split
    levels = pd.CategoricalDtype(["low", "medium", "high", "secret"], ordered=True)  # "secret": no public row
    public = pd.DataFrame({"level": pd.Series(np.array(["low", "medium", "high"])[np.arange(len(X_public)) % 3])})
    private = pd.DataFrame({"level": ["high", "low", "secret", "medium"]})
    encoder = PublicPreprocessor(encoding="ordinal").fit(public.astype(levels))
    np.testing.assert_array_equal(encoder.transform(private.astype(levels))[:, 0], [2, 0, -1, 1])
    unordered = PublicPreprocessor(encoding="ordinal").fit(public)  # strings: sorted
    np.testing.assert_array_equal(unordered.transform(private)[:, 0], [0, 1, -1, 2])


def test_a_schema_bounds_a_date_with_dates():
    public = _times(300, 0)
    bounded = PublicPreprocessor(schema={"when": ("2020-06-01", pd.Timestamp("2021-01-01"))}).fit(public)
    encoded = bounded.transform(public)[:, 0]
    inside = (public["when"] > "2020-06-01") & (public["when"] < "2021-01-01")
    assert (np.abs(encoded[inside]) < 1).all() and (np.abs(encoded[~inside]) == 1).all()
    wrong = [(0, 10**9), (pd.Timedelta(1), pd.Timedelta(2)), "2020", ("2022", "2020"), (pd.NaT, "2021"), ("2020",)]
    for bounds in wrong:  # numbers would be the dtype's ticks; reversed or missing bounds map every row to one value
        with pytest.raises(ValueError, match=r"schema\['when'\] must be \(low, high\) .* two pd.Timestamp with low <"):
            PublicPreprocessor(schema={"when": bounds}).fit(public)
    for bounds in [(9, 0), (np.nan, 1), (0, 1, 2), ["a", "b"]]:
        with pytest.raises(ValueError, match=r"schema\['took'\] must be \(low, high\) .* two pd.Timedelta"):
            PublicPreprocessor(schema={"took": bounds}).fit(public)
    numbers = pd.DataFrame({"x": np.arange(10.0)})
    for bounds in [(9, 0), (np.nan, 1), (0, 1, 2)]:
        with pytest.raises(ValueError, match=r"schema\['x'\] must be \(low, high\) .* two numbers with low < high"):
            PublicPreprocessor(schema={"x": bounds}).fit(numbers)


@pytest.mark.parametrize("name", WITH_BOOSTING)
def test_a_global_pandas_output_changes_nothing_but_the_preprocessors_own_output(mixed_split, name):
    X, y, X_public = mixed_split
    seeded = {"pate__random_state": 0} if name == "LeafRefitClassifier" else {}
    plain = make(name, PublicPreprocessor()).set_params(**seeded).fit(X, y, X_public=X_public)
    with sklearn.config_context(transform_output="pandas"):
        framed = make(name, PublicPreprocessor()).set_params(**seeded).fit(X, y, X_public=X_public)
        encoded = PublicPreprocessor().fit(X_public).transform(X)
        np.testing.assert_array_equal(framed.predict_proba(X), plain.predict_proba(X))
    assert isinstance(encoded, pd.DataFrame) and list(encoded.columns)[0] == "numeric__age"


@pytest.mark.parametrize("name", WITH_BOOSTING)
def test_public_rows_inside_x_are_encoded_alike_whatever_the_dtype_of_their_column(mixed_split, name):
    X, y, X_public = mixed_split
    rows, labels = pd.concat([X, X_public], ignore_index=True), np.r_[y, -np.ones(len(X_public), dtype=int)]
    seeded = {"pate__random_state": 0} if name == "LeafRefitClassifier" else {}
    models = [
        make(name, PublicPreprocessor()).set_params(**seeded).fit(frame, labels)
        for frame in (rows, rows.astype({"income": object}))
    ]
    np.testing.assert_array_equal(models[0].predict_proba(X_public), models[1].predict_proba(X_public))


@pytest.mark.parametrize("name", WITH_BOOSTING)
def test_a_column_the_public_rows_leave_empty_is_not_read_from_the_private_rows(mixed_split, name):
    X, y, X_public = mixed_split
    empty = X_public.assign(city=np.nan)  # how an empty column of a CSV file reads: numbers, all missing
    seeded = {"pate__random_state": 0} if name == "LeafRefitClassifier" else {}  # its part's noise too
    model = make(name, PublicPreprocessor()).set_params(**seeded).fit(X, y, X_public=empty)
    without = make(name, PublicPreprocessor()).set_params(**seeded).fit(X.assign(city=np.nan), y, X_public=empty)
    np.testing.assert_array_equal(model.predict_proba(X), without.predict_proba(X))


def test_a_column_the_public_rows_leave_empty_keeps_its_encoding_when_one_private_string_changes_its_dtype(
    mixed_split,
):
    """Public rows inside X share its dtypes: a private string makes the column of numbers ``object``; with no public
    value to read its kind from, it is an empty column of numbers either way, so the published encoding is the same."""
    X, _, X_public = mixed_split
    public = X_public.assign(income=np.nan)
    with_string = public.astype({"income": object})  # as sliced from an X whose private rows hold a string there
    fitted = [PublicPreprocessor(encoding=encoding).fit(frame) for encoding in ("onehot", "ordinal") for frame in
              (public, with_string)]  # fmt: skip
    for plain, odd in (fitted[:2], fitted[2:]):
        assert plain.numeric_columns_ == odd.numeric_columns_ == ["age", "income"]
        assert list(plain.get_feature_names_out()) == list(odd.get_feature_names_out())
        np.testing.assert_array_equal(plain.transform(X), odd.transform(X))


class _Unprintable:
    def __str__(self):
        raise RuntimeError("no name")


def test_a_private_value_no_conversion_can_read_is_missing_or_unknown_without_an_error_or_a_warning():
    """A duration in years (pandas refuses the unit), a complex number (numpy would keep its real part, with a
    warning) and an object whose ``str`` raises: on a private row each would refuse the fit, or warn, for one value."""
    public, private = _times(300, 0).assign(size=np.linspace(0, 1, 300), city="P"), _times(4, 1)
    private = private.assign(size=[0.9, 0.9, 0.9, 0.9], city=["P", "P", "P", "P"]).astype(object)
    fitted = PublicPreprocessor().fit(public)
    plain = fitted.transform(private)
    odd = private.copy()
    odd.loc[0, "took"] = np.timedelta64(1, "Y")
    odd.loc[1, "when"] = np.datetime64(1, "Y")
    odd.loc[2, "size"] = 0.9 + 3j
    odd.loc[3, "city"] = _Unprintable()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encoded = fitted.transform(odd)
    missing = fitted.transform(private.assign(took=[pd.NaT, *private["took"][1:]]))
    np.testing.assert_array_equal(encoded[0], missing[0])  # the duration in years is missing
    assert encoded[2, 3] == fitted.transform(private.assign(size=np.nan))[2, 3] != plain[2, 3]  # so is the complex
    assert encoded[3, -1] == 0 and plain[3, -1] == 1  # the object is no public category: all zeros
    assert PublicPreprocessor().fit(public.assign(city=[_Unprintable()] * 300)).categorical_columns_ == ["city"]


def test_forests_put_values_beyond_float32_where_the_end_of_its_range_goes():
    rng = np.random.default_rng(0)
    Z_public = rng.normal(size=(300, 3))
    forest = RandomForestRegressor(5, min_samples_leaf=5, random_state=0).fit(Z_public, Z_public[:, 0])
    rows = np.array([[1e39, 0.0, -1e300], [np.inf, 0.5, -np.inf], [1e6, 0.0, -1e6], [1e6, 0.5, -1e6]])
    # 1e6 is beyond every public value, so above (or below) every threshold: the same leaves, found independently.
    np.testing.assert_array_equal(forest.apply(within_float32(rows[:2])), forest.apply(rows[2:]))
    assert within_float32(rows).max() == FLOAT32_MAX and np.isnan(within_float32([[np.nan]])).all()


def test_norms_of_huge_rows_do_not_overflow():
    Z = np.array([[1e300, 1e300], [3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(row_norms(Z), [np.sqrt(2) * 1e300, 5.0, 0.0])
    import scipy.sparse as sp

    np.testing.assert_allclose(row_norms(sp.csr_matrix(Z)), row_norms(Z))
    np.testing.assert_allclose(np.linalg.norm(in_unit_ball(Z, 2.0), axis=1), [1.0, 1.0, 0.0])


def test_a_row_whose_norm_exceeds_float64_keeps_its_direction_without_a_warning():
    """Its norm overflowed with a RuntimeWarning (only for such a private row: a warning one row decides) and the
    row became 0 in the unit ball."""
    import scipy.sparse as sp

    Z = np.array([[1.5e308, -1.5e308, 1.5e308], [3.0, 4.0, 0.0]])
    assert row_norms(Z)[0] == np.inf  # without a warning: the suite's warnings are errors
    for rows in (Z, sp.csr_matrix(Z)):
        ball = in_unit_ball(rows, 2.0)
        ball = ball.toarray() if sp.issparse(ball) else ball
        np.testing.assert_allclose(ball, [[1, -1, 1] / np.sqrt(3), [0.6, 0.8, 0.0]])


@pytest.mark.parametrize("name", NAMES)
def test_a_sparse_preprocessor_output_is_accepted(mixed_split, name):
    X, y, X_public = mixed_split
    sparse = table_encoder(handle_unknown="ignore").set_params(sparse_threshold=1.0)
    assert hasattr(sparse.fit_transform(X_public), "tocsr")  # the preprocessor does output a sparse matrix
    model = make(name, sparse).fit(X, y, X_public=X_public)
    np.testing.assert_allclose(model.export_model().predict_proba(X), model.predict_proba(X))
    assert model.score(X, y) > 0.5  # three classes: above chance
    if name == "NoisyGDClassifier":  # the same steps as on the dense output (k-means and trees split sparse rows
        # by other code paths, so their partitions differ)
        dense = make(name, table_encoder(handle_unknown="ignore", sparse_output=False)).fit(X, y, X_public=X_public)
        np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-9, atol=1e-9)


def test_an_error_about_the_public_rows_names_both_ways_of_passing_them(mixed_split):
    X, y, X_public = mixed_split
    X, X_public = X[["age", "income"]], X_public[["age", "income"]].copy()
    X_public.iloc[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"the public rows \(X_public, or the rows of X labeled -1\)"):
        NoisyGDClassifier(classes=CLASSES, preprocessor="passthrough").fit(X, y, X_public=X_public)


def test_a_pool_part_of_the_refit_is_checked_before_the_budget_is_charged(planted):
    X, y, X_public = planted
    accountant = RDPAccountant(epsilon=10.0, delta=1e-5)
    model = make("LeafRefitClassifier", PublicPreprocessor(), accountant=accountant)
    model.set_params(pate__preprocessor=table_encoder())
    with pytest.raises(ValueError, match=r"LeafRefitClassifier: pate__preprocessor step 'city' \(OneHotEncoder\)"):
        model.fit(X, y, X_public=X_public)
    assert accountant.n_fits == 0


def test_a_preprocessor_fitted_on_a_dataframe_asks_for_one(mixed_split):
    _, _, X_public = mixed_split
    preprocessor = PublicPreprocessor().fit(X_public)
    with pytest.raises(ValueError, match=r"fitted on a DataFrame .* pd.DataFrame\(X, columns=feature_names_in_\)"):
        preprocessor.transform(X_public.to_numpy())
    np.testing.assert_array_equal(
        preprocessor.transform(pd.DataFrame(X_public.to_numpy(), columns=preprocessor.feature_names_in_)),
        preprocessor.transform(X_public),
    )


def _dummies(frame):
    """A user's encoding whose width depends on the rows it encodes (one column per category they hold)."""
    return pd.get_dummies(frame, columns=["city"], dtype=float).to_numpy(dtype=float)


@pytest.mark.parametrize("name", [*WITH_BOOSTING, "PrivateClassifier"])
def test_a_preprocessor_whose_width_follows_the_rows_is_refused_without_the_private_width(mixed_split, name):
    X, y, X_public = mixed_split
    X = X.copy()
    X.loc[0, "city"] = SECRET  # one more column of dummies on the private rows
    dummies = FunctionTransformer(_dummies)
    estimator = PrivateClassifier(classes=CLASSES, preprocessor=dummies) if name == "PrivateClassifier" else None
    estimator = estimator or make(name, dummies)
    with pytest.raises(ValueError, match="another number of columns than the public rows") as refused:
        estimator.fit(X, y, X_public=X_public)
    assert not any(str(width) in str(refused.value) for width in (5, 6)) and SECRET not in str(refused.value)
