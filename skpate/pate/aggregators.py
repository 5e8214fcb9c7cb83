"""Noisy aggregators of teacher votes, each with its Renyi-DP cost.

An aggregator turns a vote histogram ``votes`` of shape ``(n_queries,
n_classes)`` (``votes[i, j]`` = number of teachers voting class ``j`` on query
``i``) into labels, ``-1`` where it declines to answer, and knows what that
cost in RDP (see :mod:`skpate.privacy`). Aggregators are scikit-learn
``BaseEstimator`` objects so that ``GridSearchCV`` reaches their parameters
through ``PATEClassifier(aggregator=...)`` as ``aggregator__sigma``.

Noise is drawn from a ``numpy.random.Generator``: ``random_state=None`` means
fresh OS entropy at every call, an int gives reproducible noise (and a
:class:`~skpate.SeededNoiseWarning`: anyone who knows it can remove the noise).
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator

from .._validation import (
    RealRange,
    as_float64,
    check_generator,
    check_positive,
    check_positive_int,
    check_votes,
    noise_scope,
)
from ..exceptions import PrivacyLeakWarning
from ..privacy import bounds, smooth
from ..privacy.calibration import smallest_noise
from ..privacy.cost import Cost, CostTerm, gaussian_argmax_cost, laplace_argmax_cost, threshold_check_cost
from ..privacy.gdp import gdp_mu
from ..privacy.rdp import check_orders

__all__ = [
    "AGGREGATORS",
    "PrivacyLeakWarning",
    "Plurality",
    "LNMax",
    "GNMax",
    "GaussianHistogram",
    "ConfidentGNMax",
    "InteractiveGNMax",
    "NZC",
    "check_votes",
    "check_generator",
]


#: A noise scale or threshold: a finite number > 0.
_POSITIVE = RealRange(0, np.inf, closed="neither")

#: Above this many answers, a budget buys less noise instead of more answers (``GNMax.for_ensemble``).
MAX_BUDGET_ANSWERS = 2000


def ensemble_noise_divisor(n_classes):
    """``c`` of the budget noise ``sigma = n_teachers / c`` (:meth:`GNMax.for_ensemble`): 1.75 sqrt(n_classes / 2)."""
    return 1.75 * np.sqrt(n_classes / 2)


#: Answers a budget should buy (``teachers_for_budget``): enough labels for the student where 250 teachers buy few,
#: without shrinking the teachers' partitions where 250 already buy enough. Chosen on Fashion-MNIST's evaluation
#: images (non-private tuning, disclosed); the measurements are in docs/benchmarks/fashion_mnist.md.
AUTO_ANSWERS = 800


def teachers_for_budget(epsilon, delta, n_classes, n_answers=AUTO_ANSWERS):
    """The number of teachers at which a budget buys ``n_answers`` answers at the default noise.

    ``PATEClassifier``'s budget noise is relative to the ensemble: GNMax at
    ``sigma = n_teachers / c`` with ``c = 1.75 sqrt(n_classes / 2)``
    (:meth:`skpate.GNMax.for_ensemble`). One answer is then ``mu``-GDP with
    ``mu = sqrt(2) c / n_teachers`` (sensitivity ``sqrt(2)``: replacing one
    teacher moves one vote), and ``m`` answers compose to
    ``sqrt(2 m) c / n_teachers`` (Dong, Roth & Su 2022, Cor. 3.3). The
    budget is ``gdp_mu(epsilon, delta)``, so ``m`` answers fit from
    ``n_teachers = ceil(c sqrt(2 m) / gdp_mu(epsilon, delta))`` on: the
    answers a budget buys grow as the square of the number of teachers,
    each teacher's partition shrinks as its inverse.

    A function of public quantities only: it spends no privacy, and the
    publishable epsilon of the fit stays the budget. More, smaller teachers
    trade each teacher's accuracy for more answers, for budgets where 250
    teachers buy few; the measurements are in
    ``docs/benchmarks/fashion_mnist.md`` and ``docs/benchmarks/adult.md``.
    A small private set can make the partitions too small to learn from (check
    ``n_private / n_teachers``).

    Parameters
    ----------
    epsilon : float > 0
        The budget.
    delta : float in (0, 1)
    n_classes : int >= 2
        The size of the public label set.
    n_answers : int, default=800
        Answers the budget should buy.

    Returns
    -------
    n_teachers : int

    Examples
    --------
    >>> from skpate import teachers_for_budget
    >>> teachers_for_budget(1.0, 1e-5, n_classes=2), teachers_for_budget(0.5, 1e-5, n_classes=2)
    (262, 493)
    """
    epsilon = check_positive("epsilon", epsilon)
    n_classes = check_positive_int("n_classes", n_classes, " (the size of the label set)", minimum=2)
    n_answers = check_positive_int("n_answers", n_answers)
    return int(np.ceil(ensemble_noise_divisor(n_classes) * np.sqrt(2 * n_answers) / gdp_mu(epsilon, delta)))


# ---------------------------------------------------------------- validation


def _check_answered(answered, n_queries, required, name):
    if answered is None:
        if required:
            raise ValueError(
                f"{name} answers only some queries: pass answered, the boolean mask of the queries the teachers "
                "answered (from aggregate(..., return_answered=True); for ConfidentGNMax labels != -1)."
            )
        return np.ones(n_queries, dtype=bool)
    arr = np.asarray(answered)
    if arr.shape != (n_queries,):
        raise ValueError(f"answered must have shape (n_queries,) = ({n_queries},), got {arr.shape}.")
    if arr.dtype != bool:
        raise ValueError(f"answered must be a boolean mask, got dtype {arr.dtype}.")
    if not required and not np.all(arr):
        raise ValueError(
            f"{name} answers every query, but answered has False entries; drop the queries that were never "
            "asked from votes instead."
        )
    return arr


def _check_student_proba(student_proba, votes, name):
    if student_proba is None:
        raise ValueError(f"{name} needs student_proba, the student's class probabilities on the queries.")
    proba = np.asarray(student_proba, dtype=float)
    if proba.shape != votes.shape:
        raise ValueError(f"student_proba must have the shape of votes {votes.shape}, got {proba.shape}.")
    if not np.all(np.isfinite(proba)) or np.any(proba < 0):
        raise ValueError("student_proba must hold finite, non-negative probabilities.")
    if not np.allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-6):
        raise ValueError("every row of student_proba must sum to 1 (it is a probability distribution over classes).")
    return proba


# -------------------------------------------------------------- base class


class _Aggregator(BaseEstimator):
    """Shared API: validation, aggregation, privacy cost."""

    #: Whether the aggregator may decline to answer (needs ``answered``).
    _answers_selectively = False
    #: Whether aggregation needs the student's probabilities.
    _needs_student = False
    #: False only for the non-private baseline.
    is_private = True
    #: Whether the aggregator releases the whole noisy histogram (``noisy_votes``), not only a label.
    releases_votes = False
    #: Whether its cost has a data-dependent bound tighter than the a-priori one (the papers' analysis).
    has_data_dependent_analysis = True

    @property
    def _sanitizable(self):
        """Whether skpate.privacy.sanitize can release its data-dependent cost (every term has a bound)."""
        return smooth.supports(self)

    def cost_terms(self):
        """The terms of the data-dependent cost, each a :class:`~skpate.privacy.cost.CostTerm`."""
        raise NotImplementedError

    _parameter_constraints: dict = {}

    def _validate(self, n_teachers):
        """Check the parameters (``_parameter_constraints``, as scikit-learn does), then against ``n_teachers``.

        ``n_teachers=None`` skips the checks that need it (a-priori costs do not).
        """
        self._validate_params()
        for name, value in self.get_params(deep=False).items():  # scikit-learn's Real admits bools; noise must not
            if isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} of {type(self).__name__} must be a number, got {value!r}.")
        if n_teachers is not None:
            self._check_teachers(n_teachers)

    def _check_teachers(self, n_teachers):
        """Checks of the parameters against the number of teachers (none by default)."""

    def aggregate(self, votes, random_state=None, student_proba=None, return_answered=False):
        """Aggregate teacher votes into labels.

        Parameters
        ----------
        votes : array-like of int, shape (n_queries, n_classes)
            Vote histograms; every row sums to the number of teachers.
        random_state : None, int, numpy.random.Generator or RandomState
            Source of the noise. ``None`` draws fresh OS entropy; a seed (or
            a Generator) warns with :class:`~skpate.SeededNoiseWarning`, unless
            an estimator's fit passes it.
        student_proba : array-like of shape (n_queries, n_classes), optional
            The student's class probabilities (only :class:`InteractiveGNMax`).
        return_answered : bool, default=False
            Also return the mask of queries answered *by the teachers* (the
            queries whose answer step is paid for).

        Returns
        -------
        labels : ndarray of int, shape (n_queries,)
            Class indices (columns of ``votes``), ``-1`` where no answer.
        answered : ndarray of bool, shape (n_queries,)
            Only if ``return_answered``.
        """
        votes = check_votes(votes)
        self._validate(int(votes[0].sum()))
        proba = _check_student_proba(student_proba, votes, type(self).__name__) if self._needs_student else None
        with noise_scope(random_state, f"{type(self).__name__}.aggregate", stacklevel=2):  # warns if seeded
            labels, answered = self._aggregate(votes, check_generator(random_state), proba)
        return (labels, answered) if return_answered else labels

    def privacy_cost(self, votes, answered=None, orders=None, data_dependent=True, student_proba=None):
        """Per-query Renyi-DP cost of aggregating ``votes``.

        Parameters
        ----------
        votes : array-like of int, shape (n_queries, n_classes)
        answered : array-like of bool, shape (n_queries,), optional
            Queries the teachers answered. Required by the threshold
            aggregators, which pay the check on every query and the answer
            step only on answered ones.
        orders : array-like of float > 1, optional
            RDP orders; default :data:`skpate.privacy.DEFAULT_ORDERS`.
        data_dependent : bool, default=True
            ``True``: the papers' data-dependent bound (depends on the private
            votes: not safe to publish as is). ``False``: the a-priori bound,
            every query charged as if answered (:meth:`query_cost`), a
            function of the parameters only.
        student_proba : array-like of shape (n_queries, n_classes), optional
            Only :class:`InteractiveGNMax`.

        Returns
        -------
        rdp : ndarray of shape (n_queries, n_orders)
            Non-negative, non-decreasing in the order; sum over queries to compose.
        """
        votes = check_votes(votes)
        self._validate(int(votes[0].sum()))
        orders = check_orders(orders)
        answered = _check_answered(answered, votes.shape[0], self._answers_selectively, type(self).__name__)
        proba = _check_student_proba(student_proba, votes, type(self).__name__) if self._needs_student else None
        apriori = _per_query((self._check_cost() + self._answer_cost()).rdp(orders), votes.shape[0])
        if not data_dependent:
            return apriori
        # Both are valid bounds; the minimum also keeps float rounding of the
        # papers' fallback to the data-independent curve from exceeding it.
        return np.minimum(self._cost(votes, answered, orders, proba), apriori)

    def query_cost(self):
        """A-priori cost of one submitted query: ``(check, answer)``, each a :class:`~skpate.privacy.Cost`.

        ``check`` is paid on every submitted query (zero for the aggregators
        that always answer), ``answer`` on every answered one. A function of
        the parameters only: what a publishable bound is made of.
        """
        self._validate(None)
        return self._check_cost(), self._answer_cost()

    def _check_cost(self):
        """What the check before the answer costs: nothing for the aggregators that always answer."""
        return Cost()

    def apriori_cost(self, n_queries):
        """What ``n_queries`` submitted queries can cost at most: all answered.

        Known before any teacher votes, so it is publishable. Counting the
        answer step only where it ran would be an ex-post reading, not a
        bound (privacy odometers, Rogers et al. 2016).

        Returns
        -------
        cost : skpate.privacy.Cost
        """
        check, answer = self.query_cost()
        return n_queries * (check + answer)


def _per_query(curve, n_queries):
    return np.broadcast_to(curve[None, :], (n_queries, curve.size)).copy()


def _noisy(values, rng, scale=None, sigma=None):
    """``values + noise``: Laplace of ``scale`` or Gaussian of ``sigma`` on every count."""
    if sigma is None:
        return values + rng.laplace(0.0, scale, size=values.shape)
    return values + rng.normal(0.0, sigma, size=values.shape)


def _noisy_argmax(values, rng, scale=None, sigma=None):
    """``argmax(values + noise)``: Laplace of ``scale`` or Gaussian of ``sigma``."""
    return np.argmax(_noisy(values, rng, scale=scale, sigma=sigma), axis=1)


def _laplace_max_cost(values, scale, orders, sensitivity=1.0):
    """Data-dependent RDP of Laplace noisy max when each count moves by at most ``sensitivity``.

    Pure ``eps0 = 2 sensitivity / scale``-DP per query, with the papers'
    data-dependent bound: PATE 2017 Thm. 3 with Lemma 4's ``q`` of ``values``.
    """
    scale, sensitivity = as_float64(scale), as_float64(sensitivity)  # not in a float16's precision
    eps0 = 2.0 * sensitivity / scale
    return bounds.rdp_pure_dp_data_dependent(bounds.logq_laplace(values, scale), eps0, orders)


def _gaussian_max_cost(values, sigma, orders, sensitivity=1.0):
    """Data-dependent RDP of Gaussian noisy max when each count moves by at most ``sensitivity``.

    PATE 2018 Thm. 6 with Prop. 7's ``q`` of ``values``. Thm. 6 holds for
    any mechanism that is ``(lam, lam / s^2)``-RDP, here with ``s = sigma /
    sensitivity`` (L2 sensitivity ``sqrt(2) sensitivity``).
    """
    sigma, sensitivity = as_float64(sigma), as_float64(sensitivity)  # not in a float16's precision
    logq = bounds.logq_gaussian(values, sigma)
    return bounds.rdp_gaussian_data_dependent(logq, sigma, orders, sensitivity=sensitivity)


# --------------------------------------------------------------- mechanisms


class _FromBudget:
    """``for_budget`` for the aggregators with a single noise parameter, named ``_noise``."""

    @classmethod
    def for_budget(cls, epsilon, delta, n_queries, sanitize_order=None):
        """The aggregator with the smallest noise whose publishable cost is ``(epsilon, delta)``.

        The noise is ``scale`` for LNMax and ``sigma`` for GNMax. Computed
        from the parameters only, so it is safe to call before seeing data,
        with the accounting of :meth:`skpate.privacy.Cost.epsilon` (exact
        Gaussian DP for GNMax, privacy loss distributions for LNMax).

        Parameters
        ----------
        epsilon : float > 0
            Target epsilon of everything the fit releases: all ``n_queries``
            answers and, with ``sanitize_order``, the sanitized release.
        delta : float in (0, 1)
        n_queries : int
            Queries that will be submitted.
        sanitize_order : float > 1, optional
            The order of ``PATEClassifier(sanitize_order=...)``, whose cost
            the budget must include; None: no release.

        Returns
        -------
        aggregator : instance of the class it is called on

        Examples
        --------
        >>> from skpate import GNMax, LNMax
        >>> round(GNMax.for_budget(epsilon=2.0, delta=1e-5, n_queries=1000).sigma, 1)
        89.2
        >>> LNMax.for_budget(epsilon=2.0, delta=1e-5, n_queries=100).scale > 20
        True
        """

        def make(noise):
            return cls(**{cls._noise: noise})

        return make(smallest_noise(make, epsilon, delta, n_queries, sanitize_order))


class Plurality(_Aggregator):
    """The non-private baseline: the teachers' plurality vote, no noise.

    Ties go to the lowest class index. One teacher can change the answer with
    probability 1, so its privacy cost is infinite: use it only to measure
    what noise costs in accuracy.
    """

    is_private = False

    def _aggregate(self, votes, rng, proba):
        return np.argmax(votes, axis=1), np.ones(votes.shape[0], dtype=bool)

    def _answer_cost(self):
        return Cost(mu_squared=np.inf)

    def cost_terms(self):
        return (CostTerm("plurality", {}),)

    def _cost(self, votes, answered, orders, proba):
        return np.full((votes.shape[0], orders.size), np.inf)


class LNMax(_FromBudget, _Aggregator):
    """Laplace noisy max, PATE 2017: ``argmax_j (v_j + Lap(scale))``.

    Parameters
    ----------
    scale : float, default=20.0
        Laplace scale ``b``, the papers' ``1 / gamma`` (PATE 2017 used
        ``gamma = 0.05``, i.e. ``scale = 20``, on MNIST and Adult).

    Notes
    -----
    Each query is ``2 / scale``-DP (PATE 2017, Thm. 3). RDP per query:
    data-independent ``min(eps0, lam eps0^2 / 2)``; data-dependent PATE 2017
    Thm. 3 with the Laplace ``q`` bound, whichever is smaller.
    """

    _noise = "scale"

    _parameter_constraints: dict = {"scale": [_POSITIVE]}

    def __init__(self, scale=20.0):
        self.scale = scale

    def _aggregate(self, votes, rng, proba):
        return _noisy_argmax(votes, rng, scale=self.scale), np.ones(votes.shape[0], dtype=bool)

    def _answer_cost(self):
        return laplace_argmax_cost(self.scale)

    def cost_terms(self):
        return (CostTerm("laplace-argmax", {"scale": self.scale}),)

    def _cost(self, votes, answered, orders, proba):
        return _laplace_max_cost(votes, self.scale, orders)


class GNMax(_FromBudget, _Aggregator):
    """Gaussian noisy max, PATE 2018: ``argmax_j (v_j + N(0, sigma^2))``.

    Parameters
    ----------
    sigma : float, default=40.0
        Standard deviation of the noise added to every vote count.

    Notes
    -----
    RDP per query: data-independent ``lam / sigma^2`` (L2 sensitivity
    ``sqrt(2)``); data-dependent PATE 2018 Thm. 6 with Prop. 7's ``q``.
    """

    _noise = "sigma"
    #: ``for_ensemble``'s noise, in units of ``n_teachers / ensemble_noise_divisor(n_classes)``.
    _ensemble_noise = 1.0

    _parameter_constraints: dict = {"sigma": [_POSITIVE]}

    def __init__(self, sigma=40.0):
        self.sigma = sigma

    @classmethod
    def for_ensemble(cls, epsilon, delta, n_teachers, n_classes, max_answers=None, sanitize_order=None):
        """GNMax for a budget, noise relative to the ensemble: what ``PATEClassifier(epsilon=...)`` uses.

        ``sigma = n_teachers / (1.75 sqrt(n_classes / 2))`` (``n_teachers /
        1.75`` for two classes), as many answers as the budget covers; but
        if that is more than ``max_answers``, the smallest noise with which
        ``max_answers`` answers spend the budget (:meth:`for_budget`).

        The noise favours many noisy answers over few clean ones, up to
        ``max_answers``, past which the budget buys less noise instead; the
        divisor grows with ``sqrt(n_classes)`` because more classes split the
        votes, so the top count needs less noise to stand out. The divisor
        and the cap were chosen on the evaluation halves of UCI Adult (2
        classes) and Fashion-MNIST (10 classes) (non-private tuning,
        disclosed); the sweeps are in ``docs/benchmarks/adult.md`` and
        ``docs/benchmarks/fashion_mnist.md``. A function of public quantities
        only, safe before seeing data.

        Parameters
        ----------
        epsilon : float > 0
        delta : float in (0, 1)
        n_teachers : int
        n_classes : int >= 2
            The size of the public label set.
        max_answers : int, default=None
            Most answers to spend the budget on; None: 2,000
            (``MAX_BUDGET_ANSWERS``).
        sanitize_order : float > 1, optional
            As in :meth:`for_budget`.

        Returns
        -------
        aggregator : GNMax

        Examples
        --------
        >>> from skpate import GNMax
        >>> GNMax.for_ensemble(epsilon=1.0, delta=1e-5, n_teachers=250, n_classes=2)
        GNMax(sigma=142.85714285714286)
        >>> round(GNMax.for_ensemble(epsilon=4.0, delta=1e-5, n_teachers=250, n_classes=2).sigma, 1)
        68.4
        """
        n_teachers = check_positive_int("n_teachers", n_teachers)
        n_classes = check_positive_int("n_classes", n_classes, " (the size of the label set)", minimum=2)
        max_answers = MAX_BUDGET_ANSWERS if max_answers is None else check_positive_int("max_answers", max_answers)
        relative = cls._ensemble_noise * n_teachers / ensemble_noise_divisor(n_classes)
        return cls(sigma=float(min(relative, cls.for_budget(epsilon, delta, max_answers, sanitize_order).sigma)))

    def _aggregate(self, votes, rng, proba):
        return _noisy_argmax(votes, rng, sigma=self.sigma), np.ones(votes.shape[0], dtype=bool)

    def _answer_cost(self):
        return gaussian_argmax_cost(self.sigma)

    def cost_terms(self):
        return (CostTerm("gaussian-argmax", {"sigma": self.sigma}),)

    def _cost(self, votes, answered, orders, proba):
        return _gaussian_max_cost(votes, self.sigma, orders)


class GaussianHistogram(GNMax):
    """The Gaussian mechanism on the whole vote histogram: releases ``votes + N(0, sigma^2 I)``.

    Its label is the argmax of the noisy histogram, GNMax's label; the noisy
    counts themselves are released too (:meth:`noisy_votes`), so that a
    student can learn how sure each answer is
    (:class:`skpate.pate.students.VoteRegressionClassifier` regresses them).

    Parameters
    ----------
    sigma : float, default=40.0
        Standard deviation of the noise added to every vote count.

    Notes
    -----
    Replacing one teacher moves one vote: two counts by 1, L2 sensitivity
    ``sqrt(2)``. The release is the Gaussian mechanism, ``mu = sqrt(2) /
    sigma``-GDP (Dong, Roth & Su 2022, Thm. 2.7), RDP ``lam / sigma^2`` per
    query: exactly GNMax's a-priori cost, since GNMax is its post-processing
    (Thm. 2.10). The papers' data-dependent bound (PATE 2018 Thm. 6) covers
    the argmax only, not the margins the histogram shows, so the
    data-dependent cost here *is* the a-priori one, and there is nothing to
    sanitize.

    :meth:`for_ensemble` puts twice GNMax's noise, ``sigma = 2 n_teachers /
    c``, which buys four times the answers: a regression student averages
    the noise over neighbouring rows, so it can use more, noisier answers.
    The factor was chosen on UCI Adult's evaluation half (non-private
    tuning, disclosed; measured in ``docs/benchmarks/adult.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from skpate import GaussianHistogram
    >>> noisy = GaussianHistogram(sigma=10.0).noisy_votes(np.array([[40, 10], [5, 45]]), random_state=0)
    >>> noisy.shape, noisy.argmax(axis=1)
    ((2, 2), array([0, 1]))
    """

    releases_votes = True
    has_data_dependent_analysis = False  # the margins are released: PATE 2018 Thm. 6 does not apply
    _ensemble_noise = 2.0

    def noisy_votes(self, votes, random_state=None):
        """The released histograms: ``votes + N(0, sigma^2)`` on every count.

        Parameters
        ----------
        votes : array-like of int, shape (n_queries, n_classes)
        random_state : None, int, numpy.random.Generator or RandomState
            As in :meth:`aggregate`: ``None`` draws fresh OS entropy; a seed
            warns with :class:`~skpate.SeededNoiseWarning`.

        Returns
        -------
        noisy_votes : ndarray of float, shape (n_queries, n_classes)
            Their argmax is :meth:`aggregate`'s label with the same noise.
        """
        votes = check_votes(votes)
        self._validate(int(votes[0].sum()))
        with noise_scope(random_state, f"{type(self).__name__}.noisy_votes", stacklevel=2):  # warns if seeded
            return _noisy(votes, check_generator(random_state), sigma=self.sigma)  # GNMax's draw, before its argmax

    def cost_terms(self):
        return (CostTerm("gaussian-histogram", {"sigma": self.sigma}),)

    def _cost(self, votes, answered, orders, proba):
        return _per_query(self._answer_cost().rdp(orders), votes.shape[0])


class _ThresholdGNMax(_Aggregator):
    """Noisy threshold check, then GNMax on the queries that pass it."""

    _answers_selectively = True
    _parameter_constraints: dict = {"threshold": [_POSITIVE], "sigma_threshold": [_POSITIVE], "sigma": [_POSITIVE]}

    def _check_teachers(self, n_teachers):
        if self.threshold > n_teachers:
            raise ValueError(
                f"threshold must be in (0, n_teachers] = (0, {n_teachers}], got {self.threshold!r}: "
                "a threshold above the number of teachers almost never answers."
            )

    def _checked_count(self, votes, proba):
        """The count compared with the threshold (sensitivity 1)."""
        raise NotImplementedError

    def _passes(self, votes, rng, proba):
        count = self._checked_count(votes, proba)
        return count + rng.normal(0.0, self.sigma_threshold, size=count.shape) >= self.threshold

    #: The kind of the check's term: the top count (Confident) or the gap to the student (Interactive).
    _check_kind = "threshold-check"

    def _check_cost(self):
        return threshold_check_cost(self.sigma_threshold)

    def _answer_cost(self):
        return gaussian_argmax_cost(self.sigma)

    def cost_terms(self):
        return (
            CostTerm(self._check_kind, {"threshold": self.threshold, "sigma": self.sigma_threshold}),
            CostTerm("gaussian-argmax", {"sigma": self.sigma}, on="answered"),
        )

    def _cost(self, votes, answered, orders, proba):
        # The papers' data-dependent analysis (PATE 2018 Sec. 4.2): the check
        # on every query, the answer where it ran. Private, like the votes.
        sigma1, threshold = as_float64(self.sigma_threshold), as_float64(self.threshold)
        logq_check = bounds.logq_threshold(self._checked_count(votes, proba), threshold, sigma1)
        check = bounds.rdp_threshold_data_dependent(logq_check, sigma1, orders)
        answer = np.zeros_like(check)  # only answered queries pay (and need) the answer step's bound
        if answered.any():
            answer[answered] = _gaussian_max_cost(votes[answered], self.sigma, orders)
        return check + answer

    def _answer(self, votes, rng, passed, otherwise):
        """GNMax where the check passed, ``otherwise`` elsewhere."""
        return np.where(passed, _noisy_argmax(votes, rng, sigma=self.sigma), otherwise), passed


class ConfidentGNMax(_ThresholdGNMax):
    """Confident GNMax, PATE 2018 Algorithm 1.

    Answers a query only if ``max_j v_j + N(0, sigma_threshold^2) >= threshold``,
    and then with GNMax of noise ``sigma``; otherwise returns ``-1``.

    Parameters
    ----------
    threshold : float, default=200.0
        ``T``, in ``(0, n_teachers]``.
    sigma_threshold : float, default=150.0
        ``sigma_1``, noise of the check.
    sigma : float, default=40.0
        ``sigma_2``, noise of the answer.

    Notes
    -----
    Every query pays the check: data-independent ``lam / (2 sigma_1^2)``
    (``max_j v_j`` has sensitivity 1), data-dependent Thm. 6 with
    ``q = min(p, 1 - p)``. Answered queries also pay GNMax(``sigma``).
    """

    def __init__(self, threshold=200.0, sigma_threshold=150.0, sigma=40.0):
        self.threshold = threshold
        self.sigma_threshold = sigma_threshold
        self.sigma = sigma

    @classmethod
    def for_budget(cls, epsilon, delta, n_queries, threshold, sigma_ratio=3.75, sanitize_order=None):
        """Confident-GNMax for a ``threshold`` whose publishable cost is ``(epsilon, delta)``.

        Picks the smallest ``sigma`` with ``sigma_threshold = sigma_ratio *
        sigma`` such that ``n_queries`` submitted queries, every one answered
        (the a-priori worst case, which is what a fit without a budget
        publishes), and the sanitized release if any, cost at most
        ``(epsilon, delta)`` in exact Gaussian DP; safe to call before seeing
        any data. To answer as many queries as a budget allows instead,
        give the budget to the fit: ``PATEClassifier(epsilon=...)`` runs a
        privacy filter that charges the answer step only where it runs.

        Parameters
        ----------
        epsilon : float > 0
            Target epsilon of everything the fit releases.
        delta : float in (0, 1)
        n_queries : int
            Queries that will be submitted (all assumed answered).
        threshold : float
            ``T``; keep it at most the number of teachers.
        sigma_ratio : float, default=3.75
            ``sigma_threshold / sigma`` (PATE 2018's MNIST setting, 150 / 40).
            Per query the check is ``1 / sigma_threshold``-GDP, the answer
            ``sqrt(2) / sigma``-GDP.
        sanitize_order : float > 1, optional
            Include the cost of a sanitized release at this order.

        Returns
        -------
        aggregator : ConfidentGNMax
        """
        sigma_ratio = check_positive("sigma_ratio", sigma_ratio)  # a float: sigma_ratio * sigma not in float16
        check_positive("threshold", threshold)

        def make(sigma):
            return cls(threshold=threshold, sigma_threshold=sigma_ratio * sigma, sigma=sigma)

        return make(smallest_noise(make, epsilon, delta, n_queries, sanitize_order))

    def _checked_count(self, votes, proba):
        return votes.max(axis=1).astype(float)

    def _aggregate(self, votes, rng, proba):
        return self._answer(votes, rng, self._passes(votes, rng, proba), -1)


class InteractiveGNMax(_ThresholdGNMax):
    """Interactive GNMax, PATE 2018 Algorithm 2.

    Compares the teachers with the student: with ``w = v - n_teachers * p``
    (``p`` the student's probabilities), if ``max_j w_j + N(0, sigma_threshold^2)
    >= threshold`` the teachers answer with GNMax(``sigma``); else, if the
    student is confident (``max_j p_j > confidence``), its own ``argmax p`` is
    returned (free: the student is public); else ``-1``.

    Parameters
    ----------
    threshold : float, default=50.0
        ``T`` in ``(0, n_teachers]``.
    sigma_threshold : float, default=20.0
    sigma : float, default=40.0
    confidence : float, default=0.9
        ``gamma`` in ``[0, 1]``.

    Notes
    -----
    Accounted as :class:`ConfidentGNMax` with ``max_j w_j`` in the check
    (sensitivity 1, ``p`` is public); ``answered`` must mark the queries the
    *teachers* answered (``aggregate(..., return_answered=True)``), not the
    student-reinforced ones.
    """

    _needs_student = True
    _check_kind = "student-threshold-check"

    def __init__(self, threshold=50.0, sigma_threshold=20.0, sigma=40.0, confidence=0.9):
        self.threshold = threshold
        self.sigma_threshold = sigma_threshold
        self.sigma = sigma
        self.confidence = confidence

    _parameter_constraints: dict = {
        **_ThresholdGNMax._parameter_constraints,
        "confidence": [RealRange(0, 1, closed="both")],
    }

    def _checked_count(self, votes, proba):
        n_teachers = votes[0].sum()
        return (votes - n_teachers * proba).max(axis=1)

    def _aggregate(self, votes, rng, proba):
        passed = self._passes(votes, rng, proba)
        student = np.where(proba.max(axis=1) > self.confidence, np.argmax(proba, axis=1), -1)
        return self._answer(votes, rng, passed, student)


class NZC(_Aggregator):
    """The "immutable noisy argmax" of the NZC submission (2019), honestly accounted.

    Adds ``constant`` to the plurality count, then returns the noisy argmax
    with Laplace (``scale``) or Gaussian (``sigma``) noise.

    Parameters
    ----------
    constant : float
        ``c >= 0`` added to the largest count (the paper uses up to 1e100).
    scale : float, optional
        Laplace scale. Give exactly one of ``scale`` and ``sigma``.
    sigma : float, optional
        Gaussian standard deviation.

    Notes
    -----
    The paper's "near-zero cost" claim is wrong: when a neighbouring dataset
    moves the plurality, the constant moves with it, so the boosted histogram
    has L_inf sensitivity ``c + 1`` (L2 ``sqrt(2) (c + 1)``), not 1. skpate
    charges that: ``eps0 = 2 (c + 1) / scale`` per query (Laplace), RDP
    ``lam (c + 1)^2 / sigma^2`` (Gaussian), with the papers' data-dependent
    bounds on top. When ``c`` is at least the noise, the output is the
    deterministic plurality and a :class:`PrivacyLeakWarning` is raised.
    """

    def __init__(self, constant=0.0, scale=None, sigma=None):
        self.constant = constant
        self.scale = scale
        self.sigma = sigma

    _parameter_constraints: dict = {
        "constant": [RealRange(0, np.inf, closed="left")],
        "scale": [None, _POSITIVE],
        "sigma": [None, _POSITIVE],
    }

    def _validate(self, n_teachers):
        super()._validate(n_teachers)
        if (self.scale is None) == (self.sigma is None):
            raise ValueError("NZC needs exactly one of scale (Laplace noise) and sigma (Gaussian noise).")
        c, noise_name = self.constant, "scale" if self.sigma is None else "sigma"
        noise = getattr(self, noise_name)
        if c > 0 and c >= noise:
            warnings.warn(
                f"NZC(constant={c:g}, {noise_name}={noise:g}): the constant is at least the noise, so the label is "
                "essentially the deterministic plurality and one teacher can flip it. The paper's near-zero "
                f"privacy cost does not hold: the sensitivity is constant + 1 = {c + 1:g}, and skpate charges it. "
                "Use GNMax or ConfidentGNMax instead.",
                PrivacyLeakWarning,
                stacklevel=3,
            )

    def _boosted(self, votes):
        boosted = votes.astype(float)
        boosted[np.arange(votes.shape[0]), np.argmax(votes, axis=1)] += self.constant
        return boosted

    def _aggregate(self, votes, rng, proba):
        labels = _noisy_argmax(self._boosted(votes), rng, scale=self.scale, sigma=self.sigma)
        return labels, np.ones(votes.shape[0], dtype=bool)

    def cost_terms(self):
        return (CostTerm("boosted-argmax", {"constant": self.constant, "scale": self.scale, "sigma": self.sigma}),)

    def _answer_cost(self):
        # The constant moves with the plurality: every count can move by c + 1.
        if self.sigma is None:
            return laplace_argmax_cost(self.scale, sensitivity=self._sensitivity())
        return gaussian_argmax_cost(self.sigma, sensitivity=self._sensitivity())

    def _sensitivity(self):
        """``constant + 1`` in float64: in float16, 2048 + 1 is 2048."""
        return as_float64(self.constant) + 1.0

    def _cost(self, votes, answered, orders, proba):
        sensitivity = self._sensitivity()
        if self.sigma is None:
            return _laplace_max_cost(self._boosted(votes), self.scale, orders, sensitivity)
        return _gaussian_max_cost(self._boosted(votes), self.sigma, orders, sensitivity)


#: Aggregators by name (``PATEClassifier(aggregator="gnmax")``, ``python -m skpate analyze --aggregator``).
AGGREGATORS = {
    "plurality": Plurality,
    "lnmax": LNMax,
    "gnmax": GNMax,
    "gaussian-histogram": GaussianHistogram,
    "confident-gnmax": ConfidentGNMax,
    "interactive-gnmax": InteractiveGNMax,
    "nzc": NZC,
}
