"""Publishing the data-dependent epsilon: smooth sensitivity and the GNSS mechanism.

The data-dependent RDP of PATE 2018 is a function of the private votes, so
publishing it leaks. [PATE18] Appendix B releases it with Gaussian noise
scaled to a beta-smooth upper bound on its local sensitivity (Nissim,
Raskhodnikova, Smith 2007), the GNSS mechanism, whose own RDP cost is added.

Local sensitivity here: one private record changes one teacher, and that
teacher may change its vote on *every* query, so every histogram moves by at
most one vote per changed record. A dataset at distance ``k`` moves each
count by at most ``k``, each gap to the plurality by at most ``2k``.

The bounds used (each proved in the docstring of the function using it):

* the per-query cost is a non-decreasing function of ``q`` (checked
  numerically in the tests, as [PATE18] B.4.2 does for its conditions C5/C6);
* over all histograms within distance ``k``, ``q`` lies in
  ``[q_low(k), q_high(k)]``, computed from the gaps of the observed histogram;
* local sensitivity at distance ``k`` is at most the width of the cost's range
  over distance ``k + 1``, summed over queries ([PATE18] Theorem 7);
* the result ``max_k exp(-beta k) A(k)`` is beta-smooth because
  ``A_D(k) <= A_D'(k + 1)`` for neighbours ``D, D'``.
"""

from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, logsumexp

from . import bounds
from .rdp import check_delta

__all__ = ["SanitizedEpsilon", "gnss_rdp", "smooth_sensitivity", "sanitize"]


def gnss_rdp(beta, sigma, orders):
    """RDP of the GNSS mechanism ``F(D) + S(D) sigma N(0, 1)`` at each of ``orders``.

    ``S`` is a beta-smooth upper bound on the local sensitivity of ``F``
    ([PATE18] Definition of GNSS, Appendix B.5). Derived here from the Renyi
    divergence of two normals (van Erven and Harremoes 2014): with
    ``x = S(D')^2 / S(D)^2`` in ``[exp(-2 beta), exp(2 beta)]`` and
    ``|F(D) - F(D')| <= min(S(D), S(D'))``,

    ``D_lam <= lam x / (2 sigma^2 (lam x + 1 - lam))``
    ``        + (lam log x - log(lam x + 1 - lam)) / (2 (lam - 1))``;

    the first term is largest at ``x = exp(-2 beta)``, the second at one end
    of the interval, and both need ``lam (1 - exp(-2 beta)) < 1``.

    Returns
    -------
    rdp : ndarray of shape (n_orders,) (a float for a scalar order)
        ``inf`` outside the valid range of orders.
    """
    lam = np.asarray(orders, dtype=float)
    low, high = np.exp(-2.0 * beta), np.exp(2.0 * beta)
    valid = lam * (1.0 - low) < 1.0
    lam_ok = np.where(valid, lam, 1.5)

    def shape(x):
        return (lam_ok * np.log(x) - np.log(lam_ok * x + 1.0 - lam_ok)) / (2.0 * (lam_ok - 1.0))

    mean = lam_ok * low / (2.0 * sigma**2 * (lam_ok * low + 1.0 - lam_ok))
    rdp = np.where(valid, mean + np.maximum(shape(low), shape(high)), np.inf)
    return float(rdp) if rdp.ndim == 0 else rdp


