"""Validation shared by every layer (the estimators, the aggregators, the accounting engine, audit, plots).

The bottom of the package: it imports nothing from skpate but its exceptions, so any module can use it.
"""

import contextvars
import functools
import numbers
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _get_feature_names, _num_samples, check_array, column_or_1d

from .exceptions import PrivacyLeakWarning, SeededNoiseWarning

__all__ = [
    "check_classes",
    "check_delta_for_rows",
    "check_generator",
    "check_handles_unknown",
    "check_noise_generator",
    "check_positive",
    "fit_in_noise_scope",
    "check_votes",
    "in_caller_noise_scope",
    "final_step",
    "fit_public_preprocessor",
    "is_semi_supervised",
    "label_dtype",
    "noise_scope",
    "on_private_rows",
    "public_rows",
    "split_private_public",
    "transform_private",
    "unlabeled_mask",
]


def check_generator(random_state):
    """Turn ``random_state`` into a ``numpy.random.Generator``.

    ``None``: fresh OS entropy; int: seeded; ``Generator``: used as is;
    legacy ``RandomState``: seeds a new ``Generator`` from it (so that the
    estimator's sklearn-style ``random_state`` works here too).
    """
    if random_state is None or isinstance(random_state, (numbers.Integral, np.integer)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32 - 1, size=4))
    raise ValueError(f"random_state must be None, an int, a numpy Generator or RandomState, got {random_state!r}.")


#: The private fit or release running in this context (thread, task): None outside one, else whether its outermost
#: call was given a seed ("seeded") or draws from OS entropy ("secure"). Nested fits (a selection's candidates, a
#: refit's PATE part, the aggregator a PATEClassifier calls) read it: they neither warn again nor, under a secure
#: outermost call, draw from the seeds the outer call derived for them.
_NOISE_SCOPE = contextvars.ContextVar("skpate_noise_scope", default=None)


def _is_seed(random_state):
    """Whether ``random_state`` makes the draws reproducible: an int, a RandomState or a Generator."""
    return isinstance(random_state, (numbers.Integral, np.integer, np.random.RandomState, np.random.Generator))


@contextmanager
def noise_scope(random_state, name, *, warn=True, stacklevel=1):
    """Run a private fit or release; the outermost one warns (:class:`SeededNoiseWarning`) if it is seeded.

    Nested scopes (a fit inside a fit, an aggregator called by an estimator) do nothing: the warning comes
    once per top-level call. ``warn=False`` opens a scope without the warning (:func:`skpate.audit.audit`, a test
    tool). ``stacklevel`` as in ``warnings.warn``, counted from the function that enters the scope.
    """
    if _NOISE_SCOPE.get() is not None:
        yield
        return
    seeded = _is_seed(random_state)
    if warn and seeded:
        warnings.warn(
            f"{name} draws its noise from random_state={random_state!r}: the differential-privacy guarantee assumes "
            "the noise is secret, and anyone who knows the seed can regenerate the noise and remove it from what "
            "was released. Use random_state=None (fresh OS entropy) for anything you publish; to silence this "
            'warning in experiments and tests: warnings.filterwarnings("ignore", category=skpate.SeededNoiseWarning).',
            SeededNoiseWarning,
            stacklevel=stacklevel + 2,  # this generator and contextlib's __enter__
        )
    token = _NOISE_SCOPE.set("seeded" if seeded else "secure")
    try:
        yield
    finally:
        _NOISE_SCOPE.reset(token)


def fit_in_noise_scope(fit):
    """Decorate a private estimator's ``fit``: it runs in a :func:`noise_scope` of the estimator's ``random_state``.

    The outermost private fit warns once (:class:`SeededNoiseWarning`, pointing at the caller) if it is seeded;
    fits nested in it (a selection's candidates, a refit's PATE part) do not, and under an unseeded outermost fit
    they draw from OS entropy (:func:`check_noise_generator`). A fit that raises leaves the estimator's attributes
    as they were before it. ``PrivateClassifierMixin`` applies it to the ``fit`` of every subclass.
    """

    @functools.wraps(fit)
    def fit_in_scope(self, *args, **kwargs):
        outer = _OUTER_FIT.set(self) if _OUTER_FIT.get() is None else None
        before = dict(vars(self))
        try:
            with noise_scope(getattr(self, "random_state", None), type(self).__name__, stacklevel=2):
                return fit(self, *args, **kwargs)
        except BaseException:
            # A failed fit leaves the estimator as it was, not half-fitted (a model without its privacy_spent_,
            # or beside an earlier fit's attributes).
            vars(self).clear()
            vars(self).update(before)
            raise
        finally:
            if outer is not None:
                _OUTER_FIT.reset(outer)

    fit_in_scope._skpate_noise_scope = True
    return fit_in_scope


