"""Preprocessing that costs no privacy: every statistic comes from the public rows or a public schema.

:class:`PublicPreprocessor` turns a mixed-type table (numbers, strings or
categories, missing values) into the numeric features the private learners
need. It is fitted on the public pool's features only, so it holds no private
statistic and may be published with the model. Private rows go through it
without ever raising on their values: a category the public pool never showed
becomes all zeros (it is not printed anywhere), a missing value becomes the
public median or a "missing" category, a number outside the public range
(``inf`` too) is clipped to it, and a value that is not a number in a column
the public rows hold as numbers counts as missing. Refusing such a row would
make the fit fail or succeed on a property of one private row.
"""

import datetime
import math
import numbers
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import Count

__all__ = ["PublicPreprocessor", "QuantileClipScaler"]

#: The placeholder of a missing categorical value (a category of its own).
MISSING = "__missing__"

#: The name of a categorical value that ``str()`` cannot name (its ``__str__`` raises): one category for them all.
UNPRINTABLE = "__unprintable__"


class QuantileClipScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Clip every column to the ``quantile_range`` of the rows it was fitted on, then map that range to [-1, 1].

    Fitted on public rows, it bounds every private value by public quantities,
    which is what clipped private mechanisms need. Missing values pass through.

    Parameters
    ----------
    quantile_range : tuple of (float, float), default=(0.01, 0.99)
        Lower and upper quantiles, in [0, 1].
    bounds : dict or None, default=None
        ``{column index: (low, high)}`` from a public schema, used instead of the quantiles.

    Attributes
    ----------
    low_, high_ : ndarray of shape (n_features,)
        The range of every column.
    """

    _parameter_constraints: dict = {"quantile_range": [tuple], "bounds": [dict, None]}

    def __init__(self, quantile_range=(0.01, 0.99), bounds=None):
        self.quantile_range = quantile_range
        self.bounds = bounds

    def fit(self, X, y=None):
        """Read each column's range from ``X`` (public rows) or ``bounds``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : QuantileClipScaler
        """
        self._validate_params()
        low_q, high_q = self.quantile_range
        if not 0 <= low_q < high_q <= 1:
            raise ValueError(
                f"quantile_range must be (low, high) with 0 <= low < high <= 1, got {self.quantile_range!r}."
            )
        X = self._check_rows(X, reset=True)
        with np.errstate(all="ignore"):
            low = np.nanquantile(X, low_q, axis=0) if len(X) else np.zeros(X.shape[1])
            high = np.nanquantile(X, high_q, axis=0) if len(X) else np.ones(X.shape[1])
        for column, (lo, hi) in (self.bounds or {}).items():
            low[column], high[column] = lo, hi
        self.low_ = np.where(np.isfinite(low), low, 0.0)  # a column the public rows never fill
        self.high_ = np.where(np.isfinite(high), high, 0.0)
        return self

    def _check_rows(self, X, reset):
        """Dense float rows; missing values pass (they are imputed before, or pass through), and so does ``inf``
        when transforming (it is clipped), not when fitting (the range must be finite)."""
        return validate_data(self, X, reset=reset, dtype=np.float64, ensure_all_finite="allow-nan" if reset else False)

    def transform(self, X):
        """Clip to the fitted range and map it to [-1, 1] (a constant column maps to 0).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features)
            Finite where ``X`` is not missing: ``inf`` is clipped like any value outside the range.
        """
        check_is_fitted(self, "low_")
        X = self._check_rows(X, reset=False)
        width = self.high_ - self.low_
        centre = (self.high_ + self.low_) / 2.0
        scale = np.where(width > 0, width / 2.0, 1.0)
        return (np.clip(X, self.low_, self.high_) - centre) / scale

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _column_kinds(X, schema):
    """``(numeric, categorical, kinds)``: column names (a DataFrame) or indices (an array), and for each numeric
    column its kind, ``"number"``, ``"date"`` or ``"duration"`` (:func:`_number_kind`)."""
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=None) if np.ndim(X) == 2 else [])
    numeric, kinds = [], []
    for column in frame.columns:  # an array's frame is indexed by position
        kind = _number_kind(frame[column], by_value=column not in schema)
        if kind is not None:
            numeric.append(column)
            kinds.append(kind)
    return numeric, [c for c in frame.columns if c not in numeric], kinds


def _number_kind(values, by_value=True):
    """How a column of public values is read as numbers: ``"number"``, ``"date"`` (seconds since 1970-01-01 UTC),
    ``"duration"`` (seconds), or None (a category; booleans are).

    By dtype, and by value where the dtype is ``object`` (unless ``by_value`` is False: a column of a schema keeps
    its dtype's kind): such a column whose values are all numbers, all dates or all durations is of that kind.
    Public rows passed inside ``X`` (labelled -1) share its dtypes with the private rows, and one private string in
    a column of numbers or dates makes it ``object``; read from the dtype alone, the public rows' encoding would
    then depend on one private row.
    """
    if by_value and not values.notna().any():  # no public value: the dtype may come from the private rows alone
        return "number"  # as an empty column of a CSV file reads
    if pd.api.types.is_bool_dtype(values):
        return None
    if pd.api.types.is_datetime64_any_dtype(values) or isinstance(values.dtype, pd.PeriodDtype):
        return "date"
    if pd.api.types.is_timedelta64_dtype(values):
        return "duration"
    if pd.api.types.is_numeric_dtype(values):
        return "number"
    if values.dtype != object or not by_value:
        return None
    present = values[values.notna()].tolist()
    for kind, types in _KINDS_BY_VALUE.items():
        if present and all(isinstance(v, types) and not isinstance(v, (bool, np.bool_)) for v in present):
            return kind
    return None


#: The Python values an ``object`` column of each kind holds (a ``pd.Timestamp`` is a ``datetime.datetime``, a
#: ``datetime.datetime`` a ``datetime.date``; a ``pd.Timedelta`` is a ``datetime.timedelta``).
_KINDS_BY_VALUE = {
    "number": numbers.Real,
    "date": (datetime.date, np.datetime64),
    "duration": (datetime.timedelta, np.timedelta64),
}


def _bounds(bounds, kind, column):
    """A numeric column's ``(low, high)`` from the schema, in the numbers of its ``kind`` (seconds for dates and
    durations).

    Two values with ``low < high``, finite, of the column's kind: a number for a date would be read as the dtype's
    ticks, a reversed or missing bound would map every row to one value.
    """
    fix = "two pd.Timestamp" if kind == "date" else "two pd.Timedelta" if kind == "duration" else "two numbers"
    pair = None
    if not isinstance(bounds, (str, bytes, dict)) and np.ndim(bounds) == 1 and len(bounds) == 2:
        given = pd.Series(list(bounds), dtype=object)
        if kind == "number" or not any(isinstance(b, numbers.Number) for b in bounds):
            pair = _column_numbers(given, kind).astype(np.float64).to_numpy()
    if pair is None or not np.isfinite(pair).all() or not pair[0] < pair[1]:
        raise ValueError(
            f"schema[{column!r}] must be (low, high) for a numeric column: {fix} with low < high, got {bounds!r}."
        )
    return tuple(pair)


def _numbers(X, kinds=None):
    """Columns as float64 (dates and durations as seconds, :func:`_column_numbers`): a value that is not of its
    column's kind becomes NaN (missing), ``inf`` stays. ``kinds``: one per column, all ``"number"`` by default."""
    if isinstance(X, np.ndarray) and X.dtype.kind in "biuf":
        return X.astype(np.float64)
    frame = pd.DataFrame(X)
    kinds = ["number"] * frame.shape[1] if kinds is None else kinds
    columns = [_column_numbers(frame.iloc[:, i], kind) for i, kind in enumerate(kinds)]
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in columns]) if columns else np.empty((len(frame), 0))


