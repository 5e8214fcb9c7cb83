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
from scipy.special import log_ndtr

from .._validation import as_float64

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

_TINY = np.finfo(float).tiny
_MINUS_LOG2 = -np.log(2.0)


def log1mexp(x):
    """``log(1 - exp(x))`` for ``x <= 0``, accurate at both ends.

    Uses ``log(-expm1(x))`` near 0 and ``log1p(-exp(x))`` far from it
    (Maechler 2012, "Accurately computing log(1 - exp(-|a|))").
    """
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:  # one branch for a scalar (the GDP bisection's hundreds of calls); same ufuncs, same bits
        if x == 0.0:
            return np.asarray(-np.inf)  # log(-expm1(0)), without the divide-by-zero warning
        return np.asarray(np.log(-np.expm1(x)) if x > _MINUS_LOG2 else np.log1p(-np.exp(x)))
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


def _logsumexp_rows(a):
    """``scipy.special.logsumexp(a, axis=1)``, overwriting ``a`` (a C-contiguous float array).

    The algorithm of SciPy 1.17's ``logsumexp``, step for step, so the result
    is the same to the last bit: the terms equal to the row maximum stay out
    of the sum, ``log1p(sum of the others) + log(count) + max``, which keeps a
    dominant term exact. Not SciPy's function itself, whose general-purpose
    wrapper copies the array twice and always evaluates a second ``exp`` pass
    for its fallback; here that fallback (``log sum exp a``) runs only on rows
    whose result is not finite (all terms ``-inf``: the result is ``-inf``).
    """
    with np.errstate(divide="ignore", invalid="ignore"):  # rows without a finite term (as SciPy)
        a_max = a.max(axis=1, keepdims=True)
        is_max = a == a_max
        count = np.count_nonzero(is_max, axis=1, keepdims=True).astype(float)
        a[is_max] = -np.inf
        np.subtract(a, a_max, out=a)
        np.exp(a, out=a)
        s = a.sum(axis=1, keepdims=True)
        s = np.where(s == 0, s, s / count)
        out = (np.log1p(s) + np.log(count) + a_max)[:, 0]
    bad = ~np.isfinite(out)
    if bad.any():
        # SciPy's fallback log(sum(exp(a))) is -inf for a row of -inf terms, NaN for a row with a NaN.
        out[bad] = np.where(np.isneginf(a_max[bad, 0]), -np.inf, np.nan)
    return out


