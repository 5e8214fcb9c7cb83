"""Validation shared by every layer (the estimator, the aggregators, the accounting engine, audit, plots).

The bottom of the package: it imports nothing from skpate, so any module can use it.
"""

import numbers

import numpy as np
from sklearn.utils.validation import check_array

__all__ = [
    "check_generator",
    "check_positive",
    "check_votes",
    "final_step",
    "is_semi_supervised",
    "label_dtype",
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