def _gaussian_logq_range(votes, sigma, distance):
    """``log q`` bounds over histograms within ``distance`` of ``votes`` ([PATE18] Prop. 7's ``q``).

    Shape ``(n_distances, n_queries)`` each. With ``d_i`` the gaps to the
    plurality ``i*``, a histogram within distance ``k`` has, against its own
    plurality ``i'``, gaps ``>= d_i - 2k`` and ``<= d_i + 2k`` for every
    ``i != i*, i'``; if ``i' != i*``, the old plurality's term is at most
    ``1/2`` (gap ``>= 0``) and at least ``Phi(-2k / (sqrt 2 sigma))``, which
    bound the dropped ``i'`` term (``d_i' <= 2k``). Hence
    ``q_high = sum_i Phi(-max(d_i - 2k, 0) / (sqrt 2 sigma))`` and
    ``q_low = sum_i Phi(-(d_i + 2k) / (sqrt 2 sigma))`` over ``i != i*``,
    both capped like ``q``.
    """
    gaps, top = bounds.plurality_gaps(votes)
    rivals = np.ones(gaps.shape, dtype=bool)
    rivals[np.arange(gaps.shape[0]), top] = False
    gaps = gaps[rivals].reshape(gaps.shape[0], -1)[None]  # (1, n_queries, n_classes - 1)
    shift = 2.0 * np.asarray(distance, dtype=float)[:, None, None]
    cap = np.log1p(-1.0 / votes.shape[1])
    scale = np.sqrt(2.0) * sigma
    high = logsumexp(log_ndtr(-np.maximum(gaps - shift, 0.0) / scale), axis=2)
    low = logsumexp(log_ndtr(-(gaps + shift) / scale), axis=2)
    return np.minimum(low, cap), np.minimum(high, cap)


def _threshold_logq_range(count, threshold, sigma, distance):
    """``log q`` bounds of the threshold check over counts within ``distance`` of ``count``.

    ``q(c) = min(Phi(z), Phi(-z))`` with ``z = (c - T) / sigma`` is largest at
    the count nearest ``T`` and smallest at an end of ``[c - k, c + k]``.
    """
    count = np.asarray(count, dtype=float)[None, :]
    k = np.asarray(distance, dtype=float)[:, None]
    high = bounds.logq_threshold(np.clip(threshold, count - k, count + k), threshold, sigma)
    low = np.minimum(
        bounds.logq_threshold(count - k, threshold, sigma), bounds.logq_threshold(count + k, threshold, sigma)
    )
    return low, high


def _cost_width(cost, logq_range):
    """Width ``f(q_high) - f(q_low)`` of a monotone per-query cost, summed over queries."""
    low, high = logq_range
    shape = low.shape
    spread = cost(high.ravel()) - cost(low.ravel())
    return np.maximum(spread, 0.0).reshape(shape).sum(axis=1)


def smooth_sensitivity(votes, aggregator, order, beta, answered=None, chunk=16):
    """beta-smooth upper bound on the local sensitivity of the summed data-dependent RDP at ``order``.

    [PATE18] Appendix B, Theorem 7: ``S = max_{k >= 0} exp(-beta k) A(k)``
    where ``A(k) = sum_j w_j(k + 1)`` and ``w_j(k)`` is the width of query
    ``j``'s cost over histograms within distance ``k`` (a bound on its local
    sensitivity anywhere within distance ``k - 1``). ``A`` never exceeds the
    summed data-independent cost, which bounds the search over ``k``.

    Parameters
    ----------
    votes : array-like of int, shape (n_queries, n_classes)
    aggregator : GNMax or ConfidentGNMax
    order : float > 1
    beta : float > 0
    answered : array-like of bool, shape (n_queries,), optional
        Required for ConfidentGNMax.
    chunk : int, default=16
        Distances evaluated per vectorized step.

    Returns
    -------
    sensitivity : float
    """
    from ..aggregators import ConfidentGNMax, GNMax, check_votes  # avoid an import cycle

    votes = check_votes(votes)
    orders = np.array([float(order)])
    if isinstance(aggregator, ConfidentGNMax):
        answered = np.asarray(answered, dtype=bool)
        sigma, count = aggregator.sigma, votes.max(axis=1)
        parts = [
            (
                lambda logq: bounds.rdp_threshold_data_dependent(logq, aggregator.sigma_threshold, orders)[:, 0],
                lambda k: _threshold_logq_range(count, aggregator.threshold, aggregator.sigma_threshold, k),
            )
        ]
        ceiling = votes.shape[0] * bounds.rdp_gaussian(aggregator.sigma_threshold, orders, bounds.THRESHOLD_SENSITIVITY)
        votes = votes[answered]
    elif isinstance(aggregator, GNMax):
        sigma, parts, ceiling = aggregator.sigma, [], 0.0
    else:
        raise ValueError(f"smooth sensitivity is implemented for GNMax and ConfidentGNMax, not {aggregator!r}.")
    if votes.shape[0]:
        answered_votes = votes
        parts.append(
            (
                lambda logq: bounds.rdp_gaussian_data_dependent(logq, sigma, orders)[:, 0],
                lambda k: _gaussian_logq_range(answered_votes, sigma, k),
            )
        )
        ceiling = ceiling + votes.shape[0] * bounds.rdp_gaussian(sigma, orders)
    ceiling = float(np.sum(ceiling))

    best, start = 0.0, 0
    while np.exp(-beta * start) * ceiling > best:
        k = np.arange(start, start + chunk)
        reach = sum(_cost_width(cost, logq_range(k + 1)) for cost, logq_range in parts)
        best = max(best, float(np.max(np.exp(-beta * k) * reach)))
        start += chunk
    return best


