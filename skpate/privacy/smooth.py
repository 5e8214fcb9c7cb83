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

from .._validation import as_float64, check_generator, check_votes, noise_scope
from . import bounds
from .rdp import check_delta

__all__ = ["SanitizedEpsilon", "gnss_rdp", "local_sensitivity_bounds", "smooth_sensitivity", "sanitize"]


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
    beta, sigma = as_float64(beta), as_float64(sigma)  # not in a float16's precision
    # In 1 - x and x - 1 at the interval's ends (expm1, log1p): 1 - exp(-2 beta) is 0 in floating point for a
    # beta of 1e-20, which took the order 1e20 for valid and its terms for a difference of huge numbers.
    below, above = -np.expm1(-2.0 * beta), np.expm1(2.0 * beta)  # 1 - exp(-2 beta), exp(2 beta) - 1
    valid = lam * below < 1.0
    lam_ok = np.where(valid, lam, 1.5)
    # lam x + 1 - lam at x = exp(-2 beta) and x = exp(2 beta), and each end's second term (log x = -+2 beta).
    shape_low = (-2.0 * beta * lam_ok - np.log1p(-lam_ok * below)) / (2.0 * (lam_ok - 1.0))
    shape_high = (2.0 * beta * lam_ok - np.log1p(lam_ok * above)) / (2.0 * (lam_ok - 1.0))
    mean = lam_ok * np.exp(-2.0 * beta) / (2.0 * sigma**2 * (1.0 - lam_ok * below))
    rdp = np.where(valid, mean + np.maximum(shape_low, shape_high), np.inf)
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


def _range_max(table, first, last):
    """Maximum of ``values[first:last + 1]`` for arrays of index pairs, from a sparse table."""
    level = np.floor(np.log2(last - first + 1)).astype(int)
    return np.maximum(table[level, first], table[level, last - (1 << level) + 1])


def _sparse_table(values):
    """``table[l, i] = max(values[i : i + 2**l])`` (padded), for O(1) range maxima."""
    table = [np.asarray(values, dtype=float)]
    width = 1
    while 2 * width <= table[0].size:
        previous = table[-1]
        table.append(np.maximum(previous, np.concatenate([previous[width:], np.full(width, -np.inf)])))
        width *= 2
    return np.array(table)


class _GNMaxPart:
    """Answer step of GNMax: bounds on each query's local sensitivity within distance ``k``.

    Two bounds, each valid and nested in ``k``; their minimum is used.

    *Range*: the cost's width over histograms within ``k + 1``
    (:func:`_gaussian_logq_range`).

    *Profile*: a histogram ``h`` with ``q(h) = x`` has all neighbours' ``q``
    in ``[r x, min(cap, R x)]``: each term ``Phi(-e / (sqrt 2 sigma))``
    changes by a factor ``Phi(-(e -+ 2) / s) / Phi(-e / s)``, which is
    monotone in the gap ``e`` (``log Phi`` is concave) and gaps are at most
    ``n_teachers``, so ``R`` and ``r`` are that factor at ``e = n_teachers``.
    So the local sensitivity at ``h`` is at most
    ``G(x) = max(f(min(cap, R x)) - f(x), f(x) - f(r x))``, and within
    distance ``k`` at most ``max G`` over ``[q_low(k), q_high(k)]``, bounded
    cell by cell on a grid of ``log x`` using that ``f`` is monotone.

    The grid depends on ``(n_teachers, n_classes, sigma)`` only, never on the
    votes, so neighbours share its cells and the nested ranges give nested
    cell maxima (``A_D(k) <= A_D'(k + 1)``). It covers every ``q_low(k)``
    looked up (``k + 1 <= n_teachers``): each rival's gap is at most
    ``n_teachers`` and the shift ``2k`` at most ``2 n_teachers - 2``, so every
    term, hence ``q_low(k)``, is at least ``Phi(-3 n_teachers / (sqrt 2 sigma))``;
    ``q_high(k)`` is at most the cap, the grid's top edge. A range covers
    every cell whose closed interval meets it (monotone under inclusion,
    including ranges ending exactly on an edge).
    """

    def __init__(self, votes, sigma, order, n_teachers):
        self.votes, self.sigma = votes, sigma
        orders = np.array([float(order)])
        self.cost = lambda logq: bounds.rdp_gaussian_data_dependent(logq, sigma, orders)[:, 0]
        self.ceiling = votes.shape[0] * bounds.rdp_gaussian(sigma, orders)[0]
        scale = np.sqrt(2.0) * sigma
        n = float(n_teachers)
        log_up = log_ndtr(-(n - 2.0) / scale) - log_ndtr(-n / scale)
        log_down = log_ndtr(-(n + 2.0) / scale) - log_ndtr(-n / scale)
        self.cap = np.log1p(-1.0 / votes.shape[1])
        # Data-independent lower edge (class docstring): below every q_low(k) with k + 1 <= n_teachers,
        # and at least one cell below the cap.
        lowest = min(float(log_ndtr(-3.0 * n / scale)), self.cap - 0.05)
        # Cells in log q from the lowest reachable q to the cap: 0.05 wide, at most 20,000 of them.
        width = max(0.05, (self.cap - lowest) / 20_000)
        self.edges = np.arange(self.cap, lowest - width, -width)[::-1]
        left, right = self.edges[:-1], self.edges[1:]
        f = self.cost
        cells = np.maximum(f(np.minimum(self.cap, right + log_up)) - f(left), f(right) - f(left + log_down))
        self.table = _sparse_table(np.maximum(cells, 0.0))

    def __call__(self, distances):
        # One pass over distances k and k + 1 (consecutive distances share most of them).
        reach = np.union1d(distances, distances + 1.0)
        low_all, high_all = _gaussian_logq_range(self.votes, self.sigma, reach)
        at, at_next = np.searchsorted(reach, distances), np.searchsorted(reach, distances + 1.0)
        low, high = low_all[at_next], high_all[at_next]
        by_range = np.maximum(self.cost(high.ravel()) - self.cost(low.ravel()), 0.0).reshape(low.shape)
        low, high = low_all[at], high_all[at]
        n_cells = self.edges.size - 1
        first = np.clip(np.searchsorted(self.edges, low, side="left") - 1, 0, n_cells - 1)
        last = np.clip(np.searchsorted(self.edges, high, side="right") - 1, first, n_cells - 1)
        by_profile = _range_max(self.table, first, last)
        return np.minimum(by_range, by_profile).sum(axis=1)