_EPOCH = pd.Timestamp("1970-01-01", tz="UTC")


def _column_numbers(column, kind="number"):
    """A column as numbers of its ``kind``; what is not one is NaN (missing), whatever the value.

    ``"number"``: ``pd.to_numeric``; an integer too large for a float is ``+-inf``, not an ``OverflowError`` (on a
    private row, that error would refuse the fit for one value). ``"date"``: seconds since 1970-01-01 UTC, a date
    without a time zone read as UTC (dates, strings that parse as dates, periods by their start). ``"duration"``:
    seconds. Whatever the dtype's resolution (``pd.to_numeric`` would give its integer ticks, and for ``NaT`` the
    smallest int64); a number in a date or duration column is missing, not ticks.
    """
    if kind == "number":
        if pd.api.types.is_complex_dtype(column):
            return pd.Series(np.nan, index=column.index)
        if column.dtype == object:  # numpy would keep a complex value's real part, with a warning
            column = _map_objects(lambda v: np.nan if _is_complex(v) else v, column)
        try:
            return pd.to_numeric(column, errors="coerce")
        except OverflowError:
            return column.map(_float_or_missing)
    if isinstance(column.dtype, pd.PeriodDtype):
        column = column.dt.start_time
    if column.dtype == object or pd.api.types.is_string_dtype(column):  # values of the kind, or strings to parse
        parsed = (str, *_KINDS_BY_VALUE[kind])
        column = _map_objects(lambda v: v if isinstance(v, parsed) else np.nan, column)
    if kind == "date":
        if not pd.api.types.is_datetime64_any_dtype(column):
            column = _each_or_missing(pd.to_datetime, column, errors="coerce", utc=True, format="mixed")
        elif column.dt.tz is None:
            column = column.dt.tz_localize("UTC")
        return (column - _EPOCH) / pd.Timedelta(seconds=1)
    if not pd.api.types.is_timedelta64_dtype(column):
        column = _each_or_missing(pd.to_timedelta, column, errors="coerce")
    return column / pd.Timedelta(seconds=1)