#: The outermost private fit running in this context: the one that speaks to the user (a nested candidate's
#: fit does not repeat its warnings).
_OUTER_FIT = contextvars.ContextVar("skpate_outer_fit", default=None)


def in_caller_noise_scope(func):
    """``func`` made to run, in a joblib worker (a thread or another process), inside the caller's noise scope.

    A worker does not see the caller's context variables: a candidate fitted there would be an outermost fit,
    warning again for its derived seed and, under an unseeded caller, free to draw from that seed. The returned
    callable (picklable if ``func`` is) carries the caller's scope ("seeded", "secure" or none) and whether a fit
    encloses the call, and sets them around ``func`` in the worker.
    """
    return _InNoiseScope(func, _NOISE_SCOPE.get(), _OUTER_FIT.get() is not None)


class _InNoiseScope:
    def __init__(self, func, scope, nested):
        self.func, self.scope, self.nested = func, scope, nested

    def __call__(self, *args, **kwargs):
        scope = _NOISE_SCOPE.set(self.scope)
        outer = _OUTER_FIT.set(_ENCLOSING_FIT if self.nested else None)
        try:
            return self.func(*args, **kwargs)
        finally:  # a pool thread runs many tasks: its own context comes back
            _OUTER_FIT.reset(outer)
            _NOISE_SCOPE.reset(scope)


#: Stands for the caller's outermost fit in a worker, where that estimator is not at hand.
_ENCLOSING_FIT = object()


def check_delta_for_rows(estimator, n_private, neighboring="replace-one"):
    """Warn (:class:`PrivacyLeakWarning`) if ``estimator.delta >= 1 / n_private``, once, from the outermost fit.

    ``(epsilon, delta)``-DP with ``delta >= 1/n`` allows publishing one private row in full (each with probability
    ``delta``: Dwork & Roth 2014, Sec. 2.3), so ``delta`` should be well below ``1/n``. Under add/remove (or PATE's
    ``"groups"``) ``neighboring`` the number of private rows is private, and whether the warning
    appears would depend on it (it does for a ``delta`` between ``1/(n+1)`` and ``1/n``): no warning then; the
    parameter's documentation asks for ``delta`` below ``1/n``.
    """
    delta = getattr(estimator, "delta", None)
    outermost = _OUTER_FIT.get() in (None, estimator)
    if outermost and neighboring == "replace-one" and delta is not None and n_private > 0 and delta >= 1.0 / n_private:
        warnings.warn(
            f"delta={delta:g} is at least 1/n, n the number of private rows: (epsilon, delta)-DP with such a delta "
            "allows a mechanism that publishes a whole private row. Use delta well below 1/n, e.g. 1e-5 or 1/n^2.",
            PrivacyLeakWarning,
            stacklevel=4,
        )


def check_noise_generator(random_state):
    """The generator of a private estimator's fit: :func:`check_generator`, or OS entropy under a secure caller.

    Inside the fit of an outer estimator with ``random_state=None`` (a :func:`noise_scope` that is not seeded),
    the estimator's own ``random_state`` (a seed the outer fit derived, or one its template carried) is ignored:
    every privacy-relevant draw of the fit comes from fresh OS entropy, never from a seed stored in a parameter.
    """
    if _NOISE_SCOPE.get() == "secure":
        if random_state is not None and not _is_seed(random_state):
            check_generator(random_state)  # its error, for an invalid value (a valid one is not drawn from)
        return np.random.default_rng()
    return check_generator(random_state)


