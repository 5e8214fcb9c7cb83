"""PATEClassifier: partition -> teachers -> votes -> noisy aggregation -> student."""

import dataclasses
import time
from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone, is_classifier
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_is_fitted, column_or_1d, validate_data

from .._validation import (
    Count,
    EpsilonRange,
    NJobs,
    RealRange,
    check_classes,
    check_delta_for_rows,
    check_handles_unknown,
    check_noise_generator,
    check_rows,
    final_step,
    is_semi_supervised,
    label_dtype,
    numbers_within_float32,
    public_rows,
    split_private_public,
)
from ..base import PrivateClassifierMixin, charge_record, published_copy
from ..privacy import BudgetAccountant
from ..privacy.calibration import gaussian_budget, largest_count, release_cost
from ..privacy.cost import Cost, replace_one_cost
from ..privacy.report import filter_report
from ..privacy.smooth import MAX_SANITIZE_ORDER
from . import aggregators as agg
from ._partition import disjoint_partitions
from ._teachers import TeacherEnsemble, first_step, input_tags, non_finite_columns, seed_estimator
from .students import StudentInClasses, proba_in_classes

__all__ = ["PATEClassifier"]


def _budget_cost(cost, grouped):
    """What a fit costing ``cost`` (per group if ``grouped``) is charged to a budget, whose unit is replacing one row.

    With ``groups``, adding or removing a row changes one group and so one teacher: the fit's cost is stated for
    that. Replacing a row may move it to another group, changing two teachers: a removal and an addition, the
    conversion of :func:`~skpate.privacy.cost.replace_one_cost` (``mu^2`` times 4; a pure part doubled).
    """
    return replace_one_cost(cost, "add-remove") if grouped else cost


#: Rounds of uncertainty sampling of ``n_rounds="auto"``: the tabular recipe's, chosen on UCI Adult's evaluation half
#: (non-private tuning, disclosed; measured in docs/benchmarks/adult.md).
AUTO_ROUNDS = 5
#: Teachers of ``n_teachers="auto"`` where the budget buys enough answers with them, or without a budget (the papers').
AUTO_MIN_TEACHERS = 250


class _Plan(NamedTuple):
    """What a fit may spend, fixed before any teacher is trained (public quantities only)."""

    n_queries: int  # most queries the fit submits
    budget_mu_squared: float  # the filter's budget in Gaussian DP, or None: no filter needed
    release: Cost  # the sanitized release, if any
    reserved: Cost  # everything the fit can cost: what an accountant reserves
    query_strategy: str = "random"  # "auto" resolved
    n_rounds: int = 1  # "auto" resolved
    semi_supervised: bool = False  # "auto" resolved


class _Inputs(NamedTuple):
    """The validated inputs of a fit."""

    X: object  # as given (for n_features_in_)
    X_private: object
    y_private: np.ndarray
    X_public: object
    groups: np.ndarray  # privacy unit of each private row, or None
    classes: np.ndarray
    n_teachers: int  # ``n_teachers``, resolved (public)


class _Transcript:
    """What a fit's rounds released, in order. Private: it holds the raw votes of the submitted queries."""

    def __init__(self, n_public):
        self.labels = np.full(n_public, -1, dtype=np.int64)  # class index of each public row, -1: none
        self.queried = np.zeros(n_public, dtype=bool)
        self.noisy_votes = None  # the released noisy histogram of each public row (NaN: none), if released
        self.votes, self.answered, self.probas = [], [], []

    def add(self, rows, votes, labels, answered, proba, noisy_votes=None):
        self.queried[rows] = True
        self.labels[rows] = labels
        if noisy_votes is not None:
            if self.noisy_votes is None:
                self.noisy_votes = np.full((self.labels.size, votes.shape[1]), np.nan)
            self.noisy_votes[rows] = noisy_votes
        self.votes.append(votes)
        self.answered.append(answered)
        self.probas.append(proba)

    @property
    def n_queries(self):
        return int(sum(len(a) for a in self.answered))

    def charged(self, aggregator):
        """What the queries so far cost with the answer step charged where it ran (a filter's charges)."""
        check, answer = aggregator.query_cost()
        return self.n_queries * check + int(sum(a.sum() for a in self.answered)) * answer

    def stacked(self):
        probas = None if self.probas[0] is None else np.vstack(self.probas)
        return np.vstack(self.votes), np.concatenate(self.answered), probas


def _rows_to_vote(room, check, answer, limit):
    """How many rows a filter with ``room`` (mu^2) left could submit at most: all unanswered, checks only."""
    if room < check.mu_squared + answer.mu_squared:
        return 0
    if check.mu_squared == 0:  # every query is answered
        return min(limit, int(np.floor(room / answer.mu_squared)))
    return min(limit, int(np.floor(room / check.mu_squared)))


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


def _student_has(attr):
    """``available_if`` check: the fitted student, else the one that will be fit."""

    def check(self):
        if hasattr(self, "student_"):
            return hasattr(self.student_, attr)
        return hasattr(self._student_template(), attr)

    return check


def _knows_how_sure(student):
    return hasattr(student, "predict_proba") or hasattr(student, "decision_function")


def _is_composite(estimator):
    """Whether ``estimator`` routes columns to other estimators (a ColumnTransformer, a FeatureUnion)."""
    return hasattr(estimator, "transformers") or hasattr(estimator, "transformer_list")


