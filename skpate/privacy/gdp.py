"""Gaussian differential privacy: exact composition and exact conversion to (epsilon, delta).

[DRS22] Dong, Roth, Su. "Gaussian Differential Privacy", JRSS B 2022.

* The Gaussian mechanism of L2 sensitivity ``D`` and noise ``N(0, sigma^2)``
  is ``mu = D / sigma``-GDP, and post-processing keeps ``mu`` ([DRS22] Thm. 2.7).
  GNMax is the argmax of such a release: ``mu = sqrt(2) / sigma``; the
  threshold check of Confident-GNMax (one count): ``mu = 1 / sigma_threshold``.
* ``mu_i``-GDP mechanisms compose to ``sqrt(sum mu_i^2)``-GDP ([DRS22]
  Cor. 3.3), also when chosen adaptively under a filter that keeps
  ``sum mu_i^2 <= mu^2`` by construction (Smith, Thakurta 2022, "Fully
  adaptive composition for Gaussian differential privacy").
* ``mu``-GDP is ``(epsilon, delta(epsilon))``-DP for every ``epsilon >= 0``
  with ``delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)``
  ([DRS22] Cor. 2.13), and nothing better: the conversion is exact.
* ``mu``-GDP implies RDP ``lam mu^2 / 2`` at every order ``lam`` (the Renyi
  divergence of ``N(0, 1)`` and ``N(mu, 1)``; data processing), which is how a
  Gaussian part composes with non-Gaussian ones in RDP.

Every function is vectorized over its array arguments and works in log space.
"""

import numpy as np
from scipy.special import log_ndtr, ndtri

from .bounds import log1mexp

__all__ = ["gdp_delta", "gdp_epsilon", "gdp_mu", "gdp_rdp"]

#: Bisection steps: the bracket shrinks by 2**-_STEPS, below float precision.
_STEPS = 200
#: Aim this much below log(delta), so that float rounding never lands a result above delta.
_MARGIN = 1e-12
#: How far above the budget gdp_epsilon(gdp_mu(epsilon)) may land (a few units in the last place, relative).
_ROUND_TRIP = 1e-13
#: Largest epsilon for which gdp_mu bisects the exact formula: its float error there is ~1e-13 in the
#: Gaussian quantile, below _MARGIN's effect; beyond it a closed-form lower bound is returned.
_EXACT_LIMIT = 1e6


def _log_delta(epsilon, mu):
    """An upper bound on ``log delta(epsilon)`` of ``mu``-GDP ([DRS22] Cor. 2.13), ``-inf`` for ``mu = 0``.

    ``delta = a - b`` with ``a = Phi(-epsilon/mu + mu/2)`` and ``b = e^epsilon Phi(-epsilon/mu - mu/2) < a``;
    in logs, ``log a + log(1 - b / a)``. Where ``delta`` is much smaller than ``a`` (small epsilon, small delta),
    ``log b - log a`` is a difference of nearly equal numbers, and its rounding would move ``delta`` by more than
    its own size allows: the difference is therefore taken at its rounding bound (:func:`_rounding_bound`, toward
    a larger ``delta``), so that the result bounds the exact value from above wherever the bound is small, and is
    conservative (up to ``delta = 1``) where it is not.
    """
    epsilon, mu = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(mu, dtype=float))
    safe_mu = np.where(mu > 0, mu, 1.0)
    upper, lower = -epsilon / safe_mu + safe_mu / 2.0, -epsilon / safe_mu - safe_mu / 2.0
    log_a, log_phi_lower = log_ndtr(upper), log_ndtr(lower)
    log_b = epsilon + log_phi_lower
    error = _rounding_bound(epsilon, safe_mu, upper, lower, log_a, log_phi_lower)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = log_a + error + log1mexp(np.minimum(log_b - log_a - error, -1e-300))
    out = np.minimum(out, 0.0)  # delta <= 1
    out = np.where(mu > 0, out, -np.inf)
    out = np.where(np.isinf(mu), 0.0, out)  # infinite mu: no privacy, delta = 1
    return out


def _rounding_bound(epsilon, mu, upper, lower, log_a, log_phi_lower):
    """A bound on the rounding error of ``log a`` and of ``log b - log a`` in :func:`_log_delta`.

    ``log_ndtr`` is accurate to a few units in the last place of its value; its argument carries the rounding of
    ``epsilon / mu`` and ``mu / 2``, which it scales by its slope ``phi(x) / Phi(x) <= |x| + 1``. Four units of
    the last place (``4 * 2^-52``) per term, an allowance of twice the usual analysis.
    """
    unit = 4.0 * np.finfo(float).eps
    arguments = (np.abs(upper) + np.abs(lower) + 2.0) * (epsilon / mu + mu / 2.0)
    return unit * (np.abs(log_a) + np.abs(log_phi_lower) + epsilon + arguments)


def _bisect(low, high, below):
    """Vectorized bisection of ``[low, high]`` on the boundary of the monotone predicate ``below``.

    ``below(x)`` is True left of the boundary and False right of it; the
    final brackets ``(low, high)`` hold it on either side.
    """
    for _ in range(_STEPS):
        middle = (low + high) / 2.0
        left = below(middle)
        low, high = np.where(left, middle, low), np.where(left, high, middle)
    return low, high