class _ThresholdPart:
    """Threshold check of Confident-GNMax: its cost depends on the top count ``c`` only.

    The local sensitivity at count ``c'`` is exactly
    ``max |g(c' +- 1) - g(c')|`` (counts stay in ``[0, n_teachers]``), and
    within distance ``k`` the top count lies in ``[c - k, c + k]``: the bound
    is the exact maximum over that window (nested in ``k``).
    """

    def __init__(self, votes, threshold, sigma, order, n_teachers):
        orders = np.array([float(order)])
        counts = np.arange(n_teachers + 1, dtype=float)
        g = bounds.rdp_threshold_data_dependent(bounds.logq_threshold(counts, threshold, sigma), sigma, orders)[:, 0]
        step = np.abs(np.diff(g))
        local = np.maximum(np.append(step, 0.0), np.insert(step, 0, 0.0))  # to c + 1 and to c - 1
        self.table = _sparse_table(local)
        self.count, self.n_teachers = votes.max(axis=1), n_teachers
        self.ceiling = votes.shape[0] * bounds.rdp_gaussian(sigma, orders, bounds.THRESHOLD_SENSITIVITY)[0]

    def __call__(self, distances):
        k = distances.astype(int)[:, None]
        first = np.clip(self.count[None, :] - k, 0, self.n_teachers)
        last = np.clip(self.count[None, :] + k, 0, self.n_teachers)
        return _range_max(self.table, first, last).sum(axis=1)


#: Data-dependent cost terms (:class:`~skpate.privacy.cost.CostTerm` kinds) whose smooth sensitivity is bounded here.
_PARTS = {"threshold-check": _ThresholdPart, "gaussian-argmax": _GNMaxPart}


def supports(aggregator):
    """Whether the data-dependent cost of ``aggregator`` can be released here: every term has a bound."""
    return all(term.kind in _PARTS for term in aggregator.cost_terms())


def _cost_parts(votes, aggregator, order, answered):
    """The parts of the summed cost, each a callable ``distances -> (n_distances,)`` with a ``ceiling``.

    Read from the aggregator's cost terms: one part per term, over the
    queries the term charges (all of them, or the answered ones).
    """
    if not supports(aggregator):
        raise ValueError(f"smooth sensitivity is implemented for GNMax and ConfidentGNMax, not {aggregator!r}.")
    terms = aggregator.cost_terms()
    if any(term.on == "answered" for term in terms):
        if answered is None:
            raise ValueError(f"answered is required for {type(aggregator).__name__}: the queries whose answer ran.")
        answered = np.asarray(answered, dtype=bool)
        if answered.shape != votes.shape[:1]:
            raise ValueError(f"answered must have shape ({votes.shape[0]},), got {answered.shape}.")
    n_teachers = int(votes[0].sum())
    parts = []
    for term in terms:
        rows = votes if term.on == "all" else votes[answered]
        if rows.shape[0]:
            params = {name: value if value is None else as_float64(value) for name, value in term.params.items()}
            parts.append(_PARTS[term.kind](rows, order=order, n_teachers=n_teachers, **params))
    return parts, float(sum(part.ceiling for part in parts))