def _confidence(student, X):
    """How sure ``student`` is of each row of ``X``: its top probability, else its top two decision scores' gap.

    Only the order within one student matters (uncertainty sampling ranks rows by it).
    """
    if hasattr(student, "predict_proba"):
        return student.predict_proba(X).max(axis=1)
    scores = np.asarray(student.decision_function(X), dtype=float)
    if scores.ndim == 1:  # two classes: the signed margin of the second
        return np.abs(scores)
    top_two = np.partition(scores, -2, axis=1)[:, -2:]
    return top_two[:, 1] - top_two[:, 0]


def _is_classifier(estimator):
    """``sklearn.base.is_classifier`` (a pipeline: its last step), or the old ``_estimator_type`` without tags."""
    try:
        return is_classifier(estimator)
    except AttributeError:  # no __sklearn_tags__: not a BaseEstimator
        return getattr(final_step(estimator), "_estimator_type", None) == "classifier"


def _check_classifiers(estimator, student):
    """Refuse a teacher or student that is not a classifier, or teachers whose encoders raise on unknown categories.

    From the parameters, before any row is read.
    """
    check_handles_unknown(estimator, "PATEClassifier", param="estimator", fitted_on="private")
    if not _is_classifier(estimator):
        raise ValueError(
            f"estimator must be a classifier (sklearn.base.is_classifier, or a pipeline ending in one), got "
            f"{type(final_step(estimator)).__name__}: each teacher votes for a class. Use a classifier, e.g. "
            "LogisticRegression instead of LinearRegression (a semi-supervised classifier works too)."
        )
    if student is not None and not _is_classifier(student):
        raise ValueError(
            f"student must be a classifier (sklearn.base.is_classifier, or a pipeline ending in one), got "
            f"{type(final_step(student)).__name__}: it learns the teachers' labels. Use a classifier, or, to "
            "regress the noisy vote counts, skpate.pate.students.VoteRegressionClassifier(regressor)."
        )


def _fits_votes(estimator):
    """Whether ``estimator`` learns from noisy vote counts (:class:`skpate.pate.students.VoteRegressionClassifier`)."""
    return bool(getattr(final_step(estimator), "_skpate_fits_votes", False))


