"""The teacher ensemble: seeded clones of an estimator fit on disjoint partitions, and their votes.

Everything here is private: the teachers are trained on private rows and
their votes are raw. Only aggregated, noisy answers leave a fit (and only
those are paid for), so the ensemble keeps the votes it computed: a refit
that changes the aggregator, ``max_queries``, the rounds or the student
votes only on public rows it has not voted on yet.
"""

import functools
import pickle
import sys
import warnings
from collections.abc import Sequence

import joblib
import numpy as np
import pandas as pd
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs, parallel_config
from sklearn.base import clone
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import _num_samples, check_memory

from .._validation import is_semi_supervised, label_dtype, reemit_sanitized, sanitized_records

__all__ = ["TeacherEnsemble", "first_step", "input_tags", "non_finite_columns", "schema_hint", "seed_estimator"]

#: Part of every cache key: a change in how teachers are trained or stored must never hit an old entry.
_CACHE_VERSION = 3


def seed_estimator(estimator, seed):
    """Give every ``random_state`` parameter of ``estimator`` a seed derived from the int ``seed``.

    As ``sklearn.ensemble`` does for its members, so that a seeded
    ``PATEClassifier`` is reproducible and teachers are not identical copies.
    The caller draws one ``seed`` per estimator, whatever its parameters, so
    that changing the student does not change the queries or the noise.
    """
    own = np.random.default_rng(seed)
    keys = [k for k in estimator.get_params(deep=True) if k == "random_state" or k.endswith("__random_state")]
    estimator.set_params(**{k: int(own.integers(np.iinfo(np.int32).max)) for k in sorted(keys)})
    return estimator


def _local_parallelism(task):
    """Run a teacher task with joblib's defaults reset to one thread inside it.

    The tasks themselves are spread by the caller's joblib backend; a
    teacher's own ``Parallel`` (a forest's trees) must stay in the process
    that runs the task, sequential unless the teacher asks for ``n_jobs``.
    Under ``parallel_backend("dask")`` nested calls otherwise become cluster
    tasks, one per tree (measured: 2 workers 4x slower than 1), and inherit
    ``n_jobs=-1`` (threads fighting over the GIL: 2x slower).
    """

    @functools.wraps(task)
    def run(*args):
        with parallel_config(backend="threading", n_jobs=1):
            return task(*args)

    return run


@_local_parallelism
def _vote(teachers, X_query, classes):
    """Vote histogram ``(n_queries, n_classes)`` of ``teachers`` on ``X_query``."""
    votes = np.zeros((_num_samples(X_query), len(classes)), dtype=np.int64)
    rows = np.arange(votes.shape[0])
    for teacher in teachers:
        try:
            predicted = teacher.predict(X_query)
        except ValueError as exc:  # e.g. NaN or inf in public rows the teachers cannot handle
            raise _public_rows_error(exc, X_query) from exc  # public rows: their message may be shown
        np.add.at(votes, (rows, _class_index(predicted, classes, votes.shape[0])), 1)
    return votes


def _class_index(predicted, classes, n_rows):
    """The column of ``classes`` of each predicted label; a ValueError (quoting none) for a label outside them.

    A classifier fit on labels in ``classes`` predicts labels in ``classes``; anything else (a regressor's
    numbers, a teacher that relabels) would otherwise land in another class's column or crash.
    """
    predicted = np.asarray(predicted)
    try:
        index = np.searchsorted(classes, predicted)
        inside = (predicted.shape == (n_rows,)) and bool(np.all(index < len(classes)))
        inside = inside and bool(np.all(classes[np.minimum(index, len(classes) - 1)] == predicted))
    except (TypeError, ValueError):  # labels of another type than classes
        inside = False
    if not inside:  # the labels are not shown: they come from teachers fit on private rows
        raise ValueError(
            "a teacher predicted labels that are not among classes, one per row; the estimator must be a classifier "
            "that predicts the labels it was fit on (sklearn.base.is_classifier): use a classifier, not a regressor "
            "or a transformer."
        )
    return index


