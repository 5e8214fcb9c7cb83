"""Validation shared by every layer (the estimators, the aggregators, the accounting engine, audit, plots).

The bottom of the package: it imports nothing from skpate but its exceptions, so any module can use it.
"""

import numbers
import warnings

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _num_samples, check_array, column_or_1d

from .exceptions import PrivacyLeakWarning

__all__ = [
    "check_classes",
    "check_generator",
    "check_positive",
    "check_votes",
    "final_step",
    "is_semi_supervised",
    "label_dtype",
    "public_rows",
    "split_private_public",
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


def check_votes(votes):
    """Validate a vote histogram; return it as an int64 array.

    Raises ``ValueError`` unless ``votes`` is a 2-d array of finite,
    non-negative integers, with at least one query and two classes, whose rows
    all sum to the same number of teachers.
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
    arr = arr.astype(np.int64)
    if np.any(arr < 0):
        raise ValueError("votes must be non-negative counts; found a negative value.")
    sums = arr.sum(axis=1)
    if np.any(sums != sums[0]):
        raise ValueError(
            "every row of votes must sum to the same number of teachers (each teacher votes once per query); "
            f"row sums range from {sums.min()} to {sums.max()}."
        )
    if sums[0] == 0:
        raise ValueError("votes rows sum to 0: no teacher voted.")
    return arr


def check_positive(name, value):
    """``value`` as a float if it is a finite real number > 0; else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite float > 0, got {value!r}.")
    return float(value)


def check_positive_int(name, value, what="", minimum=1):
    """``value`` if it is an integer >= ``minimum`` (not a bool); else a ValueError naming ``name`` (and ``what``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise ValueError(f"{name} must be {kind}{what}, got {value!r}.")
    return value


def check_rows(X):
    """Light validation of an estimator's input rows.

    DataFrames pass through untouched (pipelines may select columns by
    name); arrays are checked for shape, emptiness and complex data, and
    finiteness is left to the wrapped estimators.
    """
    if hasattr(X, "iloc"):
        return X
    return check_array(X, accept_sparse=["csr", "csc"], dtype=None, ensure_all_finite=False, allow_nd=True)


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


def split_private_public(X, y, X_public, classes, name):
    """The private rows and their labels, and the public rows: the one row split of every estimator.

    Public rows come either as ``X_public`` or as rows of ``X`` labeled ``-1`` (:func:`public_rows`), never
    both. Errors name the estimator ``name`` and the fix, and quote no label.

    Returns
    -------
    X_private, y_private, X_public
    """
    if y is None:
        raise ValueError(
            f"{name} requires y to be passed, but the target y is None: label the private rows "
            "and mark public rows with -1 (or pass X_public)."
        )
    X = check_rows(X)
    y = check_array(column_or_1d(y, warn=True), ensure_2d=False, dtype=None, input_name="y")
    if _num_samples(X) != y.shape[0]:
        raise ValueError(f"X and y have inconsistent numbers of samples: {_num_samples(X)} and {y.shape[0]}.")
    public = public_rows(y, classes)
    private_idx = np.flatnonzero(~public)
    if private_idx.size == 0:
        raise ValueError(f"no private rows: every label is -1; {name} learns from labeled private rows.")
    y_private = y[private_idx]
    check_classification_targets(y_private)
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
            raise ValueError(
                f"X_public must have the features of X: shape {X_pub.shape} vs {X.shape} (rows, features...)."
            )
    else:
        X_pub = _safe_indexing(X, np.flatnonzero(public))
    if _num_samples(X_pub) == 0:
        fix = "pass X_public or mark public rows of X with y == -1"
        if not marks_public(classes):
            fix = "pass X_public (-1 is one of classes, so it labels a class here, not a public row)"
        raise ValueError(f"no public rows: {name} learns from a public, unlabeled pool; {fix}.")
    return _safe_indexing(X, private_idx), y_private, X_pub


def check_classes(classes, y_private, name, stacklevel=3):
    """The label set, sorted: the public ``classes``, else the private labels with a :class:`PrivacyLeakWarning`.

    Every estimator resolves a missing ``classes`` this way. Errors name ``name`` and quote no private label.
    """
    present = np.unique(y_private)
    if classes is None:
        warnings.warn(
            f"classes were not given, so {name} takes them from the private labels: which labels occur in the "
            "private data is then published (a record with a new label adds a class the model can output). Pass "
            f"{name}(classes=...) from public knowledge to silence this warning.",
            PrivacyLeakWarning,
            stacklevel=stacklevel + 1,
        )
        return present
    classes = np.asarray(classes)
    if classes.ndim != 1 or np.unique(classes).size != classes.size or classes.size < 2:
        raise ValueError(f"classes must be a 1-d list of at least 2 distinct labels, got {classes.tolist()!r}.")
    if np.setdiff1d(present, classes).size:
        raise ValueError(
            "y holds labels that are not in classes; add them to classes or relabel those rows "
            "(np.setdiff1d(y, classes) lists them; this message does not, as they are private labels)."
        )
    return np.sort(classes)