class PATEClassifier(PrivateClassifierMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
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
        A semi-supervised one (from ``sklearn.semi_supervised``, or
        :class:`skpate.pate.semi_supervised.PseudoLabelClassifier`, possibly as a
        pipeline's final step) fits its private partition and every public
        row, labeled ``-1``: the public features cost no privacy, and each
        teacher still depends on one partition only.
    n_teachers : int or "auto", default=250
        Number of teachers, i.e. of disjoint partitions of the private rows.
        ``"auto"``: 250, or, with ``epsilon`` and the budget noise below (no
        ``aggregator``, no ``max_queries``), more where 250 teachers would
        buy fewer than 800 answers at GNMax's budget noise (also with a
        vote-count student, whose histograms carry twice that noise)
        (:func:`skpate.teachers_for_budget`: for two classes 493 at epsilon
        0.5, 262 at 1, 250 from 1.05 on; for ten classes 584 at epsilon 1,
        250 from 2.6 on). A
        function of ``epsilon``, ``delta`` and the number of classes: public,
        it spends nothing. The answers a budget buys grow as the square of
        the number of teachers; "auto" trades each teacher's accuracy for
        more answers where they are few (measured on Fashion-MNIST at epsilon
        1: ``docs/benchmarks/fashion_mnist.md``). Check that each
        teacher still gets enough rows to learn from.
    aggregator : aggregator object or str, default=None
        Noisy aggregation of the votes, from :mod:`skpate.pate.aggregators`, or
        one of ``"plurality"``, ``"lnmax"``, ``"gnmax"``, ``"gaussian-histogram"``, ``"confident-gnmax"``,
        ``"interactive-gnmax"``, ``"nzc"`` with default parameters. None means
        ``GNMax(sigma=40)`` without a budget; with ``epsilon``, GNMax whose
        noise is calibrated to it: ``GNMax.for_budget(epsilon, delta,
        max_queries)`` when ``max_queries`` is given, else ``sigma =
        n_teachers / (1.75 sqrt(n_classes / 2))`` (``n_teachers / 1.75`` for
        two classes) with as many queries as the budget allows, or less noise
        where that would be more than 2,000 queries or the public rows (see
        :meth:`GNMax.for_ensemble`; chosen on UCI Adult and Fashion-MNIST,
        ``docs/benchmarks/adult.md`` and ``docs/benchmarks/fashion_mnist.md``).
        With a student that learns from vote counts (below),
        :class:`~skpate.GaussianHistogram` in place of GNMax, the same way.
        ``InteractiveGNMax`` compares the teachers with
        the student of the previous round (the uniform distribution in the
        first round, which makes it Confident-GNMax with threshold
        ``threshold + n_teachers / n_classes``).
    student : estimator object, default=None
        Classifier trained on the answered public rows and their noisy labels.
        None means a clone of ``estimator``. A
        :class:`skpate.pate.students.VoteRegressionClassifier` (or a ``Pipeline``
        ending in one) is trained on the released noisy vote histograms
        instead, and needs an aggregator that releases them
        (:class:`~skpate.GaussianHistogram`); its ``classes`` are set to the
        label set.
    max_queries : int, default=None
        At most this many public rows are submitted to the teachers; None
        submits them all (or, with ``epsilon``, as many as it allows). Every
        submitted query is paid for.
    epsilon : float > 0 or None, default=1.0
        The privacy budget, fixed before the fit, at ``delta``, covering
        everything the fit releases (threshold checks, answers, the
        sanitized release). The fit submits public rows (in the order of
        ``query_strategy``) until the next query could exceed it,
        ``max_queries`` is reached or the public rows run out; the guarantee
        is then the budget. Aggregators that answer every query (GNMax,
        LNMax, NZC) get as many queries as the budget covers a priori;
        Confident- and Interactive-GNMax run under a privacy filter in
        Gaussian DP (Smith & Thakurta 2022), which charges the answer step
        only where it runs and so answers more. None: no budget (the
        papers' protocol, e.g. ``max_queries`` answers at a given noise); the
        publishable epsilon is then the a-priori cost of the submitted queries.
    delta : float, default=1e-5
        The ``delta`` of the reported (epsilon, delta); should be well below
        ``1 / n_private_rows``.
    classes : array-like of shape (n_classes,), default=None
        The label set, from public knowledge (e.g. the dataset's schema).
        None takes it from the private labels and raises a
        :class:`~skpate.PrivacyLeakWarning`: which labels occur in the
        private data is then published. A label ``-1`` in ``classes`` is a
        class, and public rows must then come as ``X_public``.
    query_strategy : {"auto", "random", "uncertainty"}, default="auto"
        How each round picks its queries among the public rows not yet
        queried: at random, or (after the first, random round) the rows where
        the current student is least sure (PATE 2017, App. C): its top
        probability is lowest or, for a student without ``predict_proba``
        (e.g. a ``RidgeClassifier``), its two highest decision scores are
        closest. Costs no privacy: the student is already a DP output.
        ``"auto"``: ``"uncertainty"`` when the fit has a budget (``epsilon``)
        and the student can say how sure it is, else ``"random"``.
    n_rounds : int or "auto", default="auto"
        The queries are split into this many rounds; the student is retrained
        after each, and feeds the next round's query choice and
        ``InteractiveGNMax``. The cost of all rounds composes in the report.
        ``"auto"``: 5 rounds with uncertainty sampling, else 1. With a
        budget, the default GNMax, uncertainty sampling and 5 rounds are the
        tabular recipe's settings, chosen on UCI Adult's evaluation half
        (non-private tuning, disclosed); they replaced ``sigma = n_teachers /
        3`` and random queries in one round. The default fit against the
        recipe and the previous default: ``docs/benchmarks/adult.md``.
    semi_supervised : bool or "auto", default="auto"
        Give the student every public row, labeled ``-1`` where there is no
        answer (scikit-learn's convention). ``"auto"``: when the student is
        from ``sklearn.semi_supervised``, a
        :class:`~skpate.pate.semi_supervised.PseudoLabelClassifier` or a
        ``CNNClassifier(semi_supervised=True)``.
    warm_start : bool, default=False
        Reuse the teachers of the previous ``fit`` (same ``n_teachers``)
        instead of training new ones: to ask them more queries or other
        public rows, or to compare aggregators or students. A warm-start fit
        must be given **the same private rows** (``X``, ``y``, ``groups``): its
        answers come from teachers trained on the previous fit's private
        rows, and its new private rows are not used. That cannot be fully
        checked without keeping a fingerprint of the private rows, which
        would itself be derived from them, so only public quantities are
        compared: the classes, whether ``groups`` is given and, without
        ``groups``, the number of private rows (public under replacement of
        one record; with ``groups`` it is private and not compared); for
        semi-supervised teachers, the public rows too (they fitted them). A
        difference raises a ``ValueError``: fit with ``warm_start=False`` to
        train teachers on new private rows. Every query is paid for again.
    random_state : int, RandomState instance or None, default=None
        Seeds, in this order, the partition, the teachers' and the student's
        own seeds, then, round by round, the choice of queries and the noise.
        None (default) draws fresh OS entropy at every fit; a seed makes the
        noise reproducible by anyone who knows it (:class:`~skpate.SeededNoiseWarning`).
    sanitize_order : float in (1, 1e6] or None, default=None
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
    accountant : skpate.privacy.RDPAccountant or PrivacyLedger, default=None
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
    n_teachers_ : int
        The number of teachers trained (``n_teachers``, resolved).
    teachers_ : TeacherEnsemble
        The fitted teachers, a sequence of estimators (with ``memory``,
        unpickled on first use), and the votes they cast, kept so that a
        ``warm_start`` refit votes only on rows it has not seen. Trained on
        private data: never publish them, nor this object; publish
        :meth:`export_model`.
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
        Queries the teachers answered (``privacy_report_.n_answered``).
    n_labeled_ : int
        Public rows with a label for the student: the teachers' answers and,
        with ``InteractiveGNMax``, the confident student's own labels.
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
    query_strategy_ : {"random", "uncertainty"}
        ``query_strategy``, resolved.
    n_rounds_ : int
        ``n_rounds``, resolved.
    semi_supervised_ : bool
        ``semi_supervised``, resolved.
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

    Finite numbers beyond float32's range (a 1e39) are set to its ends before
    the teachers see them: scikit-learn's trees compute in float32 and would
    refuse them, a refusal that would depend on one private row; no tree can
    tell the two apart. Teachers whose encoders raise on an unknown category
    (``handle_unknown="error"``) are refused from their parameters: fitted on
    a partition, they would fail on a public row whose category it never
    showed.

    The guarantee is per record under replacement of one record, or per group
    when ``groups`` is given: adding or removing one whole group, or changing
    any of its rows. Replacing one group by another (a different label) may
    change two teachers, so it costs twice the reported Gaussian-DP ``mu``:
    what an ``accountant``, whose unit is one row, is charged.

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
    >>> epsilon, delta = clf.privacy_spent_  # what to publish with clf.export_model()
    >>> epsilon <= 2.0
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "n_teachers": [Count(1), StrOptions({"auto"})],
        "aggregator": [None, HasMethods(["aggregate", "privacy_cost"]), StrOptions(set(agg.AGGREGATORS))],
        "student": [None, HasMethods(["fit", "predict"])],
        "max_queries": [None, Count(1)],
        "epsilon": [None, EpsilonRange()],
        "delta": [RealRange(0, 1, closed="neither")],
        "classes": [None, "array-like"],
        "query_strategy": [StrOptions({"auto", "random", "uncertainty"})],
        "n_rounds": [Count(1), StrOptions({"auto"})],
        "semi_supervised": ["boolean", StrOptions({"auto"})],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "sanitize_order": [None, RealRange(1, MAX_SANITIZE_ORDER, closed="right")],
        "memory": [None, str, HasMethods(["cache"])],
        "accountant": [None, BudgetAccountant],
        "n_jobs": [NJobs()],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        *,
        n_teachers=250,
        aggregator=None,
        student=None,
        max_queries=None,
        epsilon=1.0,
        delta=1e-5,
        classes=None,
        query_strategy="auto",
        n_rounds="auto",
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

    def _student_template(self):
        """The unfitted student: ``student``, or ``estimator`` when it is None."""
        return self.student if self.student is not None else self.estimator

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
        # 1. Validate the inputs; 2. plan what the fit may spend, before any teacher sees data.
        data = self._validate_inputs(X, y, X_public, groups)
        aggregator, student, plan = self._plan(data)
        self.check_public(data.X_public)  # public rows the models cannot read: refused before the budget
        # 3. Partition the private rows, seed the teachers and the student (fitted attributes are set
        #    only once the whole fit succeeded).
        rng = check_noise_generator(self.random_state)  # OS entropy when unseeded, or under an unseeded caller
        # With groups, the partition reads them (their number is private, and a hashed group may leave a teacher
        # none): its refusals are outputs too, so the budget is reserved first and they are charged.
        grouped = data.groups is not None
        reservation = self._reserve(plan, aggregator, grouped) if grouped else None
        try:
            ensemble = self._ensemble(data, rng)
        except BaseException:
            if reservation is not None:
                self.accountant.settle(reservation, _budget_cost(plan.reserved, grouped))
            raise
        seed_estimator(student, int(rng.integers(2**63)))
        # 4. Reserve the budget, run the rounds, settle the budget with what they released.
        transcript = _Transcript(_num_samples(data.X_public))
        if not grouped:
            reservation = self._reserve(plan, aggregator, grouped)
        try:
            self._run_rounds(ensemble, aggregator, student, plan, data, rng, transcript)
        except BaseException:
            # Fail closed, as every estimator: once private rows were read, whether and how the fit failed is an
            # output too, so the reservation stays charged in full.
            if reservation is not None:
                self.accountant.settle(reservation, _budget_cost(plan.reserved, grouped))
            raise
        if reservation is not None:
            spent = transcript.charged(aggregator) + plan.release
            self.accountant.settle(reservation, _budget_cost(spent, grouped))
        # 5. Account for what was released; 6. set the fitted attributes.
        report = self._account(transcript, aggregator, plan, rng, grouped)
        return self._set_fitted(data, ensemble, student, aggregator, plan, transcript, report)

    # --------------------------------------------------- the phases of fit

    def _validate_inputs(self, X, y, X_public, groups):
        _check_classifiers(self.estimator, self.student)  # the parameters only: before any row is read
        # With groups, the number of private rows is private: none at all is refused as too few groups, charged.
        relation = "replace-one" if groups is None else "groups"
        X = check_rows(X, allow_empty=groups is not None and self.classes is not None)
        X_private, y_private, X_pub = split_private_public(X, y, X_public, self.classes, "PATEClassifier", relation)
        # Floats beyond float32's range are set to its ends: tree teachers would refuse them (numbers_within_float32).
        X_private, X_pub = numbers_within_float32(X_private), numbers_within_float32(X_pub)
        if groups is not None:
            groups = column_or_1d(groups)
            if groups.shape[0] != _num_samples(X):
                # No count: with groups, the number of rows is private (a group may be added or removed).
                raise ValueError("groups must have one entry per row of X (private and public), got another length.")
            groups = groups[~public_rows(y, self.classes)]
        classes = check_classes(self.classes, y_private, "PATEClassifier", stacklevel=5)  # past the noise scope
        check_delta_for_rows(self, y_private.shape[0], relation)
        n_teachers = self.resolve_n_teachers(classes.size)
        if self._reuses_teachers(n_teachers):
            self._check_warm_start(classes, y_private.shape[0], groups is not None, X_pub)
        return _Inputs(X, X_private, y_private, X_pub, groups, classes, n_teachers)

    def _check_warm_start(self, classes, n_private, grouped, X_pub):
        """Refuse reusing the teachers on other data, from public quantities only (see ``warm_start``)."""
        if not np.array_equal(self.classes_, classes):
            # classes_ was published with the previous student; this fit's classes only if given (public).
            these = f"are {list(classes)}" if self.classes is not None else "differ (taken from the private labels)"
            raise ValueError(
                f"warm_start reuses teachers that vote over the classes {list(self.classes_)}, but this fit's classes "
                f"{these}; fit with warm_start=False."
            )
        previous_grouped = getattr(self.teachers_, "grouped", False)
        if grouped != previous_grouped:
            raise ValueError(
                f"warm_start reuses teachers partitioned {'by' if previous_grouped else 'without'} groups, but this "
                f"fit is {'given' if grouped else 'not given'} groups; pass the previous fit's private rows and "
                "groups, or fit with warm_start=False to train teachers on these rows."
            )
        # Without groups the number of private rows is public (replace-one); with groups it is not compared.
        if not grouped and n_private != self.teachers_.n_private:
            raise ValueError(
                "warm_start reuses teachers trained on the previous fit's private rows, but this fit has another "
                "number of private rows: a warm-start fit must be given the same private rows; fit with "
                "warm_start=False to train teachers on new private rows."
            )
        if self.teachers_.fitted_other_public_rows(X_pub):
            raise ValueError(
                "warm_start reuses semi-supervised teachers, which also fitted the previous fit's public rows, but "
                "this fit's public rows differ; fit with warm_start=False to train them with these rows."
            )

    def _reuses_teachers(self, n_teachers):
        return self.warm_start and len(getattr(self, "teachers_", ())) == n_teachers

    def resolve_n_teachers(self, n_classes):
        """How many teachers a fit with these parameters trains, known before it runs.

        ``n_teachers`` itself, or for ``"auto"`` 250, or more where 250 would
        buy fewer than 800 answers of the ``epsilon`` budget
        (:func:`skpate.teachers_for_budget`). A function of public parameters
        only; for planning, and for fixing an aggregator's noise in advance.

        Parameters
        ----------
        n_classes : int or None
            Number of classes (public). None: as when ``classes`` is not
            given, the rule cannot apply and ``"auto"`` means 250.

        Returns
        -------
        n_teachers : int
        """
        if self.n_teachers != "auto":
            return int(self.n_teachers)  # a Python int (see Count)
        if self.epsilon is None or self.aggregator is not None or self.max_queries is not None or n_classes is None:
            return AUTO_MIN_TEACHERS  # the rule sizes the ensemble for the budget noise, which is relative to it
        return max(AUTO_MIN_TEACHERS, agg.teachers_for_budget(self.epsilon, self.delta, n_classes))

    def _plan(self, data):
        """The aggregator, the student and what the fit may spend: public quantities only."""
        n_possible = self._n_possible(_num_samples(data.X_public))
        aggregator = self._aggregator(n_possible, data.classes.size, data.n_teachers)
        aggregator._validate(data.n_teachers)  # e.g. threshold > n_teachers, before any teacher sees data
        student = clone(self._student_template())
        if _fits_votes(student):
            if not aggregator.releases_votes:
                raise ValueError(
                    f"the student {type(final_step(student)).__name__} learns from noisy vote counts, which "
                    f"{aggregator!r} does not release; use aggregator='gaussian-histogram' (GaussianHistogram), or "
                    "aggregator=None, which picks it."
                )
            if self.semi_supervised is True:
                raise ValueError(
                    "semi_supervised=True gives the student unlabeled rows, but a student that fits vote counts "
                    "learns from the answered rows only; use semi_supervised='auto' or False."
                )
            final_step(student).set_params(classes=data.classes)  # the columns of the released histograms
        elif self.semi_supervised is True and not is_semi_supervised(student):
            # It would fit the -1 rows as a class of their own and predict -1 (silently wrong, seen on 592 of 600).
            raise ValueError(
                f"semi_supervised=True gives the student rows labeled -1, which {type(final_step(student)).__name__} "
                "would learn as a class; use a semi-supervised student (sklearn.semi_supervised, "
                "skpate.pate.semi_supervised.PseudoLabelClassifier, CNNClassifier(semi_supervised=True)) or "
                "semi_supervised='auto'."
            )
        strategy = self.query_strategy
        if strategy == "auto":  # a budget-first fit also chooses which rows its budget buys answers for
            strategy = "uncertainty" if self.epsilon is not None and _knows_how_sure(student) else "random"
        n_rounds = int(self.n_rounds) if self.n_rounds != "auto" else AUTO_ROUNDS if strategy == "uncertainty" else 1
        if n_rounds > 1 and strategy == "uncertainty" and not _knows_how_sure(student):
            raise ValueError(
                "query_strategy='uncertainty' rounds need a student with predict_proba or decision_function; "
                f"{type(student).__name__} has neither."
            )
        if n_rounds > 1 and aggregator._needs_student and not hasattr(student, "predict_proba"):
            raise ValueError(
                f"InteractiveGNMax rounds need a student with predict_proba; {type(student).__name__} has none."
            )
        plan = self._plan_budget(aggregator, n_possible, self._release_order(aggregator))
        semi_supervised = is_semi_supervised(student) if self.semi_supervised == "auto" else self.semi_supervised
        return (
            aggregator,
            student,
            plan._replace(query_strategy=strategy, n_rounds=n_rounds, semi_supervised=bool(semi_supervised)),
        )

    def _ensemble(self, data, rng):
        """The teachers of this fit: reused (``warm_start``) or partitioned and seeded, not yet trained."""
        # The partition and the seeds are drawn even when reused, so that the queries and the noise
        # that follow do not depend on warm_start.
        start = time.perf_counter()
        n_teachers = data.n_teachers
        try:
            partitions = disjoint_partitions(data.y_private.shape[0], n_teachers, rng, data.groups)
        except ValueError as error:
            if self.n_teachers != "auto":
                raise
            raise ValueError(f'{error} (n_teachers="auto" chose {n_teachers} for epsilon={self.epsilon}.)') from None
        self._log(f"partitioned the private rows among {n_teachers} teachers", start)  # counts are private
        seeds = [int(rng.integers(2**63)) for _ in range(n_teachers)]
        if self._reuses_teachers(n_teachers):
            return self.teachers_
        return TeacherEnsemble(self.estimator, seeds, partitions, data.classes, self.n_jobs, data.groups is not None)

    def _reserve(self, plan, aggregator, grouped):
        """Reserve what the fit can cost with the accountant, which refuses it before any teacher is trained.

        A budget is for replacing one row; with ``groups`` the fit's cost is per group, charged as its
        replace-one cost (:func:`_budget_cost`).
        """
        if self.accountant is None:
            return None
        label = f"PATEClassifier({type(self.estimator).__name__}, {aggregator!r}, {plan.n_queries} queries)"
        if grouped:
            if plan.release.release is not None:  # no replace-one bound for the smooth-sensitivity release here
                raise ValueError(
                    "with groups, a fit charged to a budget (accountant=...) has no replace-one cost for the "
                    f"sanitized release of sanitize_order={self.sanitize_order}: the budget's unit is one row. Pass "
                    "sanitize_order=None, or fit without an accountant (privacy_spent_ then states the per-group "
                    "guarantee)."
                )
            label += " (per-group cost, charged for replacing one row)"
        cost = _budget_cost(plan.reserved, grouped)
        return self.accountant.reserve(cost, label=label, **charge_record(self))

    def _run_rounds(self, ensemble, aggregator, student, plan, data, rng, transcript):
        """Round by round: choose queries, get the teachers' votes, aggregate, fit the student.

        The first round's votes come with the teachers' training (one joblib
        task per batch of teachers). Under a budget (``plan.budget_mu_squared``)
        each round may spend its share of it (cumulatively), and a query is
        submitted only if it fits even if answered: a privacy filter in
        Gaussian DP. Everything released is recorded in ``transcript``.
        """
        check, answer = aggregator.query_cost()
        round_sizes = [len(chunk) for chunk in np.array_split(np.arange(plan.n_queries), plan.n_rounds)]
        fitted_student = None
        for round_number, size in enumerate(round_sizes):
            room = None
            if plan.budget_mu_squared is not None:  # this round's share; what earlier rounds left carries over
                share = plan.budget_mu_squared * (round_number + 1) / plan.n_rounds
                room = share - transcript.charged(aggregator).mu_squared
                size = _rows_to_vote(room, check, answer, plan.n_queries - transcript.n_queries)
            size = min(size, int(np.count_nonzero(~transcript.queried)))
            if size <= 0:
                continue
            strategy = plan.query_strategy
            rows = self._choose_queries(data.X_public, transcript.queried, size, fitted_student, strategy, rng)
            start = time.perf_counter()
            if ensemble.is_fitted:
                votes = ensemble.votes(data.X_public, rows)
                self._log(f"round {round_number + 1}: collected the teachers' votes on {size} rows", start)
            else:
                memory = self.memory if isinstance(self.random_state, Integral) else None  # unseeded: never hit again
                votes = ensemble.fit(data.X_private, data.y_private, data.X_public, rows, memory, self.verbose >= 2)
                self._log(f"fitted {len(ensemble)} teachers and collected their votes on {size} rows", start)

            # Interactive rounds compare the teachers with the current student; before any student exists,
            # it is the uniform (uninformed) one.
            proba = None
            if aggregator._needs_student:
                proba = (
                    proba_in_classes(fitted_student, _safe_indexing(data.X_public, rows), data.classes)
                    if fitted_student is not None
                    else np.full(votes.shape, 1.0 / data.classes.size)
                )
            noisy_votes = None
            if aggregator.releases_votes:  # always answers, so no filter: the histogram is released, its argmax labels
                noisy_votes = aggregator.noisy_votes(votes, rng)
                labels, answered = np.argmax(noisy_votes, axis=1), np.ones(votes.shape[0], dtype=bool)
            elif room is None:
                labels, answered = aggregator.aggregate(votes, rng, student_proba=proba, return_answered=True)
            else:
                labels, answered = _filter(aggregator, votes, proba, rng, room, check, answer)
            if fitted_student is None:  # the uniform stand-in is no student: it labels nothing itself
                labels = np.where(answered, labels, -1)
            n_run = labels.size  # the rows submitted; the votes of the others are never released
            transcript.add(
                rows[:n_run], votes[:n_run], labels, answered, None if proba is None else proba[:n_run], noisy_votes
            )
            self._log(f"aggregated with {aggregator!r}: {np.count_nonzero(labels >= 0)} of {n_run} answered")
            if np.any(transcript.labels >= 0):
                self._fit_student(student, data.X_public, transcript, data.classes, plan.semi_supervised)
                fitted_student = student
        if not transcript.votes:
            raise ValueError("no query was submitted; raise epsilon or max_queries, or give more public rows.")

    def _choose_queries(self, X_public, queried, size, student, strategy, rng):
        """``size`` public rows not yet queried: at random, or where the fitted ``student`` is least sure."""
        candidates = np.flatnonzero(~queried)
        if student is None or strategy == "random":
            rows = rng.permutation(candidates)[:size]
        else:  # PATE 2017 App. C: the rows the current student is least sure of
            confidence = _confidence(student, _safe_indexing(X_public, candidates))
            rows = candidates[np.argsort(confidence + rng.uniform(0, 1e-9, candidates.size))[:size]]
        # A filter submits the rows in this order; otherwise all of them go, as a set.
        return rows if self.epsilon is not None else np.sort(rows)

    def _account(self, transcript, aggregator, plan, rng, grouped):
        votes, answered, probas = transcript.stacked()
        report = filter_report(  # the filter ran here, so the budget guarantee is ours to give
            votes,
            aggregator,
            self.delta,
            None if plan.budget_mu_squared is None else self.epsilon,
            answered=answered,
            student_proba=probas if aggregator._needs_student else None,
            sanitize_order=self._release_order(aggregator),
            random_state=rng,
        )
        if not np.any(transcript.labels >= 0):
            raise ValueError(
                f"{aggregator!r} answered none of the {report.n_queries} queries, so there is nothing to train the "
                "student on; lower the threshold, raise max_queries or use more public rows. The queries were still "
                f"paid for: epsilon {report.epsilon:.3g} at delta {self.delta:g}."
            )
        if report.budget is None and self.epsilon is not None:  # noise calibrated to it, no filter: still the budget
            report = dataclasses.replace(report, budget=float(self.epsilon))
        if grouped:  # the epsilon is per group: a report must not call it a guarantee for replacing one row
            report = dataclasses.replace(report, neighboring="groups")
        return report

    def _set_fitted(self, data, ensemble, student, aggregator, plan, transcript, report):
        validate_data(self, data.X, skip_check_array=True)  # n_features_in_, feature_names_in_
        labeled = np.flatnonzero(transcript.labels >= 0)
        self.classes_ = data.classes
        self.teachers_ = ensemble
        self.n_teachers_ = len(ensemble)
        self.student_ = student
        self.aggregator_ = aggregator
        self.query_strategy_ = plan.query_strategy
        self.n_rounds_ = plan.n_rounds
        self.semi_supervised_ = plan.semi_supervised
        self.n_queries_ = transcript.n_queries
        self.n_answered_ = report.n_answered
        self.n_labeled_ = int(labeled.size)
        self.public_labels_ = np.full(transcript.labels.size, -1, dtype=label_dtype(data.classes))
        self.public_labels_[labeled] = data.classes[transcript.labels[labeled]]
        self.public_queried_ = transcript.queried
        self.privacy_report_ = report
        self.privacy_spent_ = (report.epsilon, self.delta)
        return self

    # ---------------------------------------------------- plan and budget

    def _aggregator(self, n_possible, n_classes, n_teachers):
        """The aggregator object; with a budget and no aggregator, GNMax with noise calibrated to it.

        GaussianHistogram instead of GNMax for a student that learns from the noisy vote counts.
        """
        if self.aggregator is None:
            default = agg.GaussianHistogram if _fits_votes(self._student_template()) else agg.GNMax
            if self.epsilon is None:
                return default(sigma=40.0)
            if self.max_queries is not None:  # spend the budget on max_queries answers
                return default.for_budget(self.epsilon, self.delta, n_possible, self.sanitize_order)  # releasable
            if n_classes is None:
                raise ValueError(
                    "the noise calibrated to epsilon depends on the number of classes: pass classes=... (or an "
                    "aggregator) to compute the publishable epsilon before the fit."
                )
            return default.for_ensemble(
                self.epsilon, self.delta, n_teachers, n_classes, min(n_possible, agg.MAX_BUDGET_ANSWERS),
                self.sanitize_order,
            )  # fmt: skip
        if isinstance(self.aggregator, str):
            return agg.AGGREGATORS[self.aggregator]()
        return clone(self.aggregator)

    def check_public(self, X_public):
        """Refuse, for free, public rows the teachers or the student cannot read: NaN or infinity that the first
        step of either does not accept (its input tags). A fit checks this before it reserves its budget.

        Parameters
        ----------
        X_public : {array-like, DataFrame} of shape (n_public, n_features)

        Returns
        -------
        self : object
        """
        for role, estimator in (("estimator", self.estimator), ("student", self._student_template())):
            # A ColumnTransformer's tags refuse NaN even when its branches impute it: composites are not judged.
            tags = None if _is_composite(first_step(estimator)) else input_tags(estimator)
            columns = None if tags is None else non_finite_columns(X_public, nan=not tags.allow_nan)
            if columns:  # public columns, public values: named
                values = "infinity" if tags.allow_nan else "NaN or infinity"
                raise ValueError(
                    f"the public rows (X_public, or rows of X with y == -1) hold {values} in columns {columns}, "
                    f"which the {role} ({type(final_step(estimator)).__name__}) does not accept: impute or clip them "
                    f"in a pipeline step of the {role}, or drop those public rows."
                )
        return self

    def planned_cost(self, n_public):
        """What a fit with these parameters can cost at most, known before it runs: what an accountant reserves.

        The a-priori cost of ``min(max_queries, n_public)`` queries, all
        answered, with the sanitized release, or the ``epsilon`` budget if
        that is smaller (planned at ``delta``). Needs no data. A fit with
        ``groups`` costs this per group, and an accountant reserves its
        replace-one cost (``skpate.privacy.cost.replace_one_cost(cost,
        "add-remove")``: ``mu^2`` times 4).

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.

        Returns
        -------
        cost : skpate.privacy.Cost
        """
        n_possible = self._n_possible(n_public)
        n_classes = None if self.classes is None else np.unique(self.classes).size
        aggregator = self._aggregator(n_possible, n_classes, self.resolve_n_teachers(n_classes))
        return self._plan_budget(aggregator, n_possible, self._release_order(aggregator)).reserved

    def _n_possible(self, n_public):
        """Most queries a fit can submit: ``max_queries``, or every public row."""
        return n_public if self.max_queries is None else min(int(self.max_queries), n_public)

    def _release_order(self, aggregator):
        return self.sanitize_order if aggregator._sanitizable else None

    def _plan_budget(self, aggregator, n_possible, sanitize_order):
        """How many queries the fit may submit, and under which guarantee, before any teacher is trained."""
        release = release_cost(sanitize_order)
        check, answer = aggregator.query_cost()
        apriori = aggregator.apriori_cost(n_possible) + release
        if self.epsilon is None or apriori.epsilon(self.delta)[0] <= float(self.epsilon):  # not in float16
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

    def _fit_student(self, student, X_pub, transcript, classes, semi_supervised):
        """Fit the student on the labeled public rows (all public rows, -1 for the rest, if semi-supervised).

        A student that fits vote counts gets the released noisy histograms of the answered rows instead.
        """
        start = time.perf_counter()
        labels = transcript.labels
        rows = np.arange(labels.size) if semi_supervised else np.flatnonzero(labels >= 0)
        has_label = labels[rows] >= 0
        if _fits_votes(student):
            y_student = transcript.noisy_votes[rows]
        elif not semi_supervised:  # answered rows only: labels of the classes' own type (bools stay bools)
            y_student = classes[labels[rows]]
        else:
            y_student = np.full(rows.size, -1, dtype=label_dtype(classes))
            y_student[has_label] = classes[labels[rows][has_label]]
        try:
            student.fit(_safe_indexing(X_pub, rows), y_student)
        except ValueError as exc:
            raise ValueError(
                f"the student could not be fit on the {np.count_nonzero(has_label)} answered queries "
                f"({np.unique(labels[rows][has_label]).size} distinct labels): {exc}. Answer more queries "
                "in each round: fewer rounds (n_rounds=1; 'auto' makes 5 under a budget, and the first round's "
                "student sees a fifth of the answers), a larger epsilon, more public rows, max_queries, a lower "
                "threshold."
            ) from exc
        self._log(f"fitted the student on {np.count_nonzero(has_label)} labeled public rows of {rows.size}", start)

    # ------------------------------------------------------------ publish

    def export_model(self):
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
        model : StudentInClasses
            A deep copy of ``student_`` (its ``student``), which holds no
            reference to this object, the teachers, private rows or votes,
            in a :class:`~skpate.pate.students.StudentInClasses`: it refuses
            ``fit`` as every published model, has this estimator's
            ``classes_``, ``n_features_in_`` and ``feature_names_in_``, and
            its probabilities keep a column per class (0 for a class the
            student never saw), as :meth:`predict_proba` here.
        """
        check_is_fitted(self, "student_")
        model = StudentInClasses(published_copy(self.student_), self.classes_)
        model._record_columns(self)
        return model

    def export_student(self):
        """Alias of :meth:`export_model`: the fitted student, an independent copy."""
        return self.export_model()

    # ------------------------------------------------------------- predict

    def _student_input(self, X):
        check_is_fitted(self, "student_")
        X = check_rows(X)
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
        return proba_in_classes(self.student_, X, self.classes_)

    @available_if(_student_has("predict_proba"))
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        estimator_tags = get_tags(self.estimator)
        tags.input_tags.allow_nan = estimator_tags.input_tags.allow_nan
        tags.input_tags.sparse = estimator_tags.input_tags.sparse
        return tags