def _public_rows_error(exc, X_query):
    """The ValueError of teachers that could not label public rows: the columns at fault first, then their message."""
    where = "the teachers could not label the public rows (X_public, or rows of X with y == -1)"
    columns = non_finite_columns(X_query)
    if columns:
        where += (
            f": they hold NaN or infinity in columns {columns}; impute or clip them in a pipeline step of the "
            "estimator, or drop those public rows"
        )
    return ValueError(f"{where}. The estimator said: {exc}")


def _stack_rows(top, bottom):
    """Rows of ``top`` then of ``bottom``: arrays, sparse matrices or DataFrames (with the same columns)."""
    if hasattr(top, "iloc"):
        return pd.concat([top, bottom], ignore_index=True)
    if sp.issparse(top):
        return sp.vstack([top, bottom], format=top.format)
    return np.concatenate([np.asarray(top), np.asarray(bottom)])


def _recording(task):
    """``task`` returning ``(result, records)``: the warnings it raised as :func:`sanitized_records`, which a
    joblib worker returns to the caller (a worker's own warnings go to its stderr, text and all). A teacher's
    warning may quote its partition (scikit-learn's "The least populated class in y has only 3 members")."""

    @functools.wraps(task)
    def run(*args):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = task(*args)
        return result, sanitized_records(caught)

    return run


@_recording
def _vote_batch(teachers, X_query, classes):
    """:func:`_vote`, with its warnings (:func:`_recording`): a joblib task of :meth:`TeacherEnsemble.vote`."""
    return _vote(teachers, X_query, classes)


def _warn_again(records):
    """The teachers' warnings, once per category, their texts not shown."""
    reemit_sanitized(records, "PATEClassifier", "a teacher (fitted on its partition of the private rows)", 3)


@_recording
@_local_parallelism
def _fit_and_vote(estimators, partitions, X, y, X_query, classes, X_unlabeled=None):
    """Fit teachers on their partitions and return them with their votes (and their warnings, :func:`_recording`).

    Runs in a joblib worker: one call handles a batch of teachers, so the
    query rows are shipped once per batch, not once per teacher. With
    ``X_unlabeled`` (semi-supervised teachers), each also fits those rows,
    labeled -1: public rows, which cost no privacy.
    """
    for estimator, part in zip(estimators, partitions):
        y_part = y[part]
        X_fit, y_fit = _safe_indexing(X, part), y_part
        if X_unlabeled is not None:
            X_fit = _stack_rows(X_fit, X_unlabeled)
            y_fit = np.concatenate([y_part.astype(label_dtype(classes)), np.full(_num_samples(X_unlabeled), -1)])
        failed = None
        try:
            estimator.fit(X_fit, y_fit)
        except InvalidParameterError:  # the estimator's own parameters: its message holds no data
            raise
        except (ValueError, LookupError) as exc:  # its message may quote private data (a KeyError: the key)
            # A TypeError passes: it names types (scikit-learn's check_dtype_object expects it as is).
            failed = type(exc)
        if failed is not None:  # raised outside the except block: the original is not even its __context__
            raise _teacher_error(failed, X, X_unlabeled, estimator)
    return estimators, _vote(estimators, X_query, classes)


#: Columns an error names at most.
_MAX_COLUMNS = 10


def _columns(names):
    shown = list(names[:_MAX_COLUMNS])
    return f"{shown} and {len(names) - _MAX_COLUMNS} more" if len(names) > _MAX_COLUMNS else f"{shown}"


def non_finite_columns(X, nan=True):
    """The columns of ``X`` whose numeric values hold infinity (or NaN, with ``nan``), as a printable list; ``""`` if
    none.

    Names for a DataFrame, else indices (of the flattened features of a
    n-d array): schema, never a value. Non-numeric columns are not read.
    """
    bad_values = (lambda values: ~np.isfinite(values)) if nan else np.isinf
    try:
        if hasattr(X, "select_dtypes"):
            numeric = X.select_dtypes("number")
            bad = bad_values(numeric.to_numpy(dtype=float, na_value=np.nan)).any(axis=0)
            names = numeric.columns[bad].tolist()  # Python scalars: their repr is the name
        elif sp.issparse(X):
            X = X.tocoo()
            names = np.unique(X.col[bad_values(np.asarray(X.data, dtype=float))]).tolist()
        else:
            X = np.asarray(X, dtype=float)
            X = X.reshape(X.shape[0], -1) if X.ndim > 1 else X.reshape(-1, 1)
            names = np.flatnonzero(bad_values(X).any(axis=0)).tolist()
    except (TypeError, ValueError):  # not numeric: the schema hint says so
        return ""
    return _columns(names) if names else ""