def _map_objects(func, column):
    """``func`` of each value, as an ``object`` column (``Series.map`` would infer a dtype, and a
    ``np.timedelta64`` in years makes that inference raise)."""
    return pd.Series([func(v) for v in column.tolist()], index=column.index, dtype=object)


def _is_complex(value):
    return isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real)


def _each_or_missing(convert, column, **kwargs):
    """``convert(column, **kwargs)``, or where it raises for some value (``errors="coerce"`` does not cover a
    ``np.timedelta64`` in years, say), each value converted alone and a value that fails as missing: on a private
    row, the error would refuse the fit for one value."""
    try:
        return convert(column, **kwargs)
    except (TypeError, ValueError, OverflowError):
        return convert(_map_objects(lambda v: _converts_or_missing(convert, v, kwargs), column), **kwargs)


def _converts_or_missing(convert, value, kwargs):
    try:
        convert(pd.Series([value], dtype=object), **kwargs)
    except (TypeError, ValueError, OverflowError):
        return np.nan
    return value


def _float_or_missing(value):
    try:
        return float(value)
    except OverflowError:  # an integer beyond the largest float
        return np.inf if value > 0 else -np.inf
    except (TypeError, ValueError):
        return np.nan


def _numbers_as_strings(X, columns, max_categories):
    """The columns (of the categorical ``columns`` of ``X``) whose values are all numbers written as strings and
    more distinct than ``max_categories``: encoded as categories, their rarer values would be merged."""
    flagged = []
    for column in columns:
        values = _frame(X, [column]).iloc[:, 0].dropna()
        if not pd.api.types.is_string_dtype(values) or values.nunique() <= max_categories:
            continue  # a pandas category, a boolean, or few values: categories lose nothing
        if pd.to_numeric(values.astype(str), errors="coerce").notna().all():
            flagged.append(column)
    return flagged


def _is_ordered(values):
    return isinstance(values.dtype, pd.CategoricalDtype) and values.dtype.ordered


