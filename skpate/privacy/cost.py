"""A-priori privacy costs: what a sequence of mechanisms can cost at most, converted as tightly as valid.

A publishable epsilon is a bound that holds *before* the mechanisms run, as a
function of public quantities only (noise parameters, numbers of queries, a
budget fixed in advance). :class:`Cost` keeps such a bound by kind of
mechanism, because each kind has its own exact composition:

* Gaussian parts (GNMax answers, threshold checks) as a sum of ``mu^2`` in
  Gaussian DP, composed and converted exactly (:mod:`skpate.privacy.gdp`);
* pure-DP parts (Laplace noisy max) as ``(epsilon_0, count)``, composed with
  privacy loss distributions (Google's ``dp-accounting``; the pure-DP
  worst case is randomized response, Kairouz, Oh, Viswanath 2015);
* the smooth-sensitivity release of a data-dependent epsilon (GNSS), known
  only through its RDP curve ([PATE18] App. B), composed in RDP.

:meth:`Cost.epsilon` returns the smallest of the valid conversions: exact GDP
when every part is Gaussian; privacy loss distributions when there is no
release; RDP (improved conversion) always. Each is a valid bound for the same
a-priori cost, so their minimum is too.
"""

import numbers
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._validation import as_float64, check_positive_int
from .bounds import rdp_pure_dp
from .gdp import gdp_epsilon
from .rdp import DEFAULT_ORDERS, check_delta, rdp_to_dp
from .smooth import gnss_rdp

__all__ = [
    "Cost",
    "CostTerm",
    "gaussian_argmax_cost",
    "laplace_argmax_cost",
    "replace_one_cost",
    "threshold_check_cost",
]


class CostTerm(NamedTuple):
    """One term of an aggregator's data-dependent cost, for the code that reads it (smooth sensitivity).

    ``kind`` names the mechanism ("threshold-check", "gaussian-argmax",
    "laplace-argmax", ...), ``params`` its parameters, and ``on`` which
    queries it charges: ``"all"`` submitted ones or the ``"answered"`` ones.
    """

    kind: str
    params: dict
    on: str = "all"


@dataclass(frozen=True)
class Cost:
    """A-priori privacy cost of mechanisms run one after the other.

    Costs add with ``+`` (composition) and scale with ``n * cost`` (``n``
    repetitions). They hold for adaptively chosen mechanisms as long as each
    part's parameters are fixed before it runs.

    Parameters
    ----------
    mu_squared : float >= 0, default=0
        Sum of ``mu_i^2`` of the ``mu_i``-GDP parts ([DRS22] Cor. 3.3).
        ``inf`` means no privacy.
    pure : tuple of (float, int), default=()
        ``(epsilon_0, count)``: ``count`` mechanisms, each ``epsilon_0``-DP.
    release : tuple of (float, float) or None, default=None
        ``(beta, sigma)`` of a GNSS release of a data-dependent epsilon
        (:func:`skpate.privacy.smooth.gnss_rdp`); at most one per cost.
    """

    mu_squared: float = 0.0
    pure: tuple = ()
    release: tuple = None

    def __post_init__(self):
        # float64 and Python ints, whatever numpy types the parts came in: float16 rounds a cost (and 2 / 300^2
        # underflows to 0), a uint8 count wraps around.
        object.__setattr__(self, "mu_squared", as_float64(self.mu_squared))
        object.__setattr__(
            self,
            "pure",
            tuple(
                (as_float64(eps0), check_positive_int("a cost's pure count", count, minimum=0))
                for eps0, count in self.pure
            ),
        )
        if self.release is not None:
            object.__setattr__(self, "release", tuple(as_float64(part) for part in self.release))
        # A negative or NaN part would refill a budget it is charged to (a cost is never negative).
        if not self.mu_squared >= 0 or any(not eps0 >= 0 for eps0, _ in self.pure):
            raise ValueError(f"a cost's mu_squared and pure epsilons are >= 0 (inf: no privacy), got {self!r}.")
        if self.release is not None and (len(self.release) != 2 or not all(0 < part < np.inf for part in self.release)):
            raise ValueError(f"a cost's release is (beta, sigma), both finite and > 0, got {self.release!r}.")

    def __add__(self, other):
        if self.release is not None and other.release is not None:
            raise ValueError("a cost holds at most one sanitized release.")
        pure = {}
        for eps0, count in self.pure + other.pure:
            pure[eps0] = pure.get(eps0, 0) + count
        return Cost(
            self.mu_squared + other.mu_squared,
            tuple(sorted(pure.items())),
            self.release if other.release is None else other.release,
        )

    def __rmul__(self, n):
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(f"a cost is repeated a non-negative integer number of times, got {n!r}.")
        if self.release is not None and n != 1:
            raise ValueError("a sanitized release is made once; it cannot be repeated.")
        n = int(n)  # a numpy integer would wrap around
        # 0 * inf is 0: zero repetitions of a non-private mechanism cost nothing.
        mu_squared = 0.0 if n == 0 else n * self.mu_squared
        return Cost(mu_squared, tuple((eps0, n * count) for eps0, count in self.pure if n), self.release)

    @property
    def is_zero(self):
        return self.mu_squared == 0 and not self.pure and self.release is None

    def rdp(self, orders=None):
        """RDP curve of the whole cost, shape ``(n_orders,)``.

        ``mu``-GDP is ``lam mu^2 / 2``-RDP; ``epsilon_0``-DP is
        ``min(epsilon_0, lam epsilon_0^2 / 2)``-RDP ([Mir17] Prop. 3, [BS16]
        Prop. 1.4); GNSS as :func:`~skpate.privacy.smooth.gnss_rdp`; RDP of the
        same order adds ([Mir17] Prop. 1).
        """
        orders = DEFAULT_ORDERS if orders is None else np.asarray(orders, dtype=float)
        rdp = orders * self.mu_squared / 2.0  # gdp_rdp without the square root's rounding
        for eps0, count in self.pure:
            rdp = rdp + count * rdp_pure_dp(eps0, orders)
        if self.release is not None:
            rdp = rdp + gnss_rdp(*self.release, orders)
        return rdp

    def epsilon(self, delta):
        """The smallest valid epsilon at ``delta``, and the accounting that gave it.

        Returns
        -------
        epsilon : float
        accounting : {"gdp", "pld", "rdp"}
            ``"gdp"``: exact Gaussian DP (every part Gaussian, [DRS22]
            Cor. 2.13); ``"pld"``: privacy loss distributions (dp-accounting,
            pessimistic discretisation); ``"rdp"``: RDP with the improved
            conversion (Canonne, Kamath, Steinke 2020, Prop. 12).
        """
        delta = check_delta(delta)
        if self.is_zero:
            return 0.0, "gdp"
        if not np.isfinite(self.mu_squared):
            return float("inf"), "gdp"
        if not self.pure and self.release is None:
            return float(gdp_epsilon(np.sqrt(self.mu_squared), delta)), "gdp"
        candidates = [(rdp_to_dp(DEFAULT_ORDERS, self.rdp(DEFAULT_ORDERS), delta, method="improved")[0], "rdp")]
        if self.release is None:
            candidates.append((self._pld_epsilon(delta), "pld"))
        return min(candidates)

    def _pld_epsilon(self, delta):
        """Privacy loss distributions of the Gaussian and pure-DP parts (dp-accounting, pessimistic)."""
        from dp_accounting.pld import common, privacy_loss_distribution

        if any(eps0 > 50 for eps0, _ in self.pure):  # beyond dp-accounting's float range, and useless anyway
            return float("inf")
        pld = None
        for eps0, count in self.pure:
            part = privacy_loss_distribution.from_privacy_parameters(
                common.DifferentialPrivacyParameters(eps0, 0.0), value_discretization_interval=1e-3
            ).self_compose(count)
            pld = part if pld is None else pld.compose(part)
        if self.mu_squared > 0:
            gaussian = privacy_loss_distribution.from_gaussian_mechanism(
                1.0 / np.sqrt(self.mu_squared), value_discretization_interval=1e-3
            )  # the pure parts' grid: distributions compose only on the same one
            pld = gaussian if pld is None else pld.compose(gaussian)
        return max(float(pld.get_epsilon_for_delta(delta)), 0.0)