def schema_hint(X):
    """What the dtypes of ``X`` say a numeric estimator cannot take, with the fix; ``""`` if nothing.

    Reads the dtypes and column names only (the schema, public), never a value.
    """
    if hasattr(X, "select_dtypes"):
        names = X.select_dtypes(exclude=["number", "bool"]).columns.tolist()
        if not names:
            return ""
        what = f"X has non-numeric columns {_columns(names)}"
    elif getattr(X, "dtype", None) is not None and X.dtype.kind in "OUSMm":
        what = f"X is an array of dtype {X.dtype}"
    else:
        return ""
    return (
        f"{what}; put an encoder in the teacher (e.g. make_pipeline(OneHotEncoder(handle_unknown='ignore'), ...)) "
        "or use skpate.PrivateClassifier, which encodes from the public rows."
    )


def first_step(estimator):
    """The step of ``estimator`` that reads the rows: a pipeline's first ("passthrough" and None steps read
    nothing), or itself; None if no step reads them."""
    while hasattr(estimator, "steps"):
        estimator = next((step for _, step in estimator.steps if not isinstance(step, str) and step is not None), None)
    return estimator


def input_tags(estimator):
    """The input tags of the step that reads the rows, a pipeline's first (its own tags do not say); None if none."""
    step = first_step(estimator)
    return None if step is None else get_tags(step).input_tags


def _teacher_error(kind, X_private, X_unlabeled=None, estimator=None):
    """The ValueError to raise when a teacher of error type ``kind`` cannot be fit: the fix, quoting nothing private.

    Neither the estimator's message nor its traceback is shown, chained or kept: it may quote a private label or
    category. To see it, fit the estimator on the private rows yourself, where they are yours to see.
    The hints come from the schema, from all the private rows (never one partition: its size and classes are
    private), from the public rows and from what ``estimator`` says it accepts (its first step's tags); a
    partition too small or missing classes is always a possible cause, as no partition is read to rule it out.
    """
    tags = input_tags(estimator)
    causes = [] if tags is not None and tags.string else [schema_hint(X_private)]
    nan = tags is None or not tags.allow_nan  # an estimator that takes NaN may still refuse infinity
    values = "NaN or infinity" if nan else "infinity"
    # Said whatever the rows hold, naming no column: which columns hold such values depends on them.
    causes.append(
        f"If the private rows hold {values} (not checked here: it would depend on them), impute or clip them in a "
        "pipeline step before the estimator."
    )
    columns = "" if X_unlabeled is None else non_finite_columns(X_unlabeled, nan)
    if columns:
        causes.append(
            "The public rows (X_public, or rows of X with y == -1), which semi-supervised teachers also fit, hold "
            f"{values} in columns {columns}: impute or clip them in a pipeline step before the estimator."
        )
    if sp.issparse(X_private):  # e.g. 64-bit indices, which many estimators reject
        causes.append(
            f"Its rows are a sparse {X_private.format} matrix: check that the estimator accepts this sparse input "
            "(some reject 64-bit indices or some formats), or convert it in a pipeline step before the estimator."
        )
    causes = [c for c in causes if c]
    causes.append(
        f"{'Or, if' if causes else 'If'} its partition is too small or misses classes: give every teacher more rows "
        "(lower n_teachers) or use an estimator that handles small partitions and missing classes (e.g. a decision "
        "tree or random forest)."
    )
    return ValueError(
        f"a teacher could not be fit on its partition of the private rows (the estimator raised a {kind.__name__}; "
        "its message is not shown, as it may quote private data: fit the estimator on the private rows yourself to "
        f"see it). {' '.join(causes)}"
    )