def _public_categories(values, schema_categories=None):
    """A categorical column's categories: those of the schema (and missing), else the public rows' names, sorted, or
    for an ordered pandas categorical in its dtype's order (low, medium, high). A dtype category the public rows do
    not show stays out: the dtype may have been made from the private rows too."""
    if schema_categories is not None:
        return [_category_name(v) for v in schema_categories] + [MISSING]
    names = sorted(set(_as_strings(values.to_frame())[:, 0]))
    if _is_ordered(values):
        rank = {_category_name(c): i for i, c in enumerate(values.dtype.categories)}
        names.sort(key=lambda name: rank.get(name, len(rank)))  # missing last
    return names


def _as_strings(X):
    """Categorical columns as category names (:func:`_category_name`), missing values as :data:`MISSING` (a
    category of its own)."""
    frame = pd.DataFrame(X).astype(object)
    values = frame.where(frame.notna(), MISSING).to_numpy(dtype=object)
    return np.frompyfunc(_category_name, 1, 1)(values).astype(object).reshape(values.shape)


def _category_name(value):
    """A category's name: its string, and for a number that is an integer, that integer's digits (``"3"`` for 3,
    3.0 and ``np.int8(3)``). One missing value turns a column of integers into floats; read as ``"3.0"`` against
    the public rows' ``"3"``, every private row of the column would fall outside the public categories."""
    if type(value) is str:
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    try:
        return str(value)
    except Exception:  # an object of the user's whose __str__ fails: on a private row, one value would refuse the fit
        return UNPRINTABLE


