"""Renyi-DP bounds of PATE's noisy-argmax aggregators.

Pure functions on arrays, no estimator code. Every function is vectorized over
queries (rows) and orders (columns) and works in log space, so that
probabilities far below 1e-300 keep their exact logarithm instead of
underflowing to 0.

References (theorem numbers of the arXiv versions):

* [PATE17] Papernot, Abadi, Erlingsson, Goodfellow, Talwar. "Semi-supervised
  Knowledge Transfer for Deep Learning from Private Training Data", ICLR 2017.
* [PATE18] Papernot, Song, Mironov, Raghunathan, Talwar, Erlingsson. "Scalable
  Private Learning with PATE", ICLR 2018 (its Theorem 6 is "Theorem 3" in the
  conference text).
* [Mir17] Mironov. "Renyi Differential Privacy", CSF 2017.
* [BS16] Bun, Steinke. "Concentrated Differential Privacy", TCC 2016.
"""

import numpy as np
from scipy.special import log_ndtr, logsumexp

__all__ = [
    "log1mexp",
    "plurality_gaps",
    "logq_laplace",
    "logq_gaussian",
    "logq_threshold",
    "rdp_pure_dp",
    "rdp_pure_dp_data_dependent",
    "rdp_gaussian",
    "rdp_gaussian_data_dependent",
    "rdp_threshold_data_dependent",
]


THRESHOLD_SENSITIVITY = np.sqrt(0.5)
"""L2 sensitivity of one count (the threshold check) in units of ``sqrt(2)``."""