def _fingerprint(data):
    """A cheap stand-in for ``data`` in a cache key: vectorized row hashes instead of pickling objects."""
    if hasattr(data, "iloc"):  # pandas DataFrame or Series
        columns = [str(c) for c in (data.columns if hasattr(data, "columns") else [data.name])]
        return (
            columns,
            [str(t) for t in np.atleast_1d(data.dtypes)],
            pd.util.hash_pandas_object(data, index=False).values,
        )
    if sp.issparse(data):
        data = data.tocsr()
        return data.shape, data.dtype.str, data.data, data.indices, data.indptr
    data = np.asarray(data)
    if data.dtype == object:
        return data.shape, pd.util.hash_array(data.ravel())
    return data


def _train(estimator, seeds, partitions, X_private, y_private, X_query, classes, n_batches, progress, X_unlabeled):
    """Fit one seeded clone of ``estimator`` per partition and sum their votes on ``X_query``.

    ``X_unlabeled``: public rows every teacher also fits, labeled -1, or None.
    One joblib task per batch of teachers (data shipped once per batch); with
    ``progress``, more, smaller batches and a progress line on stderr as they
    finish. A pure function of its inputs, which is what lets ``memory``
    cache it.
    """
    teachers = [seed_estimator(clone(estimator), seed) for seed in seeds]
    batches = np.array_split(np.arange(len(teachers)), min(len(teachers), n_batches * (8 if progress else 1)))
    try:  # results as they finish, for the progress line; not every backend can (Ray's cannot)
        parallel = Parallel(n_jobs=n_batches, return_as="generator" if progress else "list")
    except ValueError:
        parallel = Parallel(n_jobs=n_batches)
    results = parallel(
        delayed(_fit_and_vote)(
            [teachers[i] for i in batch],
            [partitions[i] for i in batch],
            X_private,
            y_private,
            X_query,
            classes,
            X_unlabeled,
        )  # fmt: skip
        for batch in batches
    )
    fitted, votes, done, records = [], 0, 0, []
    for (batch_teachers, batch_votes), batch_records in results:
        records.extend(batch_records)
        fitted.extend(batch_teachers)
        votes = votes + batch_votes
        done += len(batch_teachers)
        if progress:  # counts only: never data or votes
            end = "\n" if done == len(teachers) else ""
            print(f"\r[PATEClassifier] teachers {done}/{len(teachers)}", end=end, file=sys.stderr, flush=True)
    _warn_again(records)
    return fitted, votes


def _train_pickled(key, args):
    """:func:`_train`, teachers as C-pickled bytes; cached by ``memory`` under ``key``.

    ``key`` replaces hashing the arguments, and bytes reload far faster than
    joblib's pickling of thousands of small arrays (measured: 250 fitted
    forests reload in 0.9 s instead of 14 s), or not at all until the
    teachers are used (a cache hit needs only the votes).
    """
    teachers, votes = _train(*args)
    return pickle.dumps(teachers, protocol=pickle.HIGHEST_PROTOCOL), votes