class PublicPreprocessor(TransformerMixin, BaseEstimator):
    """Mixed-type rows to numeric features, fitted on public rows (or a public schema) only.

    Numeric columns: a value that is not a number counts as missing, missing
    values are imputed with the public median (and a missing-value indicator
    where the public rows have missing values), then every value (``inf``
    too) is clipped to the public ``quantile_range`` and mapped to [-1, 1]
    (:class:`QuantileClipScaler`); the public rows' numbers must be finite.
    Dates (``datetime64`` with or without a time zone, periods, Python
    dates) are numeric, in seconds since 1970-01-01 UTC, a date without a
    time zone read as UTC; durations (``timedelta64``, Python timedeltas) in
    seconds. A column's kind is read from the public rows (its dtype, or for
    ``object`` its values; a column they leave empty is numbers); a private
    value not of that kind, or that no conversion reads (a complex number, a
    duration in years), is missing.
    Derive calendar features (month, weekday) first where they matter.
    Other columns (strings, categories, booleans): one-hot over the
    categories seen in the public rows (at most ``max_categories`` per
    column, the rarer ones merged; a column of numbers written as strings
    with more distinct public values than that warns, as categories they
    lose their order and most merge: convert it with ``pd.to_numeric``), missing
    values a category of their own; a category the public rows never showed
    encodes as zeros, silently, so that no private value reaches a message.

    Parameters
    ----------
    schema : dict or None, default=None
        Public knowledge that overrides the public rows: ``{column: list of
        categories}`` for a categorical column, ``{column: (low, high)}`` for
        a numeric one (its clipping range; for dates and durations, two values of
        the column's kind, e.g. two ``pd.Timestamp``).
    quantile_range : tuple of (float, float), default=(0.01, 0.99)
    max_categories : int >= 2, default=30
        Most categories per categorical column; rarer public categories share one.
    encoding : {"onehot", "ordinal"}, default="onehot"
        One-hot columns (for linear models), or one column of category codes per categorical column (for
        trees; a category the public rows never showed is -1).

    Attributes
    ----------
    transformer_ : sklearn.compose.ColumnTransformer
        The fitted transformer.
    numeric_columns_, categorical_columns_ : list
        Column names (DataFrame input) or indices (array input), by dtype; a column of dtype ``object`` (not one
        of ``schema``) whose public values are all numbers is numeric.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Where the input is a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skpate.preprocessing import PublicPreprocessor
    >>> public = pd.DataFrame({"age": [30, 40, np.nan], "city": ["Paris", "Lyon", None]})
    >>> private = pd.DataFrame({"age": [25.0], "city": ["a city the public rows never showed"]})
    >>> PublicPreprocessor().fit(public).transform(private).round(2)
    array([[-1.,  0.,  0.,  0.,  0.]])
    """

    _parameter_constraints: dict = {
        "schema": [dict, None],
        "quantile_range": [tuple],
        "max_categories": [Count(2)],
        "encoding": [StrOptions({"onehot", "ordinal"})],
    }

    def __init__(self, *, schema=None, quantile_range=(0.01, 0.99), max_categories=30, encoding="onehot"):
        self.schema = schema
        self.quantile_range = quantile_range
        self.max_categories = max_categories
        self.encoding = encoding

    def fit(self, X, y=None):
        """Fit on public rows (features only).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Public rows.
        y : ignored

        Returns
        -------
        self : PublicPreprocessor
        """
        self._validate_params()
        X = self._check_rows(X, reset=True)
        schema = self.schema or {}
        numeric, categorical, kinds = _column_kinds(X, schema)
        unknown = [column for column in schema if column not in numeric + categorical]
        if unknown:
            raise ValueError(f"schema names columns that X does not have: {unknown!r}.")
        infinite = [c for c, bad in zip(numeric, np.isinf(_numbers(_frame(X, numeric), kinds)).any(axis=0)) if bad]
        if infinite:  # the public range must be finite; a private inf is clipped to it
            raise ValueError(
                f"PublicPreprocessor is fitted on public rows, and their numeric column(s) {infinite!r} hold inf or "
                "-inf: replace those values with NaN (missing) or with finite bounds."
            )
        self.numeric_columns_, self.categorical_columns_ = numeric, categorical
        written = _numbers_as_strings(X, [c for c in categorical if c not in schema], self.max_categories)
        if written:  # public rows: naming their columns is free
            warnings.warn(
                f"PublicPreprocessor: the public rows hold numbers written as strings in column(s) {written!r}, with "
                f"more distinct values than max_categories={self.max_categories}; they are encoded as categories, the "
                "rarer ones merged. Convert them to numbers first (X[column] = pd.to_numeric(X[column])) to bin them "
                "as numbers, or raise max_categories to keep them as categories.",
                UserWarning,
                stacklevel=2,
            )
        parts = []
        if numeric:
            bounds = {i: _bounds(schema[c], kinds[i], c) for i, c in enumerate(numeric) if c in schema}
            missing = _frame(X, numeric).isna().to_numpy().any()
            parts.append((
                "numeric",
                make_pipeline(
                    _Numbers(tuple(kinds)),
                    SimpleImputer(strategy="median", add_indicator=bool(missing), keep_empty_features=True),
                    _IndicatorAware(QuantileClipScaler(self.quantile_range, bounds), len(numeric)),
                ),
                numeric,
            ))  # fmt: skip
        if categorical:
            categories = "auto"  # the public rows' categories, sorted
            if any(c in schema or _is_ordered(_frame(X, [c]).iloc[:, 0]) for c in categorical):
                categories = [_public_categories(_frame(X, [c]).iloc[:, 0], schema.get(c)) for c in categorical]
            if self.encoding == "onehot":
                encoder = OneHotEncoder(
                    categories=categories, handle_unknown="infrequent_if_exist", max_categories=self.max_categories,
                    sparse_output=False, dtype=np.float64,
                )  # fmt: skip
            else:  # one column per categorical; a category the public rows never showed is -1
                encoder = OrdinalEncoder(
                    categories=categories, handle_unknown="use_encoded_value", unknown_value=-1,
                    max_categories=self.max_categories, dtype=np.float64,
                )  # fmt: skip
            parts.append(("categorical", make_pipeline(_StringCategories(), encoder), categorical))
        if not parts:
            raise ValueError("PublicPreprocessor found no columns in X.")
        if isinstance(X, pd.DataFrame):  # by position: ColumnTransformer reads integer column names as positions
            parts = [(name, step, [X.columns.get_loc(c) for c in columns]) for name, step, columns in parts]
        # Its steps pass arrays to each other whatever the global set_config(transform_output=...) says; the output
        # of this preprocessor follows it (and its own set_output).
        self.transformer_ = ColumnTransformer(parts, sparse_threshold=0.0).set_output(transform="default").fit(X)
        self._columns = list(X.columns) if isinstance(X, pd.DataFrame) else None
        return self

    def _check_rows(self, X, reset):
        """A DataFrame as is (its dtypes tell the column kinds), anything else as a dense 2-d array."""
        if isinstance(X, pd.DataFrame):
            if reset and not X.columns.is_unique:
                raise ValueError(
                    "PublicPreprocessor selects columns by name, and X has columns with the same name: rename them."
                )
            fitted = getattr(self, "_columns", None)
            if not reset and fitted is not None and list(X.columns) != fitted:  # scikit-learn checks string names only
                raise ValueError(  # the fitted names come from the public rows: naming them is free
                    f"PublicPreprocessor was fitted on the columns {fitted!r}, in that order; X has other columns or "
                    "another order. Pass X[columns] with those columns."
                )
            validate_data(self, X, reset=reset, skip_check_array=True)
            if len(X) == 0:
                raise ValueError("Found array with 0 sample(s) (shape=(0, ...)) while a minimum of 1 is required.")
            return X
        if (
            not reset
            and isinstance(getattr(self, "categorical_columns_", None), list)
            and any(isinstance(column, str) for column in self.numeric_columns_ + self.categorical_columns_)
        ):  # its columns are chosen by name
            raise ValueError(
                "PublicPreprocessor was fitted on a DataFrame and selects its columns by name; pass a DataFrame with "
                "the same columns, e.g. pd.DataFrame(X, columns=feature_names_in_)."
            )
        return validate_data(self, X, reset=reset, dtype=None, ensure_all_finite=False)  # inf: checked in fit

    def transform(self, X):
        """Encode rows (private or public) with the public statistics; never raises on a value.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features_out)
        """
        check_is_fitted(self, "transformer_")
        return self.transformer_.transform(self._check_rows(X, reset=False))

    def get_feature_names_out(self, input_features=None):
        """Names of the output features (those of the fitted ``ColumnTransformer``)."""
        check_is_fitted(self, "transformer_")
        return self.transformer_.get_feature_names_out()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        return tags