def _logq_union(log_tail, top, n_classes):
    """Union bound ``log sum_{j != j*} P_j`` capped at ``log(1 - 1/m)``.

    The cap is the probability mass outside the most likely outcome when
    every outcome is equally likely; above it ``j*`` would not be the mode.
    ``log_tail`` (a fresh array of the caller's) is overwritten.
    """
    log_tail[np.arange(log_tail.shape[0]), top] = -np.inf
    logq = _logsumexp_rows(log_tail)
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
    votes = np.asarray(votes)
    scale = np.sqrt(2.0) * sigma
    if votes.ndim == 2 and votes.size and votes.dtype.kind in "iu" and np.ndim(scale) == 0:
        # Integer gaps take at most n_teachers + 1 values: when that is fewer than the entries, log_ndtr
        # (the costly part) once per value, then a lookup. Same float operations on the same gaps, same numbers.
        top = np.argmax(votes, axis=1)
        gaps = votes[np.arange(votes.shape[0]), top][:, None] - votes
        largest = int(gaps.max())
        if largest < gaps.size and gaps.min() >= 0:  # (a negative gap would be integer overflow)
            table = log_ndtr(-np.arange(largest + 1, dtype=float) / scale)
            return _logq_union(table[gaps], top, gaps.shape[1])
    gaps, top = plurality_gaps(votes)
    log_tail = log_ndtr(-gaps / scale)
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
    return np.maximum(rdp, _TINY)


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
    orders, eps = np.asarray(orders, dtype=float), as_float64(eps)  # not in a float16's precision
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
    sigma, sensitivity = as_float64(sigma), as_float64(sensitivity)  # 300^2 overflows float16
    mu_squared = 2.0 * sensitivity**2 / sigma**2  # the mu^2 of Gaussian DP; same float path as Cost.rdp
    return orders * mu_squared / 2.0


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

    Notes
    -----
    Evaluated once per distinct ``log q``, and only at the orders where the
    bound applies and may fall below the data-independent curve
    (:func:`_theorem6_into`); every evaluated element goes through the same
    float operations as the dense formula, so skipping changes no bit.
    """
    logq = np.asarray(logq, dtype=float).ravel()
    orders = _as_orders(orders)[0]
    independent = rdp_gaussian(sigma, orders, sensitivity)
    out = np.empty((logq.size, orders.size))
    out[...] = independent
    out[np.isneginf(logq)] = 0.0
    # Once per distinct log q (as _once_per_distinct_logq), each result written into the rows of its queries.
    logq, query_of = np.unique(logq, return_inverse=True)
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
    # Evaluate only inside the domain (the conditions fail for log q = -inf or NaN).
    rows = np.flatnonzero(conditions & np.isfinite(logq))
    if rows.size:
        position = np.full(logq.size, -1)
        position[rows] = np.arange(rows.size)
        logq, mu2 = logq[rows], mu2[rows]
        eps1, eps2 = (mu2 + 1.0) / variance, eps2[rows]
        log1q = log1mexp(logq)
        log_a = log1q - log1mexp((logq + eps2) * (1.0 - 1.0 / mu2))
        log_b = eps1 - logq / mu2  # mu1 - 1 == mu2
        _theorem6_into(out, position[query_of], mu1[rows], log1q, log_a, logq, log_b, orders, independent)
    return out


def _logaddexp_into(x, y):
    """``np.logaddexp(x, y)`` for finite ``x`` and ``y``, written into ``x``.

    ``max + log1p(exp(min - max))`` is NumPy's own formula (``npy_logaddexp``:
    ``x + log1p(exp(y - x))`` for ``x > y``, ``x + log 2`` for ``x == y``),
    here in whole-array passes: about 3x faster than the ufunc, whose scalar
    loop branches per element. Where NumPy has no SIMD kernel for ``exp`` and
    ``log1p`` (x86 below AVX-512) both call the same libm functions, so the
    bits are the same; elsewhere they agree to a few ulps of max(x, y). (With ``x == y == inf``
    the formula would give NaN: callers check finiteness.)
    """
    m = np.maximum(x, y)
    np.minimum(x, y, out=x)
    x -= m
    np.exp(x, out=x)
    np.log1p(x, out=x)
    x += m
    return x


#: Below this many (distinct log q, order) pairs, Theorem 6 is evaluated in one rectangle, no blocking.
_SMALL = 1 << 14


def _independent_prefix(t, log1q, log_a, logq, log_b, rate):
    """How many of the lowest orders certainly get the data-independent value, per row.

    With ``x = log1q + t log_a`` and ``y = log q + t log_b`` (``t = lam - 1 > 0``),
    Theorem 6 charges ``min(max(logaddexp(x, y) / t, tiny), independent)``.
    ``F(t) = logaddexp(x, y)`` is convex in ``t``, so it lies above its
    tangent at 0, ``F0 + G0 t``, and the data-independent curve is at most
    ``rate * lam <= rate (t + 1)``. Where the concave quadratic

    ``Q(t) = F0 - 2k S0 + (G0 - 2k S1) t - rate (1 + 2k) t (t + 1)``, ``k = 1e-12``,

    with ``S0 = |log1q| + |log q| + |F0| + 1`` and ``S1 = |log_a| + |log_b| + |G0|``,
    is positive, the float value of ``logaddexp(x, y) / t`` is at least the
    data-independent one, so the charge *is* the data-independent value: the
    margins ``k S0 + k S1 t`` and ``k rate t (t + 1)`` exceed the rounding
    errors of ``x``, ``y``, ``logaddexp``, ``F0``, ``G0`` and ``rate`` (a few
    ``2**-53`` times those magnitudes) a thousandfold, and the second ``k``
    covers the rounding of ``Q`` itself. ``Q`` is concave, so it is positive
    between two orders where it is: the prefix is checked at its two ends.

    At low orders Theorem 6 often exceeds the data-independent curve (unless
    ``q`` is tiny; for the threshold check of most queries, at every order
    where it applies), and this test costs a few operations per row instead of
    an ``exp`` and a ``log1p`` per order. Returns an int array, 0 where
    nothing is certain.
    """
    if not (t[0] > 0.0 and np.isfinite(rate) and rate > 0.0):  # the argument divides by t > 0
        return np.zeros(log1q.size, dtype=np.intp)
    kappa = 1e-12
    f0 = np.logaddexp(log1q, logq)
    g0 = np.exp(log1q - f0) * log_a + np.exp(logq - f0) * log_b  # F'(0)
    a2 = rate * (1.0 + 2.0 * kappa)
    a1 = g0 - 2.0 * kappa * (np.abs(log_a) + np.abs(log_b) + np.abs(g0)) - a2
    a0 = f0 - 2.0 * kappa * (np.abs(log1q) + np.abs(logq) + np.abs(f0) + 1.0)

    def positive(i):  # Q(t[i]) > 0 (i >= -1; -1 reads as 0)
        ti = t[np.maximum(i, 0)]
        return a0 + a1 * ti - a2 * ti * ti > 0.0

    with np.errstate(invalid="ignore", over="ignore"):
        root = (a1 + np.sqrt(a1 * a1 + 4.0 * a0 * a2)) / (2.0 * a2)  # the larger root; NaN: Q < 0 throughout
        count = np.searchsorted(t, np.fmax(root, 0.0), side="left")  # orders below the root (t > 0)
        for _ in range(3):  # rounding of the root: step back while the last order is not certified
            back = (count > 0) & ~positive(count - 1)
            if not back.any():
                break
            count = count - back
        certain = positive(0) & positive(count - 1) & np.isfinite(a0) & np.isfinite(a1)
    return np.where(certain, count, 0)


def _theorem6(t, log1q, log_a, logq, log_b, independent, finite=False):
    """``min(max(logaddexp(log1q + t log_a, log q + t log_b) / t, tiny), independent)``.

    Rows are the ``(n,)`` arguments, columns the ``(k,)`` ``t = lam - 1`` and
    ``independent``: the very float operations of the dense formula, element
    by element. ``finite``: the caller checked that no ``x`` or ``y`` is
    infinite, so :func:`_logaddexp_into` may replace ``np.logaddexp``.
    """
    x = t * log_a[:, None]
    x += log1q[:, None]
    y = t * log_b[:, None]
    y += logq[:, None]
    log_s = _logaddexp_into(x, y) if finite else np.logaddexp(x, y, out=x)
    log_s /= t
    dependent = np.maximum(log_s, _TINY, out=log_s)  # _at_least_tiny, in place
    return np.minimum(dependent, independent, out=dependent)


def _theorem6_into(out, row_of, mu1, log1q, log_a, logq, log_b, orders, independent):
    """Write ``min(Theorem 6, independent)`` into ``out`` at the orders ``lam < mu1``.

    ``out``'s row ``i`` takes row ``row_of[i]`` of the other arguments (a
    distinct ``log q``); rows with ``row_of[i] == -1``, and every other entry,
    are left alone (they hold the data-independent curve, or 0).

    From ``_SMALL`` pairs ``(row, order)`` on, only those where the bound
    applies and may be below the data-independent curve are evaluated: on
    sorted orders (unsorted ones are sorted here) these are a range of each
    row, from the end of the certified prefix (:func:`_independent_prefix`) to
    the last order below ``mu1``, so rows with similar ranges are stacked into
    dense rectangles, without gathering per-element operands. Fewer pairs make
    one dense rectangle. Each element goes through the same float operations
    (:func:`_theorem6`), so the result does not depend on the blocking.
    """
    t = orders - 1.0
    queries = np.flatnonzero(row_of >= 0)
    if mu1.size * orders.size < _SMALL:  # a few rows: one rectangle, the fewest calls
        dependent = _theorem6(t, log1q, log_a, logq, log_b, independent)
        np.copyto(dependent, independent, where=orders >= mu1[:, None])
        out[queries] = dependent[row_of[queries]]
        return
    sort = None if np.all(orders[1:] >= orders[:-1]) else np.argsort(orders, kind="stable")
    if sort is not None:
        orders, independent, t = orders[sort], independent[sort], t[sort]
    stop = np.searchsorted(orders, mu1, side="left")  # orders < mu1: where Theorem 6 applies
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rate = np.max(independent / orders)  # independent <= rate * lam (up to rounding, see the margins)
        # |x|, |y| < 1e300 at every order: no infinity in logaddexp.
        finite = bool(np.all(t[-1] * (np.abs(log_a) + np.abs(log_b)) + np.abs(log1q) + np.abs(logq) < 1e300))
    start = np.minimum(_independent_prefix(t, log1q, log_a, logq, log_b, rate), stop)
    pending = np.flatnonzero(start < stop)
    # Rows whose ranges start and stop in the same 8-order bins share a rectangle: few blocks,
    # a few percent of elements evaluated in vain.
    key = (start[pending] // 8) * (orders.size // 8 + 2) + (stop[pending] + 7) // 8
    by_key = np.argsort(key, kind="stable")
    blocks = np.split(pending[by_key], np.flatnonzero(np.diff(key[by_key])) + 1) if pending.size else []
    # The queries of each block, and the row of each within its block's rectangle.
    block_of, local = np.full(mu1.size, -1), np.zeros(mu1.size, dtype=np.intp)
    for b, block in enumerate(blocks):
        block_of[block], local[block] = b, np.arange(block.size)
    which = block_of[row_of[queries]]
    by_block = np.argsort(which, kind="stable")
    members = np.split(queries[by_block], np.searchsorted(which[by_block], np.arange(len(blocks) + 1)))[1:]
    for block, members_ in zip(blocks, members):
        j, k = start[block].min(), stop[block].max()
        dependent = _theorem6(t[j:k], log1q[block], log_a[block], logq[block], log_b[block], independent[j:k], finite)
        if stop[block].min() < k:  # shorter ranges in the block: lam >= mu1 keeps the independent curve
            np.copyto(dependent, independent[j:k], where=orders[j:k] >= mu1[block, None])
        row = local[row_of[members_]]
        if members_.size == block.size:  # one query per row (every row has one): reorder the queries, not the rows
            members_ = members_[np.argsort(row)]
        else:
            dependent = dependent[row]
        if sort is None:
            out[members_, j:k] = dependent
        else:
            out[members_[:, None], sort[j:k]] = dependent


def rdp_threshold_data_dependent(logq, sigma, orders):
    """Data-dependent RDP of the noisy threshold check ([PATE18] Algorithm 1, step 1).

    The check ``max_j v_j + N(0, sigma^2) >= T`` has two outcomes and ``max_j v_j``
    has L2 sensitivity 1 (GNMax's histogram has ``sqrt(2)``), so it is Theorem 6
    with ``sensitivity = 1 / sqrt(2)`` and ``q`` from :func:`logq_threshold`.
    """
    return rdp_gaussian_data_dependent(logq, sigma, orders, sensitivity=THRESHOLD_SENSITIVITY)