class TeacherEnsemble(Sequence):
    """``n_teachers`` seeded clones of an estimator, each fit on its partition, and their votes.

    A sequence of the fitted teachers (``len``, indexing, iteration). **Private**:
    the teachers are trained on private rows and the votes are raw; never
    publish this object.

    Parameters
    ----------
    estimator : estimator object
    seeds : list of int
        One seed per teacher (:func:`seed_estimator`).
    partitions : list of ndarray
        Row indices of the private data, one array per teacher.
    classes : ndarray
        The label set: the columns of the votes.
    n_jobs : int or None
        joblib jobs; the teachers are split into that many batches, once.
    grouped : bool, default=False
        Whether the partitions follow ``groups`` (privacy units of several
        rows), for a ``warm_start`` fit's checks: the number of rows is then
        private.
    """

    def __init__(self, estimator, seeds, partitions, classes, n_jobs=None, grouped=False):
        self.estimator, self.seeds, self.partitions, self.classes = estimator, list(seeds), partitions, classes
        self.grouped = bool(grouped)
        self.n_batches = min(effective_n_jobs(n_jobs), len(self.seeds))
        self._teachers = None  # fitted teachers, once loaded
        self._blob = None  # the same, pickled (from memory), until first used
        self._public = None  # fingerprint of the public rows the cached votes belong to
        self._unlabeled = None  # fingerprint of the public rows semi-supervised teachers also fitted
        self._votes = self._voted = None

    # ------------------------------------------------------------ the sequence

    def _loaded(self):
        if self._teachers is None:
            if self._blob is None:
                raise ValueError("the teachers are not fitted yet.")
            self._teachers = pickle.loads(self._blob)
        return self._teachers

    def __len__(self):
        return len(self.seeds)

    def __getitem__(self, index):
        return self._loaded()[index]

    def __getstate__(self):  # teachers that came from memory stay packed
        state = self.__dict__.copy()
        if self._blob is not None:
            state["_teachers"] = None
        return state

    @property
    def is_fitted(self):
        return self._teachers is not None or self._blob is not None

    @property
    def n_private(self):
        """The number of private rows the partitions cover (private with ``grouped``: not for messages)."""
        return int(sum(len(part) for part in self.partitions))

    # ----------------------------------------------------------------- fitting

    def fit(self, X_private, y_private, X_public, rows, memory=None, progress=False):
        """Fit every teacher and vote on ``X_public[rows]`` in the same joblib tasks.

        A semi-supervised estimator (``sklearn.semi_supervised``,
        :class:`skpate.pate.semi_supervised.PseudoLabelClassifier`) also fits all
        of ``X_public``, labeled -1: public features, free. ``memory`` (a
        ``joblib.Memory``, or None) caches the teachers and those votes,
        keyed by everything they depend on and a version tag.

        Returns
        -------
        votes : ndarray of shape (len(rows), n_classes)
        """
        X_query = _safe_indexing(X_public, rows)
        X_unlabeled = X_public if is_semi_supervised(self.estimator) else None
        args = (self.estimator, self.seeds, self.partitions, X_private, y_private, X_query, self.classes)
        args += (self.n_batches, progress, X_unlabeled)
        if memory is None:
            self._teachers, votes = _train(*args)
        else:
            key = joblib.hash(
                [_CACHE_VERSION, joblib.hash(self.estimator), self.seeds, self.partitions, self.classes]
                + [_fingerprint(X_private), _fingerprint(y_private), _fingerprint(X_query)]
                + ([] if X_unlabeled is None else [_fingerprint(X_unlabeled)])
            )
            self._blob, votes = check_memory(memory).cache(_train_pickled, ignore=["args"])(key, args)
        self._remember(X_public, rows, votes)
        self._unlabeled = None if X_unlabeled is None else self._public  # _remember's hash of X_public
        return votes

    def fitted_other_public_rows(self, X_public):
        """Whether these teachers are semi-supervised and fitted other public rows than ``X_public``."""
        fitted = getattr(self, "_unlabeled", None)
        return fitted is not None and fitted != joblib.hash(_fingerprint(X_public))

    # ------------------------------------------------------------------ voting

    def vote(self, X):
        """The teachers' vote histograms on ``X``, shape ``(n_rows, n_classes)`` (not remembered)."""
        teachers = self._loaded()
        batches = np.array_split(np.arange(len(teachers)), self.n_batches)
        results = Parallel(n_jobs=self.n_batches)(
            delayed(_vote_batch)([teachers[i] for i in batch], X, self.classes) for batch in batches
        )
        _warn_again([record for _, records in results for record in records])
        return sum(votes for votes, _ in results)

    def votes(self, X_public, rows):
        """Votes on ``X_public[rows]``: remembered ones are reused, the others voted now and remembered."""
        self._remember(X_public, np.empty(0, dtype=np.int64), np.empty((0, len(self.classes)), dtype=np.int64))
        missing = rows[~self._voted[rows]]
        if missing.size:
            self._votes[missing] = self.vote(_safe_indexing(X_public, missing))
            self._voted[missing] = True
        return self._votes[rows]

    def _remember(self, X_public, rows, votes):
        """Keep ``votes`` of ``X_public[rows]``; other public rows than last time forget the old votes."""
        public = joblib.hash(_fingerprint(X_public))
        if public != self._public:
            n_public = _num_samples(X_public)
            self._public = public
            self._votes = np.zeros((n_public, len(self.classes)), dtype=np.int64)
            self._voted = np.zeros(n_public, dtype=bool)
        self._votes[rows] = votes
        self._voted[rows] = True