def check_votes(votes):
    """Validate a vote histogram; return it as an int64 array.

    Raises ``ValueError`` unless ``votes`` is a 2-d array of finite,
    non-negative integers, with at least one query and two classes, whose rows
    all sum to the same number of teachers, below ``2**53`` (above it, int64
    sums and float conversions lose exactness). No message quotes a count.
    """
    arr = np.asarray(votes)
    if arr.ndim != 2:
        raise ValueError(f"votes must be a 2-d array (n_queries, n_classes), got shape {arr.shape}.")
    if arr.shape[0] == 0:
        raise ValueError("votes must hold at least one query (row); got 0 rows.")
    if arr.shape[1] < 2:
        raise ValueError(f"votes must have at least 2 classes (columns), got {arr.shape[1]}.")
    if arr.dtype.kind not in "iub":
        if arr.dtype.kind != "f":
            raise ValueError(f"votes must hold integer counts, got dtype {arr.dtype}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError("votes must be finite counts; found NaN or inf.")
        if not np.all(arr == np.round(arr)):
            raise ValueError("votes must be integer counts of teachers; found non-integer values.")
    if np.any(arr < 0):  # before the cast: a huge unsigned or float count must not wrap to a negative one
        raise ValueError("votes must be non-negative counts; found a negative value.")
    # Each count, then each row sum (exact in float64 below 2**53, and at least 2**53 above: counts are >= 0).
    if np.any(arr >= 2**53) or np.any(arr.sum(axis=1, dtype=np.float64) >= 2**53):
        raise ValueError(
            "votes must count teachers: every count and row sum must be below 2**53, beyond which the analysis "
            "overflows or loses exactness; pass the vote histograms (n_queries, n_classes), not scaled values."
        )
    arr = arr.astype(np.int64)
    sums = arr.sum(axis=1)
    if np.any(sums != sums[0]):
        raise ValueError(
            "every row of votes must sum to the same number of teachers (each teacher votes once per query); "
            "np.unique(votes.sum(axis=1)) lists the row sums (this message does not: votes are private)."
        )
    if sums[0] == 0:
        raise ValueError("votes rows sum to 0: no teacher voted.")
    return arr


def as_float64(value):
    """``value`` in float64 (a float, or an array of them): a noise parameter given as ``np.float16(300)`` would
    have its cost computed in float16, where ``2 / 300^2`` underflows to 0, a free mechanism."""
    value = np.asarray(value, dtype=np.float64)
    return float(value) if value.ndim == 0 else value


def check_positive(name, value):
    """``value`` as a float if it is a finite real number > 0; else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(float(value)) or value <= 0:
        raise ValueError(f"{name} must be a finite float > 0, got {value!r}.")
    return float(value)


def check_positive_int(name, value, what="", minimum=1):
    """``value`` if it is an integer >= ``minimum`` (not a bool); else a ValueError naming ``name`` (and ``what``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ValueError(f"{name} must be {kind}{what}, got {value!r}.")
    return int(value)  # a Python int: numpy's small integers wrap around in the arithmetic of a cost


def check_rows(X, allow_empty=False):
    """Light validation of an estimator's input rows.

    DataFrames pass through untouched (pipelines may select columns by
    name); arrays are checked for shape, emptiness (unless ``allow_empty``)
    and complex data, and finiteness is left to the wrapped estimators.
    """
    if hasattr(X, "iloc"):
        return X
    return values_not_quoted(
        check_array, X, accept_sparse=["csr", "csc"], dtype=None, ensure_all_finite=False, allow_nd=True,
        ensure_min_samples=0 if allow_empty else 1,
    )  # fmt: skip


def values_not_quoted(check, *args, **kwargs):
    """``check(*args, **kwargs)``, a scikit-learn input check, with its errors' words but not the values they quote.

    ``check_array`` quotes the array when it is 1-d, a scalar or complex; the rows may be private, so such a
    message keeps the problem and its fix ("Reshape your data ...") and drops the values, and the new error
    carries no trace of the original (raised outside the except block: no ``__context__``).
    """
    message = None
    try:
        return check(*args, **kwargs)
    except ValueError as error:
        lines = str(error).strip().split("\n")
        if not lines[0].startswith(("Expected 2D array", "Complex data not supported")):
            raise
        hint = [line for line in lines[1:] if line.startswith("Reshape your data")]
        message = " ".join([lines[0].rstrip(":") + " (the values are not shown, as they may be private).", *hint])
    raise ValueError(message)


def final_step(estimator):
    """The last step of a pipeline, or the estimator itself."""
    return estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator


def is_semi_supervised(estimator):
    """Whether ``estimator`` learns from rows labeled -1 (sklearn.semi_supervised, skpate's, VAT nets)."""
    final = final_step(estimator)
    return bool(getattr(final, "_skpate_semi_supervised", False)) or type(final).__module__.startswith(
        "sklearn.semi_supervised"
    )


def label_dtype(classes):
    """A dtype for labels that also holds -1 (no label): unsigned and string labels do not."""
    if classes.dtype.kind in "if":
        return classes.dtype
    return np.int64 if classes.dtype.kind in "ub" else object


def unlabeled_mask(y):
    """Rows labeled -1 (scikit-learn's semi-supervised convention); string labels cannot hold -1."""
    y = np.asarray(y)
    return np.zeros(y.shape[0], dtype=bool) if y.dtype.kind in "USb" else np.asarray(y == -1, dtype=bool)


def marks_public(classes):
    """Whether a label ``-1`` marks a public row: unless ``-1`` is one of ``classes`` (None: sklearn's convention)."""
    return classes is None or not np.any(np.asarray(classes, dtype=object) == -1)


def public_rows(y, classes):
    """Rows of ``y`` that are public (unlabeled): labeled ``-1``, where ``-1`` is not a class (:func:`marks_public`)."""
    if not marks_public(classes):
        return np.zeros(_num_samples(y), dtype=bool)
    return unlabeled_mask(y)


def split_private_public(X, y, X_public, classes, name, neighboring="replace-one"):
    """The private rows and their labels, and the public rows: the one row split of every estimator.

    Public rows come either as ``X_public`` or as rows of ``X`` labeled ``-1`` (:func:`public_rows`), never
    both. Errors name the estimator ``name`` and the fix, and quote no label. Under ``neighboring="add-remove"``
    with public ``classes``, no private rows at all is a dataset like any other: it is the neighbour of a
    dataset of one row, and refusing one but not the other would tell them apart; so with ``"groups"`` (PATE's).

    Returns
    -------
    X_private, y_private, X_public
    """
    if y is None:
        raise ValueError(
            f"{name} requires y to be passed, but the target y is None: label the private rows "
            "and mark public rows with -1 (or pass X_public)."
        )
    empty_ok = neighboring != "replace-one" and classes is not None
    X = check_rows(X, allow_empty=empty_ok)
    for rows in (X, X_public):  # a frame's column names of mixed types are refused here, before the budget
        if rows is not None:
            _get_feature_names(rows)
    labels = np.asarray(y)
    if (labels.dtype.kind in "fc" and not np.isfinite(labels).all()) or (
        labels.dtype.kind not in "fc" and np.any(pd.isna(np.asarray(y, dtype=object)))
    ):  # scikit-learn's own check raises "boolean value of NA is ambiguous" on None or NA, and names no fix for NaN
        raise ValueError(
            "Input y contains missing or infinite labels (None, NaN, NA or inf); give every private row one of the "
            "classes, and mark public rows -1 or pass them as X_public."
        )
    y = values_not_quoted(
        lambda: check_array(
            column_or_1d(y, warn=True), ensure_2d=False, dtype=None, input_name="y", ensure_min_samples=0
        )
    )  # an empty y is refused below (no private rows), or with X's emptiness by check_rows
    if _num_samples(X) != y.shape[0]:  # no counts: the number of private rows is private under add/remove
        raise ValueError("X and y have inconsistent numbers of samples: give one label per row of X.")
    public = public_rows(y, classes)
    private_idx = np.flatnonzero(~public)
    if private_idx.size == 0 and not empty_ok:
        raise ValueError(f"no private rows: every label is -1; {name} learns from labeled private rows.")
    y_private = y[private_idx]
    if classes is None:  # the label set, and so its type, comes from the private labels (with a warning, later)
        check_classification_targets(y_private)
    else:  # from the public classes: read from the private labels, one label 0.5 would refuse the fit
        check_label_type(classes)
    if classes is None and np.unique(y_private).size < 2:  # the label set would be read from these rows
        raise ValueError(
            f"the private rows hold only one class; a classifier needs at least 2. Pass {name}(classes=...) "
            "from public knowledge (if -1 is a class label, include it in classes and pass X_public)."
        )
    if X_public is not None:
        if public.any():
            raise ValueError(
                "public rows were given twice: as X_public and as rows of X with y == -1; use one of the two (if -1 "
                "is a class label, include it in classes=[...])."
            )
        X_pub = X_public if _num_samples(X_public) == 0 else check_rows(X_public)  # empty: error below
        if hasattr(X, "shape") and hasattr(X_pub, "shape") and X_pub.shape[1:] != X.shape[1:]:
            raise ValueError(  # the features only: X's number of rows is private under add/remove
                f"X_public must have the features of X: {X_pub.shape[1:]} vs {X.shape[1:]} (features...)."
            )
        check_same_columns(X, X_pub)
    else:
        X_pub = _safe_indexing(X, np.flatnonzero(public))
    if _num_samples(X_pub) == 0:
        fix = "pass X_public or mark public rows of X with y == -1"
        if not marks_public(classes):
            fix = "pass X_public (-1 is one of classes, so it labels a class here, not a public row)"
        raise ValueError(f"no public rows: {name} learns from a public, unlabeled pool; {fix}.")
    return _safe_indexing(X, private_idx), y_private, X_pub


def check_same_columns(X, X_public):
    """Refuse an ``X_public`` whose columns are not those of ``X``, by name and in order, with the fix.

    Both must be DataFrames or neither: a step fitted on the public rows (the public preprocessor, a
    ``ColumnTransformer``) selects columns by name or by position, and would read the wrong ones from the
    private rows. The columns of ``X`` are its schema, not its rows; the message names none of them anyway.
    """
    frames = hasattr(X, "columns"), hasattr(X_public, "columns")
    if frames[0] != frames[1]:
        which = "X is a DataFrame and X_public is not" if frames[0] else "X_public is a DataFrame and X is not"
        raise ValueError(
            f"X and X_public must both be DataFrames with the same columns, or both arrays; {which}. Convert one, "
            "e.g. X_public = pd.DataFrame(X_public, columns=X.columns)."
        )
    if frames[0] and list(X.columns) != list(X_public.columns):
        raise ValueError(
            "X_public must have the columns of X, with the same names in the same order; select them with "
            "X_public[X.columns]."
        )


def check_label_type(classes):
    """Refuse public ``classes`` that scikit-learn would not take as class labels (e.g. ``[0, 0.5, 1]``: continuous).

    The type of the labels is read from ``classes`` where they are given, never from the private labels, so that
    whether a fit is refused does not depend on one private label; labels outside ``classes`` are refused by
    :func:`check_classes`, as outside the declared domain. Missing labels, and strings mixed with numbers (which
    numpy would silently turn into strings: ``["a", "b", 3]`` holds ``"3"``, not 3), are refused too.
    """
    if isinstance(classes, (set, frozenset, dict, str)):  # numpy makes a set one object
        raise ValueError(f"classes={classes!r} must be a list or array of labels, e.g. ['a', 'b'] or [0, 1].")
    values = list(classes) if np.ndim(classes) == 1 else []
    if any(np.ndim(v) == 0 and pd.isna(v) for v in values) or len({isinstance(v, str) for v in values}) > 1:
        raise ValueError(
            f"classes={values!r} must be labels of one type, all strings or all numbers, none missing; pass e.g. "
            "['a', 'b'] or [0, 1], and label the private rows with them."
        )
    try:
        check_classification_targets(np.asarray(classes))
    except ValueError as error:
        raise ValueError(
            f"classes={np.asarray(classes).tolist()!r} are not class labels ({error}) Pass discrete labels, e.g. "
            "integers or strings, and label the private rows with them."
        ) from None


def check_classes(classes, y_private, name, stacklevel=3):
    """The label set, sorted: the public ``classes``, else the private labels with a :class:`PrivacyLeakWarning`.

    Every estimator resolves a missing ``classes`` this way. Errors name ``name`` and quote no private label.
    """
    if classes is None:
        warnings.warn(
            f"classes were not given, so {name} takes them from the private labels: which labels occur in the "
            "private data is then published (a record with a new label adds a class the model can output). Pass "
            f"{name}(classes=...) from public knowledge to silence this warning.",
            PrivacyLeakWarning,
            stacklevel=stacklevel + 1,
        )
        return np.unique(y_private)
    classes = np.asarray(classes)
    if classes.ndim != 1 or np.unique(classes).size != classes.size or classes.size < 2:
        raise ValueError(f"classes must be a 1-d list of at least 2 distinct labels, got {classes.tolist()!r}.")
    try:
        outside = np.setdiff1d(np.unique(y_private), classes).size > 0
    except TypeError:  # labels of mixed types (numbers and strings) do not sort, and some of them are not classes
        outside = True
    if outside:
        raise ValueError(
            "y holds labels that are not in classes; add them to classes or relabel those rows "
            "(np.setdiff1d(y, classes) lists them; this message does not, as they are private labels)."
        )
    return np.sort(classes)


#: What makes a step fail on rows it was not fitted on, and the fixes; a guarded error gives these instead of its text.
PRIVATE_ROWS_FIX = (
    "Make every step accept any value a private row may hold: impute missing values (e.g. SimpleImputer), encode "
    "every non-numeric column, encode categories with handle_unknown='ignore' or 'infrequent_if_exist' (or use "
    "skpate.preprocessing.PublicPreprocessor, fitted on public rows only, which never raises on a value), and clip "
    "or scale extreme values (e.g. skpate.preprocessing.QuantileClipScaler)."
)


def on_private_rows(name, what, func, *args, fix=PRIVATE_ROWS_FIX, stacklevel=2, **kwargs):
    """``func(*args, **kwargs)``, a step that reads private rows, with errors and warnings that quote none of them.

    An exception (but ``MemoryError``) becomes a ``ValueError`` that names the estimator ``name`` and the step
    ``what``, says it happened on the private rows, gives the original exception's type and ``fix``, and
    carries neither the original's text nor the original itself (no ``__cause__``, no ``__context__``: a
    traceback or a logger would print its message, and its message may quote a private value, such as an
    unknown category). Warnings raised by the step are re-emitted once per category without their text,
    except skpate's own (whose texts quote no data). Both depend on the private rows, so call this inside the
    accounted block of a fit (:func:`skpate.base.charged`): the failure is paid for like the fit.

    Parameters
    ----------
    name : str
        The estimator, for the messages.
    what : str
        The step, e.g. ``"the preprocessor's transform"``.
    func : callable
    *args, **kwargs
        Passed to ``func``.
    fix : str, default=PRIVATE_ROWS_FIX
        What the user can change.
    stacklevel : int, default=2
        Of the re-emitted warnings, as in ``warnings.warn`` called where this function is called.

    Returns
    -------
    result
        What ``func`` returned.
    """
    failure = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = func(*args, **kwargs)
        except MemoryError:
            raise
        except Exception as error:  # noqa: BLE001 - every error of a step on private rows is sanitized
            failure = type(error).__name__  # the name only: the error (and what it holds) is dropped here
    _reemit_sanitized(caught, name, what, stacklevel + 1)
    if failure is not None:  # raised outside the except block, so that the original is not its __context__
        raise ValueError(
            f"{name}: {what} failed on the private rows (it raised a {failure}; its message is not shown, as it may "
            f"quote a private value). {fix}"
        ) from None
    return result


def transform_private(transformer, X, name, what=None, width=None):
    """``transformer.transform(X)`` on private rows ``X``, guarded by :func:`on_private_rows`.

    With ``width`` (the number of columns the public rows came out with), an output of another width is refused:
    a transformer whose output depends on the rows it transforms (``pd.get_dummies``, say) would put the private
    rows' values in the wrong columns. The message gives no width, as the private one is a private statistic.

    Parameters
    ----------
    transformer : fitted transformer
        Fitted on public rows (or a public schema).
    X : {array-like, sparse matrix, DataFrame}
        Private rows.
    name : str
        The estimator, for the messages.
    what : str, default=None
        The step; None: the transformer's class name.
    width : int, default=None
        The number of columns of the public rows' output; None: not checked. With it, no rows come out as an
        empty ``(0, width)`` array.

    Returns
    -------
    Z : {ndarray, sparse matrix}
    """
    what = f"the preprocessor ({type(transformer).__name__})" if what is None else what
    if width is not None and _num_samples(X) == 0:  # no private rows (add/remove): scikit-learn's steps refuse 0 rows
        return np.empty((0, width))
    Z = on_private_rows(name, what, transformer.transform, X, stacklevel=3)
    if width is not None and (np.ndim(Z) != 2 or np.shape(Z)[1] != width):
        raise ValueError(
            f"{name}: {what} gave the private rows another number of columns than the public rows: its output "
            "depends on the rows it transforms (as pd.get_dummies' does), so the model would read the wrong columns. "
            "Use a transformer fitted on the public rows, whose output has a fixed width: "
            "skpate.preprocessing.PublicPreprocessor, or OneHotEncoder(handle_unknown='ignore')."
        )
    return Z


#: Where the public rows come from, for the messages about them (the user passed one or the other).
PUBLIC_ROWS = "the public rows (X_public, or the rows of X labeled -1)"


def fit_public_preprocessor(preprocessor, X_public, name="the estimator"):
    """``preprocessor`` (or "passthrough") fitted on the public rows only, and the public rows through it.

    A fitted ``FrozenEstimator`` is used as is (its ``fit`` is a no-op). A step that would raise on an unknown
    category is refused first (:func:`~skpate._validation.check_handles_unknown`, from the configuration alone); a
    failure on the public rows is a ``ValueError`` (a ``TypeError`` if it was one) that names ``preprocessor=`` and
    the fix (it may quote the public rows, never a private one).

    Returns
    -------
    preprocessor : fitted transformer or None
    Z_public : {array-like, sparse matrix, DataFrame}
    """
    if isinstance(preprocessor, str):
        return None, X_public
    check_handles_unknown(preprocessor, name)
    try:
        preprocessor = clone(preprocessor).fit(X_public, None)
        return preprocessor, preprocessor.transform(X_public)
    except (ValueError, TypeError) as error:  # the same type (scikit-learn's checks expect a TypeError for a dict)
        raise (TypeError if isinstance(error, TypeError) else ValueError)(
            f"{name}'s preprocessor ({type(preprocessor).__name__}) failed on {PUBLIC_ROWS}: {error} Pass a "
            "preprocessor= that encodes them, e.g. make_pipeline(PublicPreprocessor(), StandardScaler()) for "
            "columns of strings, categories or missing values."
        ) from error


def _is_skpates(category):
    """Whether a warning category is skpate's own, whose texts quote no data."""
    return category.__module__.split(".")[0] == "skpate"


def sanitized_records(caught):
    """``caught`` warnings as picklable ``(category, text)`` pairs, the text kept for skpate's own only: what a
    joblib worker that ran a step on private rows returns, for :func:`reemit_sanitized` in the caller."""
    return [(record.category, str(record.message) if _is_skpates(record.category) else "") for record in caught]


def reemit_sanitized(records, name, what, stacklevel=2):
    """Warn again, in the caller, with the ``(category, text)`` pairs of :func:`sanitized_records` (once per
    category, their texts replaced; skpate's own pass as is, in their own category)."""
    caught = [
        warnings.WarningMessage(category(text) if _is_skpates(category) else text, category, "", 0)
        for category, text in records
    ]
    _reemit_sanitized(caught, name, what, stacklevel + 1)


def _reemit_sanitized(caught, name, what, stacklevel):
    """Warn again with the categories of ``caught`` (once each), their texts replaced; skpate's own pass as is."""
    seen = set()
    for record in caught:
        category = record.category
        if _is_skpates(category):
            warnings.warn(record.message, stacklevel=stacklevel + 1)
            continue
        if category in seen:
            continue
        seen.add(category)
        text = (
            f"{name}: {what} raised a {category.__name__} on the private rows; its text is not shown, as it may "
            "quote a private value."
        )
        try:
            warnings.warn(text, category, stacklevel=stacklevel + 1)
        except TypeError:  # a warning class that cannot be built from one string
            warnings.warn(text, UserWarning, stacklevel=stacklevel + 1)


def check_handles_unknown(transformer, name, param="preprocessor", fitted_on="public"):
    """Refuse a transformer with a step that raises on an unknown category: decided from its parameters alone.

    A step fitted on public rows with ``handle_unknown="error"`` (scikit-learn's default for ``OneHotEncoder``
    and ``OrdinalEncoder``) raises on the first private category the public rows never showed, and its message
    quotes the category. Whether a private row holds one is private, so the refusal comes first, from the
    configuration (every step nested in a ``Pipeline``, ``ColumnTransformer``, ``FeatureUnion``,
    ``FrozenEstimator`` or other meta-estimator), whatever the data.

    Parameters
    ----------
    transformer : transformer, "passthrough" or None
    name : str
        The estimator, for the message.
    param : str, default="preprocessor"
        The parameter that holds ``transformer``.
    fitted_on : {"public", "private"}, default="public"
        Where its steps are fitted: on the public rows (a preprocessor), or on partitions of the private rows
        (PATE's teachers, which then fail on a public row whose category their partition never showed).

    Raises
    ------
    ValueError
        Naming the step and the fix.
    """
    if transformer is None or isinstance(transformer, str) or not _is_estimator(transformer):
        return
    for path, step in _nested_steps(transformer, ""):
        own = step.get_params(deep=False)
        if not _is_error(own.get("handle_unknown")):
            continue
        where = f"{param} step {path!r}" if path else param
        if "unknown_value" in own:  # OrdinalEncoder
            fix = "handle_unknown='use_encoded_value' and unknown_value=-1 (or np.nan)"
        else:
            fix = "handle_unknown='ignore' or 'infrequent_if_exist'"
        key = f"{param}__{path}__handle_unknown" if path else f"{param}__handle_unknown"
        if fitted_on == "private":
            why = (
                "fitted on a teacher's partition of the private rows, it would fail on a public row whose category "
                "that partition never showed, so whether the fit fails would depend on the private rows"
            )
        else:
            why = (
                "fitted on the public rows, it would fail on the first private category they never showed, and its "
                "error would quote that category"
            )
        raise ValueError(
            f"{name}: {where} ({type(step).__name__}) has handle_unknown='error': {why}. Set {fix} on it "
            f"(set_params({key}=...)), or use skpate.preprocessing.PublicPreprocessor."
        )


def _is_estimator(value):
    return hasattr(value, "get_params") and not isinstance(value, type)


def _nested_steps(estimator, path):
    """``(path, step)`` of ``estimator`` and of every estimator in its parameters, recursively.

    Named lists (``Pipeline.steps``, ``ColumnTransformer.transformers``, ``FeatureUnion.transformer_list``) and
    single estimators (``FrozenEstimator.estimator``, a ``ColumnTransformer``'s ``remainder``, a meta-estimator's
    ``estimator``); the path joins names with ``__``, as ``set_params`` does.
    """
    yield path, estimator
    for key, value in estimator.get_params(deep=False).items():
        if _is_estimator(value):
            yield from _nested_steps(value, f"{path}__{key}" if path else key)
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, tuple) and len(item) >= 2 and isinstance(item[0], str) and _is_estimator(item[1]):
                    yield from _nested_steps(item[1], f"{path}__{item[0]}" if path else item[0])


def _is_error(value):
    return isinstance(value, str) and value == "error"


#: The largest epsilon an estimator calibrates noise to. Beyond it the noise is so small against the values it
#: is added to that floating-point rounding can erase it, and an output that rounding made deterministic holds no
#: finite epsilon (a budget or accountant may still be larger: it only adds numbers).
MAX_EPSILON = 1e6


class RealRange(Interval):
    """A real parameter in a range (``Interval(numbers.Real, ...)``), compared in float64 and not a boolean.

    scikit-learn's ``Interval`` compares in the value's own type: ``np.float16(1)`` against a bound of ``1e6``
    overflows float16 (a RuntimeWarning), and a ``fractions.Fraction`` raises numpy's bare TypeError. Read the value
    with ``float()`` (or ``as_float64``) where it is used, for the same reason.
    """

    def __init__(self, low, high, closed):
        super().__init__(numbers.Real, low, high, closed=closed)

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)) or not isinstance(val, numbers.Real):  # True is not a 1
            return False
        try:
            return float(val) in self
        except OverflowError:  # an integer beyond float64, outside any range a float bounds
            return False


