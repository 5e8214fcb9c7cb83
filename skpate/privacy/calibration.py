"""Calibration: every "noise (or count) for this budget" function, from public quantities only.

Each function turns a budget ``(epsilon, delta)`` fixed before a fit into the
noise of a mechanism, the share of a budget, or the number of releases the
budget covers. None reads data: their outputs are public, so an estimator may
resolve its settings with them before any private row is read. The
sensitivities they divide by are argued in :mod:`skpate.privacy.sensitivity`.

[DRS22] Dong, Roth, Su. "Gaussian Differential Privacy", JRSS B 2022.
"""

import numbers

import numpy as np
from scipy.optimize import brentq

from .._validation import as_float64, check_positive_int
from .cost import Cost
from .gdp import gdp_epsilon, gdp_mu
from .rdp import check_delta
from .sensitivity import binned_sum_sensitivity, clipped_sum_sensitivity, count_sensitivity, count_tables_sensitivity
from .smooth import default_parameters

__all__ = [
    "COUNT_SHARE",
    "binned_sum_sigma",
    "budget_cost",
    "count_sigma",
    "gaussian_budget",
    "gaussian_share_epsilon",
    "gaussian_sigma",
    "gradient_sigma",
    "largest_count",
    "private_budget_split",
    "release_cost",
    "smallest_noise",
]

#: Share of the budget's Gaussian-DP ``mu^2`` that releases the number of private rows under add/remove.
COUNT_SHARE = 0.01


def budget_cost(epsilon, delta):
    """The whole budget ``(epsilon, delta)`` as a Gaussian-DP cost: ``mu^2`` with ``mu = gdp_mu(epsilon, delta)``.

    What a mechanism whose noise is calibrated to the budget spends ([DRS22] Cor. 2.13).
    """
    return Cost(mu_squared=float(gdp_mu(epsilon, delta)) ** 2)


def gaussian_sigma(sensitivity, mu):
    """Noise of a Gaussian release of L2 ``sensitivity`` that is ``mu``-GDP: ``sensitivity / mu`` ([DRS22] Thm. 2.7)."""
    return float(sensitivity / mu)


def _sqrt_count(n):
    """``sqrt(n)`` in float64 for a count of any integer type (numpy takes the square root of a ``uint8`` in
    ``float16``: ``sqrt(50)`` would be 7.0703, not 7.0711, and the noise 0.011% too small)."""
    return np.sqrt(as_float64(n))


def gaussian_share_epsilon(epsilon, delta, share):
    """Epsilon of a ``share`` of the Gaussian-DP ``mu^2`` of the budget ``(epsilon, delta)`` ([DRS22] Cor. 2.13)."""
    return float(gdp_epsilon(np.sqrt(share) * float(gdp_mu(epsilon, delta)), delta))


def count_sigma(n_partitions, mu, neighboring="replace-one"):
    """Noise of every count so that ``n_partitions`` count tables are ``mu``-GDP together.

    Their L2 sensitivity is :func:`~skpate.privacy.sensitivity.count_tables_sensitivity`.
    """
    return gaussian_sigma(count_tables_sensitivity(n_partitions, neighboring), mu)


def gradient_sigma(clip, n_iter, mu, neighboring="replace-one"):
    """Noise of each step's clipped gradient sum so that ``n_iter`` steps are ``mu``-GDP.

    Each sum has L2 sensitivity :func:`~skpate.privacy.sensitivity.clipped_sum_sensitivity`
    ``D``; ``n_iter`` Gaussian releases at ``sigma`` compose to ``D sqrt(n_iter) / sigma``-GDP
    ([DRS22] Thm. 2.7, Cor. 3.3).
    """
    return gaussian_sigma(clipped_sum_sensitivity(clip, neighboring) * _sqrt_count(n_iter), mu)


def private_budget_split(mu, neighboring):
    """``(mu of the gradient steps, noise of the row count or None)`` for a ``mu``-GDP fit.

    Under replacement the number of private rows is public. Under add/remove it is released once with
    Gaussian noise (:func:`~skpate.privacy.sensitivity.count_sensitivity` 1) at ``COUNT_SHARE`` of
    ``mu^2``; the rest goes to the steps, so the two compose to ``mu`` ([DRS22] Cor. 3.3).
    """
    if count_sensitivity(neighboring) == 0:
        return mu, None
    return mu * np.sqrt(1.0 - COUNT_SHARE), float(count_sensitivity(neighboring) / (mu * np.sqrt(COUNT_SHARE)))


def release_cost(sanitize_order):
    """The GNSS release of a data-dependent epsilon at a fixed order, with the default parameters."""
    return Cost() if sanitize_order is None else Cost(release=default_parameters(float(sanitize_order)))