@dataclass(frozen=True)
class SanitizedEpsilon:
    """A differentially private release of the data-dependent epsilon (GNSS).

    Attributes
    ----------
    epsilon : float
        The publishable estimate: ``max(rdp_estimate, 0) + gnss_rdp +
        log(1/delta) / (order - 1)``. It is a DP *estimate* of the total
        cost (labels and this release), not an upper bound: the noise may
        land it below the data-dependent value. Only
        ``data_independent_epsilon`` is a guaranteed bound.
    order, beta, sigma : float
        The release's parameters (order of the RDP released, smoothness,
        noise multiplier).
    rdp_estimate : float
        Noisy data-dependent RDP of the labels at ``order``.
    gnss_rdp : float
        RDP of this release itself at ``order``.
    """

    epsilon: float
    order: float
    beta: float
    sigma: float
    rdp_estimate: float
    gnss_rdp: float


def default_parameters(order):
    """[PATE18] B.6 rules of thumb as used by skpate: ``beta = 0.2 / order``, ``sigma = order / 2``."""
    return 0.2 / order, order / 2.0


def sanitize(votes, aggregator, delta, order, answered=None, beta=None, sigma=None, random_state=None):
    """Release the data-dependent epsilon of ``votes`` with the GNSS mechanism ([PATE18] App. B).

    Parameters
    ----------
    votes : array-like of int, shape (n_queries, n_classes)
    aggregator : GNMax or ConfidentGNMax
    delta : float in (0, 1)
    order : float > 1
        RDP order released (the smaller ``beta``, the more orders the
        release's own cost is finite at). For a release fully covered by the guarantee,
        fix it before seeing the votes; choosing it from the data-dependent
        curve (the papers' practice, and ``PATEClassifier``'s default) leaks
        the choice.
    answered : array-like of bool, optional
        Required for ConfidentGNMax.
    beta, sigma : float, optional
        Smoothness and noise multiplier; default :func:`default_parameters`.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    sanitized : SanitizedEpsilon
    """
    from ..aggregators import check_generator  # avoid an import cycle

    delta = check_delta(delta)
    try:
        order = float(order)
    except (TypeError, ValueError):
        order = float("nan")
    if not order > 1 or not np.isfinite(order):
        raise ValueError(f"the sanitization order must be a finite number > 1, got {order!r}.")
    default_beta, default_sigma = default_parameters(order)
    beta = default_beta if beta is None else float(beta)
    sigma = default_sigma if sigma is None else float(sigma)
    if not beta > 0 or not sigma > 0:
        raise ValueError(f"beta and sigma must be > 0, got beta={beta!r}, sigma={sigma!r}.")
    cost = gnss_rdp(beta, sigma, order)
    if not np.isfinite(cost):
        raise ValueError(f"GNSS needs order * (1 - exp(-2 beta)) < 1; lower beta (got beta={beta:g}, order={order:g}).")
    rdp = aggregator.privacy_cost(votes, answered=answered, orders=[order]).sum()
    sensitivity = smooth_sensitivity(votes, aggregator, order, beta, answered=answered)
    estimate = float(rdp + sensitivity * sigma * check_generator(random_state).standard_normal())
    epsilon = max(estimate, 0.0) + cost + np.log(1.0 / delta) / (order - 1.0)
    return SanitizedEpsilon(epsilon=epsilon, order=order, beta=beta, sigma=sigma, rdp_estimate=estimate, gnss_rdp=cost)