class EpsilonRange(RealRange):
    """``epsilon`` in ``(0, MAX_EPSILON]``, with a message that says why the range ends and what to do instead."""

    def __init__(self):
        super().__init__(0, MAX_EPSILON, closed="right")

    def __str__(self):
        return (
            f"a float in (0, {MAX_EPSILON:g}] (beyond it calibrated noise falls below floating-point rounding and no "
            "finite epsilon holds; for a non-private reference, fit the same model without skpate)"
        )


class Count(Interval):
    """A count parameter: an integer in ``[low, high]`` (``high`` None: unbounded), not a boolean (``True`` is not a
    count of 1). Read it with ``int()``: a numpy integer such as ``np.uint8(250)`` satisfies it, and in numpy's
    arithmetic it wraps around (250 rounds plus 10 trees are 4 in ``uint8``, and ``-np.uint8(3)`` is 253), so a
    cost computed in its type could calibrate the noise for fewer releases than the fit makes."""

    def __init__(self, low, high=None):
        super().__init__(numbers.Integral, low, high, closed="left" if high is None else "both")

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


class NJobs(Interval):
    """``n_jobs``: None, -1 (all processors) or a number of processes; 0 means nothing (joblib refuses it inside the
    fit, after the budget) and a boolean is not a number of processes."""

    def __init__(self):
        super().__init__(numbers.Integral, None, None, closed="neither")

    def is_satisfied_by(self, val):
        return val is None or (not isinstance(val, (bool, np.bool_)) and val != 0 and super().is_satisfied_by(val))

    def __str__(self):
        return "None (one process), -1 (all processors) or a positive number of processes"