def log1mexp(x):
    """``log(1 - exp(x))`` for ``x <= 0``, accurate at both ends.

    Uses ``log(-expm1(x))`` near 0 and ``log1p(-exp(x))`` far from it
    (Maechler 2012, "Accurately computing log(1 - exp(-|a|))").
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        near_zero = x > -np.log(2.0)
        return np.where(
            near_zero,
            np.log(-np.expm1(np.where(near_zero, x, -1.0))),
            np.log1p(-np.exp(np.where(near_zero, -1.0, x))),
        )


def plurality_gaps(votes):
    """Gaps ``d_j = v_{j*} - v_j`` to the plurality class ``j* = argmax v``.

    Returns ``(gaps, top)``; ``gaps[i, top[i]]`` is 0 and is *not* a rival:
    callers mask it. Ties with the plurality keep gap 0 and count as rivals.
    """
    votes = np.asarray(votes, dtype=float)
    top = np.argmax(votes, axis=1)
    rows = np.arange(votes.shape[0])
    return votes[rows, top][:, None] - votes, top


def _logq_union(log_tail, top, n_classes):
    """Union bound ``log sum_{j != j*} P_j`` capped at ``log(1 - 1/m)``.

    The cap is the probability mass outside the most likely outcome when
    every outcome is equally likely; above it ``j*`` would not be the mode.
    """
    log_tail = log_tail.copy()
    log_tail[np.arange(log_tail.shape[0]), top] = -np.inf
    logq = logsumexp(log_tail, axis=1)
    with np.errstate(divide="ignore"):
        cap = np.log1p(-1.0 / n_classes)
    return np.minimum(logq, cap)


def logq_laplace(votes, scale):
    """Upper bound on ``log Pr[LNMax(votes) != argmax votes]``.

    [PATE17] Lemma 4: for i.i.d. ``Lap(b)`` noise,
    ``Pr[v_j + Lap(b) >= v_{j*} + Lap(b)] = (2 + d_j / b) / (4 exp(d_j / b))``;
    a union bound over ``j != j*`` gives ``q``, capped at ``1 - 1/m``.

    Parameters
    ----------
    votes : array-like of shape (n_queries, n_classes)
        Vote histograms (may already include a constant, as in NZC).
    scale : float
        Laplace scale ``b`` (the papers' ``1 / gamma``).

    Returns
    -------
    logq : ndarray of shape (n_queries,)
    """
    gaps, top = plurality_gaps(votes)
    z = gaps / scale
    log_tail = np.log(2.0 + z) - np.log(4.0) - z
    return _logq_union(log_tail, top, gaps.shape[1])


def logq_gaussian(votes, sigma):
    """Upper bound on ``log Pr[GNMax(votes) != argmax votes]``.

    [PATE18] Proposition 7: ``q <= sum_{j != j*} Pr[N(0, 2 sigma^2) >= d_j]``
    ``= sum_{j != j*} Phi(-d_j / (sqrt(2) sigma))``, capped at ``1 - 1/m``;
    computed with ``scipy.special.log_ndtr`` so that ``q < 1e-300`` keeps its
    logarithm.

    Returns
    -------
    logq : ndarray of shape (n_queries,)
    """
    gaps, top = plurality_gaps(votes)
    log_tail = log_ndtr(-gaps / (np.sqrt(2.0) * sigma))
    return _logq_union(log_tail, top, gaps.shape[1])


def logq_threshold(top_count, threshold, sigma):
    """``log q`` of the noisy threshold check ([PATE18] Algorithm 1, step 1).

    The check ``top_count + N(0, sigma^2) >= threshold`` answers with
    probability ``p = Phi((top_count - threshold) / sigma)``; its least likely
    outcome has probability ``q = min(p, 1 - p)``. Both tails come from
    ``log_ndtr`` directly, so neither underflows when the other is ~1.

    Returns
    -------
    logq : ndarray of shape (n_queries,)
    """
    z = (np.asarray(top_count, dtype=float) - threshold) / sigma
    return np.minimum(log_ndtr(z), log_ndtr(-z))


def _at_least_tiny(rdp):
    """Round a data-dependent cost of a query with ``q > 0`` up to >= the smallest normal double.

    Theorem 6's and Theorem 3's bounds are strictly positive when ``q > 0``,
    but below ~2.2e-308 a double is subnormal (few significant bits, enough to
    break monotonicity in the order) and below ~5e-324 it is 0, which would
    charge a real query nothing. Rounding *up* keeps the bound valid.
    """
    return np.maximum(rdp, np.finfo(float).tiny)


def _once_per_distinct_logq(bound):
    """Evaluate a per-query bound once per distinct ``log q``, then gather.

    Many queries share a ``q`` (the threshold check depends on the top count
    only, two-class votes on the gap only), so this saves most of the
    ``(n_queries, n_orders)`` transcendental work.
    """

    def wrapper(logq, *args, **kwargs):
        logq = np.asarray(logq, dtype=float).ravel()
        distinct, inverse = np.unique(logq, return_inverse=True)
        return bound(distinct, *args, **kwargs)[inverse]

    wrapper.__doc__, wrapper.__name__ = bound.__doc__, bound.__name__
    return wrapper


def _as_orders(orders):
    return np.asarray(orders, dtype=float)[None, :]


def rdp_pure_dp(eps, orders):
    """Data-independent RDP of an ``eps``-DP mechanism, shape ``(n_orders,)``.

    ``min(eps, lam * eps^2 / 2)``: pure DP is RDP of every order with the same
    epsilon ([Mir17] Prop. 3) and ``eps^2 / 2``-zCDP ([BS16] Prop. 1.4).
    """
    orders = np.asarray(orders, dtype=float)
    return np.minimum(eps, orders * eps**2 / 2.0)


@_once_per_distinct_logq
def rdp_pure_dp_data_dependent(logq, eps, orders):
    """Data-dependent RDP of an ``eps``-DP mechanism whose mode has mass ``1 - q``.

    [PATE17] Theorem 3 (with Theorem 1), restated for RDP of order
    ``lam = moment + 1``: if ``q < 1 / (exp(eps) + 1)``,

    ``RDP(lam) <= 1/(lam-1) log((1-q) ((1-q) / (1 - e^eps q))^(lam-1) + q e^(eps (lam-1)))``.

    The result is the elementwise minimum with the data-independent bound
    (:func:`rdp_pure_dp`); where the condition fails the data-independent
    bound is returned. ``q == 0`` exactly (``logq = -inf``) costs 0.

    Parameters
    ----------
    logq : array-like of shape (n_queries,)
        Upper bounds on ``log q``; the bound is increasing in ``q`` on the
        range where it is applied, so an upper bound is safe.
    eps : float
        Pure-DP epsilon of one query.
    orders : array-like of shape (n_orders,)

    Returns
    -------
    rdp : ndarray of shape (n_queries, n_orders)
    """
    logq = np.asarray(logq, dtype=float)[:, None]
    lam = _as_orders(orders)
    independent = np.broadcast_to(rdp_pure_dp(eps, orders)[None, :], (logq.shape[0], lam.shape[1]))
    # log(1 / (e^eps + 1)) = -logaddexp(eps, 0)
    applies = logq < -np.logaddexp(eps, 0.0)
    safe_logq = np.where(applies, logq, -1.0 - eps)  # any value inside the domain
    log1q = log1mexp(safe_logq)
    log_ratio = log1q - log1mexp(safe_logq + eps)  # log((1-q) / (1 - e^eps q)) >= 0
    log_s = np.logaddexp(log1q + (lam - 1) * log_ratio, safe_logq + (lam - 1) * eps)
    dependent = _at_least_tiny(log_s / (lam - 1))
    out = np.where(applies, np.minimum(dependent, independent), independent)
    return np.where(np.isneginf(logq), 0.0, out)


def rdp_gaussian(sigma, orders, sensitivity=1.0):
    """Data-independent RDP of GNMax, shape ``(n_orders,)``.

    Gaussian mechanism ([Mir17] Prop. 7): ``lam * Delta_2^2 / (2 sigma^2)``; the
    vote histogram has L2 sensitivity ``sqrt(2)`` (one teacher moves one vote),
    so GNMax costs ``lam / sigma^2`` with ``sensitivity=1`` (in units of
    ``sqrt(2)``). A count with L2 sensitivity 1 (the threshold step) is
    ``sensitivity = 1/sqrt(2)``.
    """
    orders = np.asarray(orders, dtype=float)
    mu_squared = 2.0 * sensitivity**2 / sigma**2  # the mu^2 of Gaussian DP; same float path as Cost.rdp
    return orders * mu_squared / 2.0


@_once_per_distinct_logq
def rdp_gaussian_data_dependent(logq, sigma, orders, sensitivity=1.0):
    """Data-dependent RDP of GNMax given ``log q`` ([PATE18] Theorem 6, Prop. 10).

    With the optimal higher orders of Proposition 10,
    ``mu2 = sigma sqrt(log(1/q))``, ``mu1 = mu2 + 1``, ``eps_i = mu_i / sigma^2``,
    and for ``lam < mu1``, provided ``mu2 > 1``, ``log(1/q) > eps2`` and
    ``log q <= (mu2 - 1) eps2 - mu2 (log(1 + 1/(mu1-1)) + log(1 + 1/(mu2-1)))``:

    ``A = (1-q) / (1 - (q e^eps2)^((mu2-1)/mu2))``, ``B = e^eps1 / q^(1/(mu1-1))``,
    ``RDP(lam) <= 1/(lam-1) log((1-q) A^(lam-1) + q B^(lam-1))``.

    Elsewhere the data-independent ``lam / sigma^2`` applies; the result is
    the elementwise minimum of the two. ``q == 0`` exactly costs 0.

    Parameters
    ----------
    logq : array-like of shape (n_queries,)
        Upper bounds on ``log q``. The side conditions keep the bound in its
        range of monotonicity in ``q``, so an upper bound is safe.
    sigma : float
        Standard deviation of the noise added to each count (GNMax).
    orders : array-like of shape (n_orders,)
    sensitivity : float, default=1.0
        L2 sensitivity in units of ``sqrt(2)``, as in :func:`rdp_gaussian`.
        Theorem 6 holds for any mechanism that is ``(lam, lam / s^2)``-RDP, so
        it is applied with ``s = sigma / sensitivity``; the data-independent
        curve is :func:`rdp_gaussian` itself, so the minimum never exceeds it,
        not even by rounding.

    Returns
    -------
    rdp : ndarray of shape (n_queries, n_orders)
    """
    logq = np.asarray(logq, dtype=float)[:, None]
    lam = _as_orders(orders)
    independent = np.broadcast_to(rdp_gaussian(sigma, lam, sensitivity), (logq.shape[0], lam.shape[1]))
    sigma = sigma / sensitivity
    variance = sigma**2

    neg_logq = np.maximum(-logq, 0.0)
    mu2 = sigma * np.sqrt(neg_logq)
    mu1 = mu2 + 1.0
    eps2 = mu2 / variance
    with np.errstate(divide="ignore", invalid="ignore"):
        conditions = (
            (mu2 > 1.0)
            & (neg_logq > eps2)
            & (logq <= (mu2 - 1.0) * eps2 - mu2 * (np.log1p(1.0 / (mu1 - 1.0)) + np.log1p(1.0 / (mu2 - 1.0))))
        )
    applies = conditions & (lam < mu1)
    # Evaluate only inside the domain; outside, placeholders keep logs finite.
    ok = conditions & np.isfinite(logq)
    safe_mu2 = np.where(ok, mu2, 2.0)
    safe_eps1, safe_eps2 = (safe_mu2 + 1.0) / variance, safe_mu2 / variance
    safe_logq = np.where(ok, logq, -safe_eps2 - 10.0)
    log1q = log1mexp(safe_logq)
    log_a = log1q - log1mexp((safe_logq + safe_eps2) * (1.0 - 1.0 / safe_mu2))
    log_b = safe_eps1 - safe_logq / safe_mu2  # mu1 - 1 == mu2
    log_s = np.logaddexp(log1q + (lam - 1.0) * log_a, safe_logq + (lam - 1.0) * log_b)
    dependent = _at_least_tiny(log_s / (lam - 1.0))
    out = np.where(applies, np.minimum(dependent, independent), independent)
    return np.where(np.isneginf(logq), 0.0, out)


def rdp_threshold_data_dependent(logq, sigma, orders):
    """Data-dependent RDP of the noisy threshold check ([PATE18] Algorithm 1, step 1).

    The check ``max_j v_j + N(0, sigma^2) >= T`` has two outcomes and ``max_j v_j``
    has L2 sensitivity 1 (GNMax's histogram has ``sqrt(2)``), so it is Theorem 6
    with ``sensitivity = 1 / sqrt(2)`` and ``q`` from :func:`logq_threshold`.
    """
    return rdp_gaussian_data_dependent(logq, sigma, orders, sensitivity=THRESHOLD_SENSITIVITY)