def gaussian_argmax_cost(sigma, sensitivity=1.0):
    """GNMax, ``argmax(v + N(0, sigma^2 I))``: ``mu = sqrt(2) sensitivity / sigma``.

    One teacher moves two counts by ``sensitivity`` (L2 ``sqrt(2)
    sensitivity``); the argmax is post-processing ([DRS22] Thm. 2.7, 2.10).
    """
    return Cost(mu_squared=2.0 * as_float64(sensitivity) ** 2 / as_float64(sigma) ** 2)


def threshold_check_cost(sigma_threshold):
    """The noisy threshold check on one count of sensitivity 1: ``mu = 1 / sigma_threshold``."""
    return Cost(mu_squared=1.0 / as_float64(sigma_threshold) ** 2)


def laplace_argmax_cost(scale, sensitivity=1.0):
    """LNMax, ``argmax(v + Lap(scale))``: ``2 sensitivity / scale``-DP ([PATE17] Sec. 2.2 / Thm. 3)."""
    return Cost(pure=((2.0 * as_float64(sensitivity) / as_float64(scale), 1),))


def replace_one_cost(cost, neighboring):
    """``cost``, stated for ``neighboring``, as a cost for replacing one row (the budgets' unit).

    A replacement is a removal then an addition. A Gaussian part of sensitivity ``D`` under adding or removing
    one row moves by at most ``2 D`` under a replacement (triangle inequality), so its ``mu = D / sigma`` doubles
    ([DRS22] Thm. 2.7) and ``mu^2`` is multiplied by 4; a pure part is ``2 epsilon_0``-DP for the pair
    (group privacy, Dwork & Roth 2014, Thm. 2.2). A GNSS release has no such conversion here: refused.

    Parameters
    ----------
    cost : Cost
    neighboring : {"replace-one", "add-remove"}

    Returns
    -------
    cost : Cost
        ``cost`` itself for "replace-one".
    """
    if neighboring == "replace-one":
        return cost
    if neighboring != "add-remove":
        raise ValueError(f"neighboring must be 'replace-one' or 'add-remove', got {neighboring!r}.")
    if cost.release is not None:
        raise ValueError("a cost with a sanitized release has no replace-one conversion for add-remove.")
    return Cost(4.0 * cost.mu_squared, tuple((2.0 * eps0, count) for eps0, count in cost.pure))