def local_sensitivity_bounds(votes, aggregator, order, distances, answered=None):
    """Upper bounds ``A(k)`` on the local sensitivity of the summed data-dependent RDP within distance ``k``.

    The sum over queries of per-query bounds ([PATE18] Theorem 7): the
    threshold check's exact local sensitivity over the reachable top counts,
    and for the answer step the smaller of two bounds (see ``_GNMaxPart``).
    Beyond ``n_teachers`` every histogram is reachable and the summed
    data-independent cost is used. Non-decreasing in ``k``, and
    ``A_D(k) <= A_D'(k + 1)`` for neighbours (the ranges are nested).

    Parameters
    ----------
    votes : array-like of int, shape (n_queries, n_classes)
    aggregator : GNMax or ConfidentGNMax
    order : float > 1
    distances : array-like of int >= 0
    answered : array-like of bool, shape (n_queries,), optional
        Required for ConfidentGNMax.

    Returns
    -------
    bounds : ndarray of shape (n_distances,)
    """
    votes = check_votes(votes)
    parts, ceiling = _cost_parts(votes, aggregator, order, answered)
    return _sum_parts(parts, ceiling, np.asarray(distances, dtype=float), int(votes[0].sum()))


def _sum_parts(parts, ceiling, distances, n_teachers):
    inside = distances + 1.0 <= n_teachers
    out = np.full(distances.shape, ceiling)
    if inside.any():
        out[inside] = sum(part(distances[inside]) for part in parts)
    return np.minimum(out, ceiling)


def smooth_sensitivity(votes, aggregator, order, beta, answered=None, chunk=16):
    """beta-smooth upper bound on the local sensitivity of the summed data-dependent RDP at ``order``.

    ``S = max_{k >= 0} exp(-beta k) A(k)`` with ``A`` from
    :func:`local_sensitivity_bounds` ([PATE18] Appendix B, Theorem 7; Nissim,
    Raskhodnikova, Smith 2007). ``S >= A(0) >=`` the local sensitivity, and
    ``A_D(k) <= A_D'(k + 1)`` makes ``S(D) <= exp(beta) S(D')``. ``A`` is
    constant beyond ``n_teachers``, and bounded by the summed
    data-independent cost, which ends the search early.

    Parameters
    ----------
    votes : array-like of int, shape (n_queries, n_classes)
    aggregator : GNMax or ConfidentGNMax
    order : float > 1
    beta : float >= 0
    answered : array-like of bool, shape (n_queries,), optional
        Required for ConfidentGNMax.
    chunk : int, default=16
        Distances evaluated per vectorized step.

    Returns
    -------
    sensitivity : float
    """
    votes = check_votes(votes)
    n_teachers = int(votes[0].sum())
    parts, ceiling = _cost_parts(votes, aggregator, order, answered)
    best, start = 0.0, 0
    while start <= n_teachers and np.exp(-beta * start) * ceiling > best:
        k = np.arange(start, min(start + chunk, n_teachers + 1), dtype=float)
        best = max(best, float(np.max(np.exp(-beta * k) * _sum_parts(parts, ceiling, k, n_teachers))))
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
        land it below the data-dependent value. Only the report's
        ``epsilon`` (a-priori bound or budget) is a guaranteed bound.
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


#: The largest RDP order a release is made at: far past any useful one (the papers' are below 1000), and below
#: the orders whose default noise ``order / 2`` overflows when squared.
MAX_SANITIZE_ORDER = 1e6


def default_parameters(order):
    """[PATE18] B.6 rules of thumb: ``beta = 0.4 / order`` and ``sigma = order / 2``.

    (Their Table 2 uses ``beta * order`` of 0.40 to 0.46 and ``sigma / order``
    of 0.45 to 0.65.) Smaller ``beta`` or larger ``sigma`` lower the
    release's own cost and raise its noise.
    """
    return 0.4 / order, order / 2.0


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
        fix it before seeing the votes (``PATEClassifier(sanitize_order=...)``
        takes a number; its default, None, releases nothing); choosing it
        from the data-dependent curve (the papers' practice) leaks the choice.
    answered : array-like of bool, optional
        Required for ConfidentGNMax.
    beta, sigma : float, optional
        Smoothness and noise multiplier; default :func:`default_parameters`.
    random_state : None, int or numpy.random.Generator
        ``None`` draws fresh OS entropy; a seed warns with
        :class:`~skpate.SeededNoiseWarning` (unless a fit passes it).

    Returns
    -------
    sanitized : SanitizedEpsilon
    """
    delta = check_delta(delta)
    try:
        order = float(order)
    except (TypeError, ValueError):
        order = float("nan")
    if not 1 < order <= MAX_SANITIZE_ORDER:
        raise ValueError(f"the sanitization order must be a number in (1, {MAX_SANITIZE_ORDER:g}], got {order!r}.")
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
    with noise_scope(random_state, "sanitize", stacklevel=2):  # a release: warns if seeded (not inside a fit)
        estimate = float(rdp + sensitivity * sigma * check_generator(random_state).standard_normal())
    epsilon = max(estimate, 0.0) + cost + np.log(1.0 / delta) / (order - 1.0)
    return SanitizedEpsilon(epsilon=epsilon, order=order, beta=beta, sigma=sigma, rdp_estimate=estimate, gnss_rdp=cost)