#: The largest finite float32: scikit-learn's trees compute in float32.
FLOAT32_MAX = float(np.finfo(np.float32).max)


def within_float32(Z):
    """``Z`` as float64 with every value beyond float32's finite range set to that range's end (NaN stays NaN).

    scikit-learn's trees convert their input to float32 and refuse what overflows it (a value of 1e39, or
    infinity), a refusal that would depend on one private row. Every split threshold lies between two float32
    values of the rows the tree was grown on, so a value beyond the range and the range's end fall on the same
    side of every split: the leaves are unchanged.
    """
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z, dtype=np.float64, copy=True)
        np.clip(Z.data, -FLOAT32_MAX, FLOAT32_MAX, out=Z.data)
        return Z
    return np.clip(np.asarray(Z, dtype=np.float64), -FLOAT32_MAX, FLOAT32_MAX)


def numbers_within_float32(X):
    """The finite floating-point numbers of ``X`` beyond float32's range set to its ends; the rest as it is.

    For estimators whose inner models are the user's (PATE's teachers): a 1e39 is a number, and a tree teacher
    would refuse it, a refusal that would depend on one private row (:func:`within_float32`). Infinity and NaN
    stay: they are not numbers a model can take, and the estimator's checks name them (and where they are).
    Arrays, a DataFrame's float columns and sparse matrices; other columns and types as they are.
    """

    def clip(values):
        return np.where(np.abs(values) > FLOAT32_MAX, np.sign(values) * FLOAT32_MAX, values)

    if sp.issparse(X):
        if X.dtype.kind != "f":
            return X
        X = X.copy()
        X.data = np.where(np.isfinite(X.data), clip(X.data), X.data)
        return X
    if hasattr(X, "select_dtypes"):
        columns = X.select_dtypes(include="floating").columns
        if len(columns):
            X = X.copy()
            values = X[columns].to_numpy(dtype=float)
            X[columns] = np.where(np.isfinite(values), clip(values), values)
        return X
    if getattr(X, "dtype", None) is None or X.dtype.kind != "f":
        return X
    return np.where(np.isfinite(X), clip(X), X)
