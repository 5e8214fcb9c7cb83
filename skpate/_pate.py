"""PATEClassifier: partition -> teachers -> votes -> noisy aggregation -> student."""

import copy
import functools
import pickle
import sys
import time
import warnings
from collections.abc import Sequence
from numbers import Integral, Real
from typing import NamedTuple

import joblib
import numpy as np
import pandas as pd
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs, parallel_config
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _num_samples,
    check_array,
    check_is_fitted,
    check_memory,
    column_or_1d,
    validate_data,
)

from . import aggregators as agg
from ._partition import disjoint_partitions
from .aggregators import PrivacyLeakWarning
from .privacy import RDPAccountant, analyze
from .privacy.cost import Cost, gaussian_budget, largest_count

__all__ = ["PATEClassifier"]

#: Aggregator names accepted as strings, each with its default parameters.
AGGREGATORS = {
    "plurality": agg.Plurality,
    "lnmax": agg.LNMax,
    "gnmax": agg.GNMax,
    "confident-gnmax": agg.ConfidentGNMax,
    "interactive-gnmax": agg.InteractiveGNMax,
    "nzc": agg.NZC,
}


class _Plan(NamedTuple):
    """What a fit may spend, fixed before any teacher is trained (public quantities only)."""

    n_queries: int  # most queries the fit submits
    budget_mu_squared: float  # the filter's budget in Gaussian DP, or None: no filter needed
    release: Cost  # the sanitized release, if any
    reserved: Cost  # everything the fit can cost: what an accountant reserves


def _label_dtype(classes):
    """A dtype for labels that also holds -1 (no label): unsigned and string labels do not."""
    if classes.dtype.kind in "if":
        return classes.dtype
    return np.int64 if classes.dtype.kind in "ub" else object


def _student_has(attr):
    """``available_if`` check: the fitted student, else the one that will be fit."""

    def check(self):
        if hasattr(self, "student_"):
            return hasattr(self.student_, attr)
        return hasattr(self.student if self.student is not None else self.estimator, attr)

    return check


def _seed(estimator, seed):
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


def _seeded_teachers(estimator, seeds):
    """One seeded clone of ``estimator`` per seed."""
    return [_seed(clone(estimator), seed) for seed in seeds]


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
            raise ValueError(
                f"the teachers could not label the public rows (X_public, or rows of X with y == -1): {exc}"
            ) from exc
        np.add.at(votes, (rows, np.searchsorted(classes, predicted)), 1)
    return votes


@_local_parallelism
def _fit_and_vote(estimators, partitions, X, y, X_query, classes):
    """Fit teachers on their partitions and return them with their votes.

    Runs in a joblib worker: one call handles a batch of teachers, so the
    query rows are shipped once per batch, not once per teacher.
    """
    for estimator, part in zip(estimators, partitions):
        y_part = y[part]
        try:
            estimator.fit(_safe_indexing(X, part), y_part)
        except ValueError as exc:  # re-raised with what the user can change
            present = np.unique(y_part)
            raise ValueError(
                f"a teacher could not be fit on its partition of {len(part)} private rows with "
                f"{len(present)} of {len(classes)} classes ({type(exc).__name__}: {exc}). "
                "Give every teacher more rows (lower n_teachers) or use an estimator that handles small "
                "partitions and missing classes (e.g. a decision tree or random forest)."
            ) from exc
    return estimators, _vote(estimators, X_query, classes)


def _train_teachers(teachers, partitions, X_private, y_private, X_query, classes, n_jobs, progress=False):
    """Fit every teacher on its partition and sum their votes on ``X_query``.

    One joblib task per batch of teachers (data shipped once per batch); with
    ``progress``, more, smaller batches and a progress line on stderr as they
    finish. A pure function of its inputs (the teachers come seeded), which
    is what lets ``PATEClassifier(memory=...)`` cache it through
    :func:`_train_teachers_pickled` under :func:`_teachers_key`.
    """
    n_batches = min(len(teachers), n_jobs * (8 if progress else 1))
    batches = np.array_split(np.arange(len(teachers)), n_batches)
    try:  # results as they finish, for the progress line; not every backend can (Ray's cannot)
        parallel = Parallel(n_jobs=n_jobs, return_as="generator" if progress else "list")
    except ValueError:
        parallel = Parallel(n_jobs=n_jobs)
    results = parallel(
        delayed(_fit_and_vote)(
            [teachers[i] for i in batch], [partitions[i] for i in batch], X_private, y_private, X_query, classes
        )
        for batch in batches
    )
    fitted, votes, done = [], 0, 0
    for batch_teachers, batch_votes in results:
        fitted.extend(batch_teachers)
        votes = votes + batch_votes
        done += len(batch_teachers)
        if progress:  # counts only: never data or votes
            end = "\n" if done == len(teachers) else ""
            print(f"\r[PATEClassifier] teachers {done}/{len(teachers)}", end=end, file=sys.stderr, flush=True)
    return fitted, votes


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