def gdp_delta(epsilon, mu):
    """Smallest ``delta`` such that ``mu``-GDP is ``(epsilon, delta)``-DP ([DRS22] Cor. 2.13).

    Parameters
    ----------
    epsilon : array-like of float >= 0
    mu : array-like of float >= 0

    Returns
    -------
    delta : ndarray or float
        Increasing in ``mu``, decreasing in ``epsilon``; 0 when ``mu = 0``.
    """
    out = np.exp(_log_delta(epsilon, mu))
    return float(out) if out.ndim == 0 else out


def _check(delta):
    delta = np.asarray(delta, dtype=float)
    if np.any(~(delta > 0)) or np.any(~(delta < 1)):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    return delta


def gdp_epsilon(mu, delta):
    """Smallest ``epsilon >= 0`` such that ``mu``-GDP is ``(epsilon, delta)``-DP.

    Exact inverse of :func:`gdp_delta` in ``epsilon``, by vectorized bisection
    on a bracket whose upper end is the RDP bound ``mu^2/2 + mu sqrt(2 log(1/delta))``
    (Mironov 2017, Prop. 3, at the best order); the upper end of the final
    bracket is returned, so that ``gdp_delta(result, mu) <= delta`` always.

    Parameters
    ----------
    mu : array-like of float >= 0
    delta : float in (0, 1)

    Returns
    -------
    epsilon : ndarray or float
        ``inf`` for ``mu = inf``; 0 when even ``epsilon = 0`` meets ``delta``.
    """
    mu = np.asarray(mu, dtype=float)
    log_delta = np.log(_check(delta)) - _MARGIN
    if np.any(np.isnan(mu)) or np.any(mu < 0):
        raise ValueError("mu must be >= 0.")
    finite = np.where(np.isfinite(mu), mu, 0.0)
    low = np.zeros_like(finite)
    high = finite**2 / 2.0 + finite * np.sqrt(-2.0 * log_delta) + 1e-12
    _, high = _bisect(low, high, lambda epsilon: _log_delta(epsilon, finite) > log_delta)
    out = np.where(_log_delta(0.0, finite) <= log_delta, 0.0, high)
    out = np.where(np.isfinite(mu), out, np.inf)
    return float(out) if out.ndim == 0 else out


def gdp_mu(epsilon, delta):
    """Largest ``mu`` such that ``mu``-GDP is ``(epsilon, delta)``-DP.

    ``delta(epsilon)`` is increasing in ``mu``, so bisection on ``mu`` finds
    it; the lower end of the final bracket is returned (never above the exact
    value: a budget met by construction), lowered further where needed so that
    :func:`gdp_epsilon` of the result is at most ``epsilon``.

    Parameters
    ----------
    epsilon : array-like of float >= 0
    delta : float in (0, 1)

    Returns
    -------
    mu : ndarray or float
    """
    epsilon = np.asarray(epsilon, dtype=float)
    log_delta = np.log(_check(delta)) - _MARGIN
    if np.any(np.isnan(epsilon)) or np.any(epsilon < 0):
        raise ValueError("epsilon must be >= 0.")
    # A valid start: delta(epsilon; mu) <= Phi(-epsilon/mu + mu/2) (drop the subtracted term of Cor. 2.13), which
    # is delta at mu = z + sqrt(z^2 + 2 epsilon), z = Phi^-1(delta); the relative margin absorbs its rounding.
    z = ndtri(np.exp(log_delta))
    low = np.maximum((z + np.sqrt(z * z + 2.0 * epsilon)) * (1.0 - 1e-9), 0.0)
    # Above _EXACT_LIMIT, -epsilon/mu + mu/2 cancels catastrophically in floating point and the exact
    # formula could accept a mu that is too large: there the valid start is the answer.
    exact = epsilon <= _EXACT_LIMIT
    high = np.where(exact, np.maximum(2.0 * low, 1.0), low)
    for _ in range(64):  # double until delta(epsilon; high) > delta
        grow = exact & (_log_delta(epsilon, high) <= log_delta)
        if not np.any(grow):
            break
        low, high = np.where(grow, high, low), np.where(grow, 2.0 * high, high)
    low, _ = _bisect(low, high, lambda mu: exact & (_log_delta(epsilon, mu) <= log_delta))
    # A report converts mu back with gdp_epsilon. Where epsilon is ill-conditioned in delta (epsilon far below
    # delta's scale), rounding can bring it back above the budget by more than the last bits: shrink mu until not.
    for step in range(60):
        over = exact & (np.asarray(gdp_epsilon(low, delta)) > epsilon * (1.0 + _ROUND_TRIP))
        if not np.any(over):
            break
        low = np.where(over, low * (1.0 - 1e-12 * 4.0**step), low)
    return float(low) if low.ndim == 0 else low


def gdp_rdp(mu, orders):
    """RDP of ``mu``-GDP at each order: ``lam mu^2 / 2`` (exact for the Gaussian mechanism)."""
    return np.asarray(orders, dtype=float) * np.asarray(mu, dtype=float) ** 2 / 2.0