def _frame(X, columns):
    return X[columns] if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X)[:, columns])


class _Numbers(TransformerMixin, BaseEstimator):
    """Numeric columns as floats (``kinds``: :func:`_column_numbers`), a value not of its column's kind as missing,
    ``inf`` as the largest float (stateless; the kinds are read from the public rows).

    The imputer after it refuses ``inf``; the largest float is then clipped to the public range by the scaler.
    """

    def __init__(self, kinds=None):
        self.kinds = kinds

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        big = np.finfo(np.float64).max
        return np.nan_to_num(_numbers(X, self.kinds), nan=np.nan, posinf=big, neginf=-big)

    def get_feature_names_out(self, input_features=None):
        return np.asarray(input_features, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.requires_fit = False
        return tags


class _StringCategories(TransformerMixin, BaseEstimator):
    """Categorical columns as strings with missing values as a category (stateless)."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return _as_strings(X)

    def get_feature_names_out(self, input_features=None):
        return np.asarray(input_features, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.requires_fit = False
        return tags


class _IndicatorAware(TransformerMixin, BaseEstimator):
    """Scale the first ``n_values`` columns (the imputed values) and pass the missing-value indicators through."""

    def __init__(self, scaler, n_values):
        self.scaler = scaler
        self.n_values = n_values

    def fit(self, X, y=None):
        self.scaler_ = clone(self.scaler).fit(np.asarray(X)[:, : self.n_values])
        return self

    def transform(self, X):
        X = np.asarray(X, dtype=np.float64)
        return np.hstack([self.scaler_.transform(X[:, : self.n_values]), X[:, self.n_values :]])

    def get_feature_names_out(self, input_features=None):
        return np.asarray(input_features, dtype=object)