def _teachers_key(estimator, seeds, partitions, X_private, y_private, X_query, classes):
    """What the fitted teachers and their votes depend on: estimator, seeds, partition, data, queries."""
    parts = [joblib.hash(estimator), seeds, partitions, classes]
    return joblib.hash(parts + [_fingerprint(X_private), _fingerprint(y_private), _fingerprint(X_query)])


class _PickledTeachers(Sequence):
    """Fitted teachers kept as pickled bytes, unpickled on first use.

    A cache hit of ``PATEClassifier(memory=...)`` needs only the votes; most
    fits (one round, no ``warm_start``) never touch the teachers again, and
    unpickling thousands of fitted trees is most of a hit's time (measured:
    0.6 s of 0.9 s for 250 forests of 50 trees).
    """

    def __init__(self, blob, n_teachers):
        self._blob, self._n_teachers, self._teachers = blob, n_teachers, None

    def _loaded(self):
        if self._teachers is None:
            self._teachers = pickle.loads(self._blob)
        return self._teachers

    def __len__(self):
        return self._n_teachers

    def __getitem__(self, index):
        return self._loaded()[index]

    def __getstate__(self):  # pickled as the bytes, never twice
        return {"_blob": self._blob, "_n_teachers": self._n_teachers, "_teachers": None}


def _train_teachers_pickled(key, args):
    """``_train_teachers``, teachers as C-pickled bytes; ``PATEClassifier(memory=...)`` caches it under ``key``.

    ``args`` is ``(estimator, seeds, partitions, ...)``. ``key``
    (:func:`_teachers_key`) replaces hashing the arguments, and bytes reload
    far faster than joblib's pickling of thousands of small arrays
    (measured: 250 fitted forests reload in 0.9 s instead of 14 s), or not
    at all until the teachers are used (:class:`_PickledTeachers`).
    """
    estimator, seeds, *rest = args
    teachers, votes = _train_teachers(_seeded_teachers(estimator, seeds), *rest)
    return pickle.dumps(teachers, protocol=pickle.HIGHEST_PROTOCOL), votes


def _is_semi_supervised(estimator):
    """Whether ``estimator`` learns from rows labeled -1 (sklearn.semi_supervised, VAT nets)."""
    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    return bool(getattr(final, "_skpate_semi_supervised", False)) or type(final).__module__.startswith(
        "sklearn.semi_supervised"
    )


class PATEClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Private Aggregation of Teacher Ensembles (PATE) as a scikit-learn classifier.

    Trains ``n_teachers`` clones of ``estimator`` on disjoint partitions of the
    private (labeled) rows, labels public (unlabeled) rows with a noisy
    aggregation of the teachers' votes, and trains a ``student`` on those
    labels. Predictions come from the student, the only model meant to be
    published; ``privacy_spent_`` is the ``(epsilon, delta)`` to publish with
    it. Give the budget first (``epsilon=1.0``) and the fit answers as many
    queries as it allows.

    Parameters
    ----------
    estimator : estimator object
        Classifier cloned for every teacher (and for the student when
        ``student`` is None). Any scikit-learn classifier or ``Pipeline``.
    n_teachers : int, default=250
        Number of teachers, i.e. of disjoint partitions of the private rows.
    aggregator : aggregator object or str, default=None
        Noisy aggregation of the votes, from :mod:`skpate.aggregators`, or
        one of ``"plurality"``, ``"lnmax"``, ``"gnmax"``, ``"confident-gnmax"``,
        ``"interactive-gnmax"``, ``"nzc"`` with default parameters. None means
        ``GNMax(sigma=40)`` without a budget; with ``epsilon``, GNMax whose
        noise is calibrated to it: ``GNMax.for_budget(epsilon, delta,
        max_queries)`` when ``max_queries`` is given, else ``sigma =
        n_teachers / 3`` with as many queries as the budget allows. ``InteractiveGNMax`` compares the teachers with
        the student of the previous round (the uniform distribution in the
        first round, which makes it Confident-GNMax with threshold
        ``threshold + n_teachers / n_classes``).
    student : estimator object, default=None
        Classifier trained on the answered public rows and their noisy labels.
        None means a clone of ``estimator``.
    max_queries : int, default=None
        At most this many public rows are submitted to the teachers; None
        submits them all (or, with ``epsilon``, as many as it allows). Every
        submitted query is paid for.
    epsilon : float > 0, default=None
        A privacy budget fixed before the fit, at ``delta``, covering
        everything the fit releases (threshold checks, answers, the
        sanitized release). The fit submits public rows (in the order of
        ``query_strategy``) until the next query could exceed it,
        ``max_queries`` is reached or the public rows run out; the guarantee
        is then the budget. Aggregators that answer every query (GNMax,
        LNMax, NZC) get as many queries as the budget covers a priori;
        Confident- and Interactive-GNMax run under a privacy filter in
        Gaussian DP (Smith & Thakurta 2022), which charges the answer step
        only where it runs and so answers more. None: no budget; the
        publishable epsilon is the a-priori cost of the submitted queries.
    delta : float, default=1e-5
        The ``delta`` of the reported (epsilon, delta); should be well below
        ``1 / n_private_rows``.
    classes : array-like of shape (n_classes,), default=None
        The label set, from public knowledge (e.g. the dataset's schema).
        None takes it from the private labels and raises a
        :class:`~skpate.PrivacyLeakWarning`: which labels occur in the
        private data is then published.
    query_strategy : {"random", "uncertainty"}, default="random"
        How each round picks its queries among the public rows not yet
        queried: at random, or (after the first, random round) the rows where
        the current student's top probability is lowest (PATE 2017, App. C).
        Costs no privacy: the student is already a DP output.
    n_rounds : int, default=1
        The queries are split into this many rounds; the student is retrained
        after each, and feeds the next round's query choice and
        ``InteractiveGNMax``. The RDP of all rounds composes in the report.
    semi_supervised : bool or "auto", default="auto"
        Give the student every public row, labeled ``-1`` where there is no
        answer (scikit-learn's convention). ``"auto"``: when the student is
        from ``sklearn.semi_supervised`` or a ``CNNClassifier(semi_supervised=True)``.
    warm_start : bool, default=False
        Reuse the teachers of the previous ``fit`` (same ``n_teachers``)
        instead of training new ones, e.g. to compare aggregators or students.
        The private data must be the same; every query is paid for again.
    random_state : int, RandomState instance or None, default=None
        Seeds, in this order, the partition, the teachers' and the student's
        own seeds, then, round by round, the choice of queries and the noise.
        None draws fresh OS entropy at every fit.
    sanitize_order : float > 1 or None, default=None
        For GNMax and Confident-GNMax, also release the data-dependent
        epsilon with smooth sensitivity and Gaussian noise (PATE 2018 App.
        B) as ``privacy_report_.sanitized_epsilon``, at this RDP order, fixed
        before seeing the data (choosing it from the votes, as the papers
        do, would leak them). Its own cost is inside the publishable epsilon
        and inside ``epsilon``. None (default): no release; it costs budget
        and, at the budgets one publishes, rarely lands below the a-priori
        bound.
    memory : str, joblib.Memory or None, default=None
        Cache the fitted teachers and their first-round votes (as
        ``Pipeline(memory=...)`` caches transformers), keyed by the
        teachers' parameters and seeds, the private rows, the partition and
        the queries (hashed row by row, so a cache hit is cheap): a
        ``GridSearchCV`` over aggregator or student parameters with an int
        ``random_state`` trains the teachers once per split. The cache holds
        teachers trained on private data: keep it private and delete it when
        done. Every fit is still paid for.
    accountant : skpate.privacy.RDPAccountant, default=None
        Budget shared by every fit on the same private data. The fit
        reserves its a-priori cost (or its own ``epsilon``) before any
        teacher is trained, and is refused if it does not fit; then it is
        charged what it spent. Shared by every clone, so a ``GridSearchCV``
        charges all its fits to it.
    n_jobs : int, default=None
        Number of joblib jobs that fit the teachers (``-1``: all cores).
    verbose : int, default=0
        ``0``: silent; ``1``: one line per phase (partitioning, teachers and
        votes, aggregation, student) with counts and timings; ``2``: also a
        progress line on stderr as batches of teachers finish (works under
        any joblib backend). Never data or votes.

    Attributes
    ----------
    teachers_ : sequence of estimators
        The fitted teachers (a list; with ``memory``, a sequence that
        unpickles them on first use). They are trained on private data:
        never publish them, nor this object; publish :meth:`export_student`.
    student_ : estimator
        The fitted student.
    classes_ : ndarray of shape (n_classes,)
        The label set: ``classes``, sorted, or the private labels.
    public_labels_ : ndarray of shape (n_public,)
        Noisy label of every public row, ``-1`` where it was not queried or
        not answered (dtype object when the class labels are not numbers).
    public_queried_ : ndarray of bool, shape (n_public,)
        Public rows submitted to the teachers (answered or not).
    n_queries_ : int
        Public rows submitted to the teachers.
    n_answered_ : int
        Queries that received a label (and trained the student).
    privacy_spent_ : tuple of (float, float)
        ``(epsilon, delta)`` to publish with the student: the budget, or the
        a-priori cost of the submitted queries (``privacy_report_.epsilon``).
    privacy_report_ : skpate.PrivacyReport
        The full accounting, publishable first: ``epsilon`` and its
        ``guarantee``, ``spent_epsilon`` (how much of a budget was used),
        ``sanitized_epsilon`` (a DP estimate, if asked for), then
        ``data_dependent_epsilon`` (the papers' number, private).
    aggregator_ : aggregator object
        The aggregator used (with the noise calibrated to ``epsilon`` when
        ``aggregator`` is None).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    See Also
    --------
    skpate.analyze : privacy report from a vote matrix alone.
    sklearn.semi_supervised.SelfTrainingClassifier : the ``y == -1`` convention.

    Notes
    -----
    Public rows are given either as ``X_public`` or as rows of ``X`` whose
    label is ``-1`` (so that a ``Pipeline`` transforms them too). A
    preprocessing step fitted *outside* ``PATEClassifier`` on private rows is
    published with the pipeline and is not covered by the guarantee: put the
    preprocessing inside ``estimator`` and ``student`` instead.

    The guarantee is per record under replacement of one record, or per group
    (add/remove/replace one whole group) when ``groups`` is given.

    References
    ----------
    Papernot et al., "Semi-supervised Knowledge Transfer for Deep Learning
    from Private Training Data", ICLR 2017; Papernot et al., "Scalable Private
    Learning with PATE", ICLR 2018.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skpate import PATEClassifier, GNMax
    >>> X, y = make_classification(n_samples=3000, random_state=0)
    >>> clf = PATEClassifier(DecisionTreeClassifier(max_depth=3), n_teachers=50, classes=[0, 1],
    ...                      aggregator=GNMax(sigma=20), epsilon=2.0, random_state=0)
    >>> clf = clf.fit(X[:2500], y[:2500], X_public=X[2500:])
    >>> epsilon, delta = clf.privacy_spent_  # what to publish with clf.export_student()
    >>> epsilon <= 2.0
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "n_teachers": [Interval(Integral, 1, None, closed="left")],
        "aggregator": [None, HasMethods(["aggregate", "privacy_cost"]), StrOptions(set(AGGREGATORS))],
        "student": [None, HasMethods(["fit", "predict"])],
        "max_queries": [None, Interval(Integral, 1, None, closed="left")],
        "epsilon": [None, Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "classes": [None, "array-like"],
        "query_strategy": [StrOptions({"random", "uncertainty"})],
        "n_rounds": [Interval(Integral, 1, None, closed="left")],
        "semi_supervised": ["boolean", StrOptions({"auto"})],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "sanitize_order": [None, Interval(Real, 1, None, closed="neither")],
        "memory": [None, str, HasMethods(["cache"])],
        "accountant": [None, RDPAccountant],
        "n_jobs": [None, Integral],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        n_teachers=250,
        aggregator=None,
        student=None,
        max_queries=None,
        epsilon=None,
        delta=1e-5,
        classes=None,
        query_strategy="random",
        n_rounds=1,
        semi_supervised="auto",
        warm_start=False,
        random_state=None,
        sanitize_order=None,
        memory=None,
        accountant=None,
        n_jobs=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.n_teachers = n_teachers
        self.aggregator = aggregator
        self.student = student
        self.max_queries = max_queries
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.query_strategy = query_strategy
        self.n_rounds = n_rounds
        self.semi_supervised = semi_supervised
        self.warm_start = warm_start
        self.random_state = random_state
        self.sanitize_order = sanitize_order
        self.memory = memory
        self.accountant = accountant
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------- helpers

    def _log(self, message, start=None):
        if self.verbose:
            took = f" ({time.perf_counter() - start:.2f}s)" if start is not None else ""
            print(f"[PATEClassifier] {message}{took}", flush=True)

    def _aggregator(self):
        if self.aggregator is None:
            return agg.GNMax(sigma=40.0)
        if isinstance(self.aggregator, str):
            return AGGREGATORS[self.aggregator]()
        return clone(self.aggregator)

    @staticmethod
    def _check_X(X):
        """Light validation: DataFrames pass through untouched (the teachers'
        own pipelines may select columns by name); arrays are checked for
        shape, emptiness and complex data, finiteness is left to the teachers."""
        if hasattr(X, "iloc"):
            return X
        return check_array(X, accept_sparse=["csr", "csc"], dtype=None, ensure_all_finite=False, allow_nd=True)

    def _split_private_public(self, X, y, X_public):
        if y is None:
            raise ValueError(
                "PATEClassifier requires y to be passed, but the target y is None: label the private rows "
                "and mark public rows with -1 (or pass X_public)."
            )
        y = check_array(column_or_1d(y, warn=True), ensure_2d=False, dtype=None, input_name="y")
        if _num_samples(X) != y.shape[0]:
            raise ValueError(f"X and y have inconsistent numbers of samples: {_num_samples(X)} and {y.shape[0]}.")
        public_mask = self._public_mask(y)
        private_idx = np.flatnonzero(~public_mask)
        if private_idx.size == 0:
            raise ValueError("no private rows: every label is -1; the teachers need labeled private rows.")
        y_private = y[private_idx]
        check_classification_targets(y_private)
        if np.unique(y_private).size < 2:
            raise ValueError(
                f"the private rows hold only one class ({y_private[0]!r}); a classifier needs at least 2 classes."
            )
        if X_public is not None:
            if public_mask.any():
                raise ValueError(
                    "public rows were given twice: as X_public and as rows of X with y == -1; use one of the two."
                )
            X_pub = X_public if _num_samples(X_public) == 0 else self._check_X(X_public)  # empty: error below
            if hasattr(X, "shape") and hasattr(X_pub, "shape") and X_pub.shape[1:] != X.shape[1:]:
                raise ValueError(
                    f"X_public must have the features of X: shape {X_pub.shape} vs {X.shape} (rows, features...)."
                )
        else:
            X_pub = _safe_indexing(X, np.flatnonzero(public_mask))
        if _num_samples(X_pub) == 0:
            raise ValueError(
                "no public rows: PATE labels public, unlabeled rows for the student. Pass X_public or mark "
                "public rows of X with y == -1."
            )
        return _safe_indexing(X, private_idx), y_private, X_pub

    # ----------------------------------------------------------------- fit

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, X_public=None, groups=None):
        """Train the teachers, label public rows with noise, train the student.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, ...)
            Private rows (labeled) and, optionally, public rows (``y == -1``).
        y : array-like of shape (n_samples,)
            Labels of the private rows; ``-1`` marks a public, unlabeled row.
        X_public : {array-like, DataFrame} of shape (n_public, ...), default=None
            Public unlabeled rows, instead of ``y == -1`` rows.
        groups : array-like of shape (n_samples,), default=None
            Privacy unit of each row of ``X`` (e.g. a user id); each group is
            used by one teacher only, so the guarantee is per group.

        Returns
        -------
        self : PATEClassifier
        """
        X = self._check_X(X)
        X_private, y_private, X_pub = self._split_private_public(X, y, X_public)
        classes = self._classes(y_private)
        n_private, n_public = y_private.shape[0], _num_samples(X_pub)
        if groups is not None:
            groups = column_or_1d(groups)
            if groups.shape[0] != _num_samples(X):
                raise ValueError(f"groups must have one entry per row of X ({_num_samples(X)}), got {groups.shape[0]}.")
            groups = groups[~self._public_mask(y)]
        reuse = self.warm_start and len(getattr(self, "teachers_", ())) == self.n_teachers
        if reuse and not np.array_equal(self.classes_, classes):
            raise ValueError(
                f"warm_start reuses teachers that vote over the classes {list(self.classes_)}, but this fit's classes "
                f"are {list(classes)}; fit with warm_start=False."
            )
        n_possible = n_public if self.max_queries is None else min(self.max_queries, n_public)
        aggregator = self._aggregator(n_possible)
        student = clone(self.student if self.student is not None else self.estimator)
        needs_proba = self.query_strategy == "uncertainty" or aggregator._needs_student
        if needs_proba and self.n_rounds > 1 and not hasattr(student, "predict_proba"):
            raise ValueError(
                "query_strategy='uncertainty' and InteractiveGNMax rounds need a student with predict_proba; "
                f"{type(student).__name__} has none."
            )
        semi_supervised = _is_semi_supervised(student) if self.semi_supervised == "auto" else self.semi_supervised
        # Fail on parameters before any teacher sees data (e.g. threshold > n_teachers).
        aggregator._validate(self.n_teachers)
        sanitize_order = self.sanitize_order if aggregator._sanitizable else None
        plan = self._plan_budget(aggregator, n_possible, sanitize_order)

        # Fitted attributes are set only once the whole fit succeeded.
        rng = agg.check_generator(self.random_state)
        start = time.perf_counter()
        partitions = disjoint_partitions(n_private, self.n_teachers, rng, groups)
        self._log(f"partitioned {n_private} private rows among {self.n_teachers} teachers", start)
        teacher_seeds = [int(rng.integers(2**63)) for _ in range(self.n_teachers)]
        _seed(student, int(rng.integers(2**63)))

        reservation = None
        if self.accountant is not None:  # refused here, before any teacher sees data
            reservation = self.accountant.reserve(
                plan.reserved,
                label=f"PATEClassifier({type(self.estimator).__name__}, {aggregator!r}, {plan.n_queries} queries)",
            )
        votes, answered, probas = [], [], []  # filled round by round
        try:
            teachers, labels, queried = self._query_rounds(
                aggregator, plan, teacher_seeds, student, partitions, X_private, y_private, X_pub, classes,
                semi_supervised, rng, reuse, votes, answered, probas,
            )  # fmt: skip
        except BaseException:
            # Nothing released yet: void the reservation. Otherwise the
            # answers are out and the worst case stays charged.
            if reservation is not None and not votes:
                self.accountant.cancel(reservation)
            raise
        votes = np.vstack(votes)
        answered = np.concatenate(answered)
        report = analyze(
            votes,
            aggregator,
            self.delta,
            answered=answered,
            student_proba=np.vstack(probas) if aggregator._needs_student else None,
            sanitize_order=sanitize_order,
            random_state=rng,
            budget=None if plan.budget_mu_squared is None else self.epsilon,
        )
        if reservation is not None:
            check, answer = aggregator.query_cost()
            charged = len(answered) * check + int(answered.sum()) * answer + plan.release
            self.accountant.settle(reservation, charged)
        labeled = np.flatnonzero(labels >= 0)
        if labeled.size == 0:
            raise ValueError(
                f"{aggregator!r} answered none of the {len(answered)} queries, so there is nothing to train the "
                "student on; lower the threshold, raise max_queries or use more public rows. The queries were still "
                f"paid for: epsilon {report.epsilon:.3g} at delta {self.delta:g}."
            )

        validate_data(self, X, skip_check_array=True)  # n_features_in_, feature_names_in_
        self.classes_ = classes
        self.teachers_ = teachers
        self.student_ = student
        self.aggregator_ = aggregator
        self.n_queries_ = len(answered)
        self.n_answered_ = int(labeled.size)
        self.public_labels_ = np.full(n_public, -1, dtype=_label_dtype(classes))
        self.public_labels_[labeled] = classes[labels[labeled]]
        self.public_queried_ = queried
        self.privacy_report_ = report
        self.privacy_spent_ = (report.epsilon, self.delta)
        return self

    def _classes(self, y_private):
        """The label set: the public ``classes`` parameter, else the private labels (with a warning)."""
        present = np.unique(y_private)
        if self.classes is None:
            warnings.warn(
                f"classes were not given, so they are taken from the private labels: {list(present)}. Which labels "
                "occur in the private data is then published (a record with a new label adds a class the student "
                "can output). Pass PATEClassifier(classes=...) from public knowledge to silence this warning.",
                PrivacyLeakWarning,
                stacklevel=3,
            )
            return present
        classes = np.asarray(self.classes)
        if classes.ndim != 1 or np.unique(classes).size != classes.size or classes.size < 2:
            raise ValueError(
                f"classes must be a 1-d list of at least 2 distinct labels, got {self.classes!r}."
            )
        unknown = np.setdiff1d(present, classes)
        if unknown.size:
            raise ValueError(
                f"y holds {unknown.size} label(s) that are not in classes (e.g. {unknown[0]!r}); add them to "
                "classes or relabel those rows."
            )
        return np.sort(classes)

    def _aggregator(self, n_possible):
        """The aggregator object; with a budget and no aggregator, GNMax with noise calibrated to it."""
        if self.aggregator is None:
            if self.epsilon is None:
                return agg.GNMax(sigma=40.0)
            if self.max_queries is not None:  # spend the budget on max_queries answers
                return agg.GNMax.for_budget(self.epsilon, self.delta, n_possible, self._release_order(agg.GNMax))
            # Noise a third of the ensemble: a 2-to-1 majority stands out of it.
            return agg.GNMax(sigma=self.n_teachers / 3.0)
        if isinstance(self.aggregator, str):
            return AGGREGATORS[self.aggregator]()
        return clone(self.aggregator)

    def publishable_epsilon(self, n_public):
        """The most a fit with these parameters can publish, known before it runs.

        The a-priori cost of ``min(max_queries, n_public)`` queries, all
        answered, with the sanitized release, or the ``epsilon`` budget if
        that is smaller. Needs no data: for plots and for planning.

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.

        Returns
        -------
        epsilon : float
        """
        n_possible = n_public if self.max_queries is None else min(self.max_queries, n_public)
        aggregator = self._aggregator(n_possible)
        plan = self._plan_budget(aggregator, n_possible, self._release_order(aggregator))
        return plan.reserved.epsilon(self.delta)[0]

    def _release_order(self, aggregator):
        return self.sanitize_order if aggregator._sanitizable else None

    def _plan_budget(self, aggregator, n_possible, sanitize_order):
        """How many queries the fit may submit, and under which guarantee, before any teacher is trained."""
        release = agg._release_cost(sanitize_order)
        check, answer = aggregator.query_cost()
        apriori = aggregator.apriori_cost(n_possible) + release
        if self.epsilon is None or apriori.epsilon(self.delta)[0] <= self.epsilon:
            return _Plan(n_possible, None, release, apriori)
        if not aggregator.is_private:
            raise ValueError(f"epsilon={self.epsilon} is a budget, but {aggregator!r} is not private; use a noisy one.")
        if release.epsilon(self.delta)[0] >= self.epsilon:
            raise ValueError(
                f"the sanitized release at sanitize_order={sanitize_order} alone costs more than epsilon="
                f"{self.epsilon}; use sanitize_order=None or a larger epsilon."
            )
        if check.is_zero:  # every query is answered: the number of queries is known in advance
            n_queries = largest_count(answer, self.epsilon, self.delta, n_possible, fixed=release)
            if n_queries < 1:
                raise ValueError(
                    f"epsilon={self.epsilon} does not cover one query of {aggregator!r} at delta={self.delta:g}; "
                    "raise epsilon, or the noise (e.g. GNMax.for_budget), or use more teachers."
                )
            return _Plan(n_queries, None, release, aggregator.apriori_cost(n_queries) + release)
        # A filter (Smith & Thakurta 2022): queries run while the charges stay within mu^2.
        budget = gaussian_budget(self.epsilon, self.delta, fixed=release)
        if budget < check.mu_squared + answer.mu_squared:
            raise ValueError(
                f"epsilon={self.epsilon} does not cover one query of {aggregator!r} at delta={self.delta:g}; raise "
                "epsilon or the noise (e.g. ConfidentGNMax.for_budget)."
            )
        return _Plan(n_possible, budget, release, Cost(mu_squared=budget) + release)

    def _query_rounds(
        self, aggregator, plan, teacher_seeds, student, partitions, X_private, y_private, X_pub, classes,
        semi_supervised, rng, reuse, votes, answered, probas,
    ):  # fmt: skip
        """Fit the teachers, then, round by round, choose queries, vote, aggregate and fit the student.

        Appends each round's votes, answered mask and student probabilities
        to ``votes``, ``answered``, ``probas`` as soon as it is aggregated.
        Under a budget (``plan.budget_mu_squared``), each round may spend its
        share of the budget (cumulatively) and a query is submitted only if
        it fits even if answered: a privacy filter in Gaussian DP.
        """
        # One joblib task per batch of teachers: data is shipped once per batch.
        batches = np.array_split(np.arange(self.n_teachers), min(effective_n_jobs(self.n_jobs), self.n_teachers))
        teachers = self.teachers_ if reuse else None
        n_public = _num_samples(X_pub)
        labels = np.full(n_public, -1, dtype=np.int64)  # class index of each public row, -1: none
        queried = np.zeros(n_public, dtype=bool)
        check, answer = aggregator.query_cost()
        per_query = check.mu_squared + answer.mu_squared
        spent = 0.0  # mu^2 charged so far (filter only)
        student_fitted = False
        round_sizes = [len(chunk) for chunk in np.array_split(np.arange(plan.n_queries), self.n_rounds)]
        for round_number, size in enumerate(round_sizes):
            candidates = np.flatnonzero(~queried)
            if plan.budget_mu_squared is None:
                if size == 0:
                    continue
            else:  # this round's share of the budget; what earlier rounds left carries over
                round_budget = plan.budget_mu_squared * (round_number + 1) / self.n_rounds
                size = min(candidates.size, plan.n_queries - int(queried.sum()))
                if check.mu_squared > 0:  # rows that could be checked at all
                    size = min(size, int(np.floor((round_budget - spent) / check.mu_squared)))
                if round_budget - spent < per_query or size == 0:
                    continue
            if not student_fitted or self.query_strategy == "random":
                query_idx = rng.permutation(candidates)[:size]
            else:  # PATE 2017 App. C: the rows the current student is least sure of
                confidence = student.predict_proba(_safe_indexing(X_pub, candidates)).max(axis=1)
                query_idx = candidates[np.argsort(confidence + rng.uniform(0, 1e-9, candidates.size))[:size]]
            if plan.budget_mu_squared is None:
                query_idx = np.sort(query_idx)
            X_query = _safe_indexing(X_pub, query_idx)

            start = time.perf_counter()
            if teachers is None:
                args = (partitions, X_private, y_private, X_query, classes, len(batches), self.verbose >= 2)
                if self.memory is None:
                    teachers, round_votes = _train_teachers(_seeded_teachers(self.estimator, teacher_seeds), *args)
                else:  # the key needs only the seeds: teachers are built on a cache miss only
                    key = _teachers_key(self.estimator, teacher_seeds, *args[:5])
                    cached = check_memory(self.memory).cache(_train_teachers_pickled, ignore=["args"])
                    blob, round_votes = cached(key, (self.estimator, teacher_seeds, *args))
                    teachers = _PickledTeachers(blob, self.n_teachers)
                self._log(f"fitted {self.n_teachers} teachers and collected their votes on {size} rows", start)
            else:
                round_votes = sum(
                    Parallel(n_jobs=len(batches))(
                        delayed(_vote)([teachers[i] for i in batch], X_query, classes) for batch in batches
                    )
                )
                self._log(f"round {round_number + 1}: collected the teachers' votes on {size} rows", start)

            # Interactive rounds compare the teachers with the current student;
            # before any student exists, it is the uniform (uninformed) one.
            proba = None
            if aggregator._needs_student:
                proba = (
                    self._proba_in_classes(student, X_query, classes)
                    if student_fitted
                    else np.full(round_votes.shape, 1.0 / classes.size)
                )
            if plan.budget_mu_squared is None:
                round_labels, round_answered = aggregator.aggregate(
                    round_votes, random_state=rng, student_proba=proba, return_answered=True
                )
            else:
                round_labels, round_answered = self._filter(
                    aggregator, round_votes, proba, rng, round_budget - spent, check, answer
                )
                n_run = round_labels.size  # the rows submitted; the votes of the others are never released
                spent += n_run * check.mu_squared + int(round_answered.sum()) * answer.mu_squared
                query_idx, round_votes = query_idx[:n_run], round_votes[:n_run]
                proba = None if proba is None else proba[:n_run]
            queried[query_idx] = True
            labels[query_idx] = round_labels
            votes.append(round_votes)
            answered.append(round_answered)
            probas.append(proba)
            self._log(
                f"aggregated with {aggregator!r}: {np.count_nonzero(round_labels >= 0)} of {query_idx.size} answered"
            )
            if np.any(labels >= 0):
                self._fit_student(student, X_pub, labels, classes, semi_supervised)
                student_fitted = True

        if not votes:
            raise ValueError("no query was submitted; raise epsilon or max_queries, or give more public rows.")
        return teachers, labels, queried

    @staticmethod
    def _filter(aggregator, votes, proba, rng, room, check, answer):
        """Aggregate rows in order while the next one fits in ``room`` (mu^2) even if answered.

        Chunks of ``k`` rows that fit even if every one is answered are
        aggregated at once; a row-by-row filter would have admitted each of
        them, so the result is the same filter, vectorized.
        """
        per_query = check.mu_squared + answer.mu_squared
        labels, answered, done = [], [], 0
        while done < votes.shape[0]:
            k = min(int(np.floor(room / per_query)), votes.shape[0] - done)
            if k < 1:
                break
            chunk = slice(done, done + k)
            chunk_labels, chunk_answered = aggregator.aggregate(
                votes[chunk], random_state=rng, student_proba=None if proba is None else proba[chunk],
                return_answered=True,
            )  # fmt: skip
            room -= k * check.mu_squared + int(chunk_answered.sum()) * answer.mu_squared
            labels.append(chunk_labels)
            answered.append(chunk_answered)
            done += k
        if not labels:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=bool)
        return np.concatenate(labels), np.concatenate(answered)

    def _fit_student(self, student, X_pub, labels, classes, semi_supervised):
        """Fit the student on the labeled public rows (all public rows, -1 for the rest, if semi-supervised)."""
        start = time.perf_counter()
        rows = np.arange(labels.size) if semi_supervised else np.flatnonzero(labels >= 0)
        y_student = np.full(rows.size, -1, dtype=_label_dtype(classes))
        has_label = labels[rows] >= 0
        y_student[has_label] = classes[labels[rows][has_label]]
        try:
            student.fit(_safe_indexing(X_pub, rows), y_student)
        except ValueError as exc:
            raise ValueError(
                f"the student could not be fit on the {np.count_nonzero(has_label)} answered queries "
                f"({np.unique(y_student[has_label]).size} distinct labels): {exc}. Answer more queries "
                "(more public rows, max_queries, a lower threshold)."
            ) from exc
        self._log(f"fitted the student on {np.count_nonzero(has_label)} labeled public rows of {rows.size}", start)

    @staticmethod
    def _proba_in_classes(student, X, classes):
        """Student probabilities with columns in ``classes`` order (0 for unseen classes)."""
        proba = student.predict_proba(X)
        out = np.zeros((proba.shape[0], classes.size))
        out[:, np.searchsorted(classes, student.classes_)] = proba
        return out

    @staticmethod
    def _public_mask(y):
        """Rows labeled -1 (scikit-learn's semi-supervised convention)."""
        y = np.asarray(y)
        return np.zeros(y.shape[0], dtype=bool) if y.dtype.kind in "USb" else np.asarray(y == -1, dtype=bool)

    # ------------------------------------------------------------ publish

    def export_student(self):
        """The publishable artifact: an independent copy of the fitted student.

        A fitted ``PATEClassifier`` is private: it keeps its teachers (for
        ``warm_start``, more rounds, and analysis), which were trained on
        private rows, and its ``privacy_report_`` holds the data-dependent
        per-query costs derived from the raw votes. Publishing it (or its
        pickle) voids every guarantee. The student was trained only on
        public rows and the aggregator's noisy labels, so it is covered by
        the guarantee: publish this copy, together with ``privacy_spent_``
        (``privacy_report_.epsilon``), never the data-dependent
        ``privacy_report_.data_dependent_epsilon``.

        Returns
        -------
        student : estimator
            A deep copy of ``student_``; holds no reference to this object,
            the teachers, private rows or votes.
        """
        check_is_fitted(self, "student_")
        return copy.deepcopy(self.student_)

    # ------------------------------------------------------------- predict

    def _student_input(self, X):
        check_is_fitted(self, "student_")
        X = self._check_X(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        return X

    @available_if(_student_has("predict"))
    def predict(self, X):
        """Predict classes with the student.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        X = self._student_input(X)
        return self.student_.predict(X)

    @available_if(_student_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities from the student, columns in ``classes_`` order.

        Classes the student never saw (no answered query carried them) get
        probability 0.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        X = self._student_input(X)  # raises NotFittedError before student_ is read
        return self._proba_in_classes(self.student_, X, self.classes_)

    @available_if(_student_has("predict_proba"))
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def score(self, X, y, sample_weight=None):
        """Accuracy of the student on the labeled rows (``y != -1``).

        Rows labeled ``-1`` (public, unlabeled) are ignored, so that the
        ``y == -1`` convention works under ``GridSearchCV``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        y = column_or_1d(y)
        keep = np.flatnonzero(~self._public_mask(y))
        if keep.size == 0:
            raise ValueError("score needs labeled rows; every label is -1.")
        weights = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return super().score(_safe_indexing(X, keep), y[keep], sample_weight=weights)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        estimator_tags = get_tags(self.estimator)
        tags.input_tags.allow_nan = estimator_tags.input_tags.allow_nan
        tags.input_tags.sparse = estimator_tags.input_tags.sparse
        return tags