def smallest_noise(make, epsilon, delta, n_queries, sanitize_order=None):
    """Smallest noise ``x`` such that ``make(x)``'s publishable epsilon is ``<= epsilon``.

    The a-priori epsilon of ``n_queries`` answered queries (and the release,
    if any) decreases in the noise, so a root finder on ``log x`` brackets
    the exact answer; the result is rounded *up* so that the budget is met.
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not 0 < epsilon < np.inf:
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}.")
    epsilon = float(epsilon)  # a float16 budget would compare (and round its target) in float16
    n_queries = check_positive_int("n_queries", n_queries)
    delta = check_delta(delta)
    release = release_cost(sanitize_order)
    if release.epsilon(delta)[0] >= epsilon:
        raise ValueError(
            f"the sanitized release at order {sanitize_order} alone costs at least epsilon {epsilon:g}; "
            "use sanitize_order=None or a larger budget."
        )

    # Aim a hair below the target so that rounding never lands above it.
    target = epsilon * (1.0 - 1e-9)

    def excess(log_noise):
        return (make(np.exp(log_noise)).apriori_cost(n_queries) + release).epsilon(delta)[0] - target

    low, high = -10.0, 10.0
    while excess(high) > 0:  # tiny budgets need a lot of noise
        low, high = high, high + 10.0
    while excess(low) <= 0:
        low, high = low - 10.0, low
    log_noise = brentq(excess, low, high, xtol=1e-10, rtol=1e-12)
    noise = np.exp(log_noise)
    while excess(np.log(noise)) > 0:
        noise = np.nextafter(noise, np.inf) * (1 + 1e-12)
    return float(noise)


def largest_count(per_query, epsilon, delta, limit, fixed=Cost()):
    """Largest ``n <= limit`` with ``(n * per_query + fixed).epsilon(delta) <= epsilon``.

    The number of queries a budget fixed in advance allows, found by
    bisection (the epsilon of ``n`` repetitions is non-decreasing in ``n``).

    Parameters
    ----------
    per_query : Cost
        What one query can cost at most.
    epsilon : float > 0
    delta : float in (0, 1)
    limit : int >= 0
        Most queries there can be (e.g. the public rows).
    fixed : Cost, default=Cost()
        A cost paid once (e.g. the sanitized release).

    Returns
    -------
    n : int
        ``-1`` if even ``fixed`` alone exceeds ``epsilon``.
    """

    epsilon = float(epsilon)  # in float16, 8.003 <= 8.0 holds

    def fits(n):
        return (n * per_query + fixed).epsilon(delta)[0] <= epsilon

    if not fits(0):
        return -1
    if fits(limit):
        return limit
    low, high = 0, limit  # invariant: fits(low), not fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def gaussian_budget(epsilon, delta, fixed=Cost()):
    """Largest ``mu^2`` such that ``Cost(mu_squared=mu^2) + fixed`` costs at most ``epsilon`` at ``delta``.

    The budget of a Gaussian-DP filter (Smith & Thakurta 2022): adaptively
    chosen ``mu_i``-GDP mechanisms, run only while ``sum mu_i^2`` stays within
    it, are ``sqrt(budget)``-GDP together, and ``mu``-GDP is ``lam mu^2 / 2``-RDP
    at every order, which composes with ``fixed`` (e.g. a sanitized release).
    Exact (:func:`~skpate.privacy.gdp.gdp_mu`) when ``fixed`` is zero,
    otherwise found by bisection and rounded down.

    Returns
    -------
    mu_squared : float
        0 if ``fixed`` alone exceeds ``epsilon``.
    """
    delta, epsilon = check_delta(delta), float(epsilon)  # in float16, 8.003 <= 8.0 holds
    if fixed.is_zero:
        return float(gdp_mu(epsilon, delta)) ** 2
    if fixed.epsilon(delta)[0] > epsilon:
        return 0.0
    low, high = 0.0, float(gdp_mu(epsilon, delta)) ** 2  # adding ``fixed`` can only lower the budget
    for _ in range(100):
        middle = (low + high) / 2.0
        fits = (Cost(mu_squared=middle) + fixed).epsilon(delta)[0] <= epsilon
        low, high = (middle, high) if fits else (low, middle)
    return low


def binned_sum_sigma(clip, n_rounds, mu):
    """Noise of every entry of each round's per-bin clipped sums so that ``n_rounds`` rounds are ``mu``-GDP.

    Each round's table has L2 sensitivity :func:`~skpate.privacy.sensitivity.binned_sum_sensitivity` ``D``
    (replace-one); ``n_rounds`` Gaussian releases at ``sigma``, each round's bins and clipped vectors chosen from
    public rows and the earlier releases, compose to ``D sqrt(n_rounds) / sigma``-GDP ([DRS22] Thm. 2.7, Cor. 3.3).
    """
    return gaussian_sigma(binned_sum_sensitivity(clip) * _sqrt_count(n_rounds), mu)
