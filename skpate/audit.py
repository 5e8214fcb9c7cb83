"""Empirical privacy audit: a statistically valid lower bound on epsilon, from samples.

The accounting in :mod:`skpate.privacy` gives *upper* bounds. An audit runs
the mechanism itself many times on two neighbouring vote histograms (one
teacher's vote moved) and turns the two output frequencies into a *lower*
bound that holds with probability ``1 - alpha``. A lower bound above the
claimed upper bound proves the claim wrong: this is how the NZC paper's
"near-zero cost" is refuted, and how skpate's own bounds are checked.
"""

from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

from ._validation import check_generator, check_positive_int, check_votes, noise_scope
from .privacy.rdp import check_delta, rdp_to_dp

__all__ = ["AuditResult", "audit", "claimed_epsilon"]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    epsilon_lower_bound : float
        With probability at least ``1 - alpha`` over the audit's randomness,
        the mechanism is *not* ``(epsilon, delta)``-DP for any smaller
        epsilon (on this pair of histograms; ``0`` if nothing is proven).
    output : int
        The output (class index, ``-1`` for no answer) that attains it.
    direction : str
        ``"votes"`` if ``Pr[M(votes) = output]`` is the larger probability,
        ``"neighbour"`` otherwise.
    counts, neighbour_counts : ndarray of int, shape (n_classes + 1,)
        How often each output ``-1, 0, ..., n_classes - 1`` occurred.
    n_trials : int
    delta : float
    alpha : float
    """

    epsilon_lower_bound: float
    output: int
    direction: str
    counts: np.ndarray
    neighbour_counts: np.ndarray
    n_trials: int
    delta: float
    alpha: float


def _clopper_pearson(counts, n_trials, level):
    """One-sided exact (Clopper-Pearson) bounds ``(lower, upper)`` on binomial proportions."""
    counts = np.asarray(counts, dtype=float)
    with np.errstate(invalid="ignore"):
        lower = np.where(counts > 0, beta.ppf(level, counts, n_trials - counts + 1), 0.0)
        upper = np.where(counts < n_trials, beta.ppf(1 - level, counts + 1, n_trials - counts), 1.0)
    return np.nan_to_num(lower), np.nan_to_num(upper, nan=1.0)


def audit(
    aggregator, votes, neighbour_votes, n_trials=100_000, delta=0.0, alpha=0.05, random_state=None, student_proba=None
):
    """Lower-bound the epsilon of one query of ``aggregator`` by sampling it.

    Runs the mechanism ``n_trials`` times on each histogram and, for every
    output ``o`` and both directions, bounds ``Pr[M(votes) = o]`` from below
    and ``Pr[M(neighbour) = o]`` from above with exact Clopper-Pearson
    intervals, Bonferroni-corrected over all of them. Any
    ``(epsilon, delta)``-DP mechanism has
    ``Pr[M(D) = o] <= exp(epsilon) Pr[M(D') = o] + delta``, so
    ``epsilon >= log((p_low - delta) / p_high)`` for every output, with
    probability at least ``1 - alpha``.

    Parameters
    ----------
    aggregator : aggregator object
    votes, neighbour_votes : array-like of int, shape (n_classes,)
        Two histograms of the same number of teachers that differ by one
        teacher's vote (one count down by one, another up by one).
    n_trials : int, default=100_000
    delta : float in [0, 1), default=0.0
        The delta of the claim being tested (0 for pure DP).
    alpha : float in (0, 1), default=0.05
        The lower bound fails with probability at most ``alpha``.
    random_state : None, int or numpy.random.Generator
        A seed is fine here (no :class:`~skpate.SeededNoiseWarning`): an audit releases nothing.
    student_proba : array-like of shape (n_classes,), optional
        Only :class:`~skpate.InteractiveGNMax`.

    Returns
    -------
    result : AuditResult
    """
    votes = check_votes(np.atleast_2d(votes))
    neighbour = check_votes(np.atleast_2d(neighbour_votes))
    if votes.shape != neighbour.shape or votes.shape[0] != 1:
        raise ValueError("votes and neighbour_votes must be two histograms over the same classes.")
    moved = neighbour[0] - votes[0]
    if sorted(moved[moved != 0].tolist()) != [-1, 1]:
        raise ValueError("neighbour_votes must differ from votes by one teacher's vote (one count -1, another +1).")
    check_positive_int("n_trials", n_trials)
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    rng = check_generator(random_state)
    n_classes = votes.shape[1]
    proba = None if student_proba is None else np.tile(np.atleast_2d(student_proba), (n_trials, 1))

    def frequencies(histogram):
        labels = aggregator.aggregate(np.tile(histogram, (n_trials, 1)), random_state=rng, student_proba=proba)
        return np.bincount(labels + 1, minlength=n_classes + 1)  # output -1 in column 0

    with noise_scope(random_state, "audit", warn=False):  # a test tool: a seed is fine, and the aggregator's is ours
        counts, neighbour_counts = frequencies(votes), frequencies(neighbour)
    # 2 directions x (n_classes + 1) outputs, each needing a lower and an upper bound.
    level = alpha / (4 * (n_classes + 1))
    low, high = _clopper_pearson(counts, n_trials, level)
    low_n, high_n = _clopper_pearson(neighbour_counts, n_trials, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        forward = np.log(np.maximum(low - delta, 0.0)) - np.log(high_n)
        backward = np.log(np.maximum(low_n - delta, 0.0)) - np.log(high)
    both = np.stack([forward, backward])
    direction, column = np.unravel_index(np.argmax(both), both.shape)
    return AuditResult(
        epsilon_lower_bound=max(float(both[direction, column]), 0.0),
        output=int(column) - 1,
        direction=("votes", "neighbour")[direction],
        counts=counts,
        neighbour_counts=neighbour_counts,
        n_trials=int(n_trials),
        delta=float(delta),
        alpha=float(alpha),
    )


def claimed_epsilon(aggregator, votes, delta, data_dependent=False, orders=None, student_proba=None):
    """Epsilon that skpate claims for one query on ``votes`` (answered), at ``delta``.

    By default the publishable claim: the a-priori cost of one submitted
    query, check and answer (:meth:`~skpate.pate.aggregators.Aggregator.apriori_cost`,
    exact for the Gaussian aggregators), which is what ``privacy_report_.epsilon``
    publishes for a one-query fit; it does not depend on ``votes``.
    ``data_dependent=True`` is the papers' bound *at* ``votes`` (private): the
    per-query RDP curve of :meth:`privacy_cost` with the classic conversion;
    it covers ``Pr[M(votes) = o] <= exp(eps) Pr[M(neighbour) = o] + delta``
    for every neighbour, i.e. the audit's ``direction == "votes"``.
    """
    delta = check_delta(delta)
    if not data_dependent:
        return aggregator.apriori_cost(1).epsilon(delta)[0]
    votes = np.atleast_2d(votes)
    proba = None if student_proba is None else np.atleast_2d(student_proba)
    rdp = aggregator.privacy_cost(votes, answered=[True], orders=orders, data_dependent=True, student_proba=proba)
    return rdp_to_dp(orders, rdp[0], delta)[0]
