"""A privacy budget shared by every fit on the same private data: privacy filters fixed in advance."""

import numbers
import os
import threading
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, validate_parameter_constraints

from .cost import Cost
from .gdp import gdp_epsilon, gdp_mu
from .rdp import check_delta, check_orders

__all__ = ["BudgetExceededError", "RDPAccountant"]


class BudgetExceededError(ValueError):
    """A fit would spend more privacy than the accountant's budget allows."""


def _rdp_budget(epsilon, delta, orders):
    """Largest RDP at each order whose improved conversion at ``delta`` is ``<= epsilon``.

    Inverts Canonne, Kamath, Steinke 2020, Prop. 12:
    ``epsilon = rdp + log(1 - 1/lam) - (log delta + log lam) / (lam - 1)``.
    """
    return epsilon - np.log1p(-1.0 / orders) + (np.log(delta) + np.log(orders)) / (orders - 1.0)


def default_order(epsilon, delta):
    """The RDP order at which a Gaussian composition costing exactly ``(epsilon, delta)`` converts best.

    With ``rho``-zCDP, ``epsilon = rho + 2 sqrt(rho log(1/delta))`` at the
    order ``1 + sqrt(log(1/delta) / rho)`` (Bun & Steinke 2016, Prop. 1.3):
    a function of the budget alone, so it can be fixed before any fit.
    """
    log_inv = np.log(1.0 / delta)
    rho = (np.sqrt(log_inv + epsilon) - np.sqrt(log_inv)) ** 2
    return 1.0 + np.sqrt(log_inv / rho)


class RDPAccountant:
    """Privacy budget ``(epsilon, delta)`` across fits, enforced by privacy filters fixed in advance.

    Give the same accountant to every :class:`~skpate.PATEClassifier` that
    trains on the same private data (``PATEClassifier(accountant=...)``). Each
    fit first *reserves* its a-priori cost (:class:`~skpate.privacy.Cost`:
    every query answered, or its own budget) and is refused with
    :class:`BudgetExceededError` before any teacher is trained if that does
    not fit in what is left; once the fit has released its labels, the
    reservation is *settled* to what the fit charged (answer steps only where
    they ran), which is at most the reservation.

    The budget is enforced by filters, each fixed before the first fit: a
    Gaussian-DP filter (``sum mu_i^2 <= mu^2``, Smith & Thakurta 2022;
    Gaussian fits only) and Renyi filters at the RDP ``orders`` (Feldman &
    Zrnic 2021), with ``delta`` split evenly among them. A fit is admitted if
    a filter that admitted every earlier fit still has room for it; filters
    without room drop out. So at the end some filter admitted every fit,
    and the union bound over the filters gives ``(epsilon, delta)``-DP for
    the whole sequence, whatever the fits and their order.

    The accountant is shared, never copied: ``sklearn.base.clone`` and
    ``copy.deepcopy`` return the accountant itself, so every fit of a
    ``GridSearchCV`` or ``cross_val_score`` is charged to it. Its state lives
    in this process: a fit in another process (``GridSearchCV(n_jobs=2)``)
    raises instead of silently charging a copy; search with ``n_jobs=1`` (the
    teachers' own ``n_jobs`` still parallelises).

    Parameters
    ----------
    epsilon : float > 0
        Total epsilon the private data may spend.
    delta : float in (0, 1)
        The delta of the budget.
    orders : array-like of float > 1, optional
        Orders of the Renyi filters, fixed now. Default: the one order at
        which a Gaussian composition of ``(epsilon, delta)`` converts best
        (:func:`default_order`). Every order costs a share of ``delta``.

    Attributes
    ----------
    ledger : list of dict
        One entry per fit: ``label`` (the estimator and aggregator),
        ``epsilon`` (that fit alone: its settled charge, or its reservation
        while it runs) and ``settled`` (False while the fit runs).
    filters : list of str
        The filters still in force (``"gdp"``, ``"rdp(order)"``).

    Examples
    --------
    >>> from skpate.privacy import RDPAccountant
    >>> accountant = RDPAccountant(epsilon=3.0, delta=1e-5)
    >>> accountant.spent_epsilon
    0.0
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, np.inf, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "orders": [None, "array-like"],
    }

    def __init__(self, epsilon, delta, orders=None):
        # Validated as scikit-learn validates estimator parameters; numpy numbers are numbers.
        validate_parameter_constraints(
            self._parameter_constraints, {"epsilon": epsilon, "delta": delta, "orders": orders}, "RDPAccountant"
        )
        if isinstance(epsilon, (bool, np.bool_)):
            raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}.")
        self.epsilon = float(epsilon)
        self.delta = check_delta(delta)
        self.orders = np.array([default_order(self.epsilon, self.delta)]) if orders is None else check_orders(orders)
        # delta is split between the Gaussian-DP filter and one Renyi filter per order.
        self._filter_delta = self.delta / (1 + self.orders.size)
        self._mu_squared_budget = float(gdp_mu(self.epsilon, self._filter_delta)) ** 2
        self._rdp_budget = _rdp_budget(self.epsilon, self._filter_delta, self.orders)
        self._alive = np.ones(1 + self.orders.size, dtype=bool)  # [gdp, orders...]
        self._charges = []  # one (1 + n_orders,) array per fit: mu^2, then RDP at each order
        self._settled = []
        self.ledger = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    # Shared, not copied: clone() and deepcopy() hand back this very object.
    def __sklearn_clone__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # ------------------------------------------------------------ reading

    @property
    def filters(self):
        names = ["gdp"] + [f"rdp({order:g})" for order in self.orders]
        return [name for name, alive in zip(names, self._alive) if alive]

    def _spent(self):
        return np.sum(self._charges, axis=0) if self._charges else np.zeros(1 + self.orders.size)

    def _epsilons(self, charge):
        """Epsilon of ``charge`` at the filters' delta, per filter: exact GDP, improved RDP conversion."""
        gdp = gdp_epsilon(np.sqrt(charge[0]), self._filter_delta) if np.isfinite(charge[0]) else np.inf
        rdp = self.epsilon - self._rdp_budget + charge[1:]  # the conversion, as _rdp_budget inverts it
        return np.concatenate([[gdp], np.maximum(rdp, 0.0)])

    @property
    def spent_epsilon(self):
        """Epsilon of everything charged so far, by the best filter still in force (0 before any charge)."""
        spent = self._spent()
        if not np.any(spent > 0):
            return 0.0
        return float(np.min(self._epsilons(spent)[self._alive]))

    @property
    def remaining_epsilon(self):
        """``epsilon - spent_epsilon``."""
        return max(self.epsilon - self.spent_epsilon, 0.0)

    @property
    def n_fits(self):
        """Number of fits charged (settled or not)."""
        return len(self.ledger)

    def __repr__(self):
        return (
            f"RDPAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}; spent {self.spent_epsilon:.4g} "
            f"in {self.n_fits} fits, {self.remaining_epsilon:.4g} left)"
        )

    # ----------------------------------------------------------- charging

    def _charge(self, cost):
        if not isinstance(cost, Cost):
            raise TypeError(f"charges are skpate.privacy.Cost objects, got {type(cost).__name__}.")
        gaussian_only = not cost.pure and cost.release is None
        return np.concatenate([[cost.mu_squared if gaussian_only else np.inf], cost.rdp(self.orders)])

    def _check_process(self):
        if os.getpid() != self._pid:
            raise RuntimeError(
                "this RDPAccountant was copied into another process (e.g. GridSearchCV(n_jobs=2)), where its "
                "spending would be lost; run the search with n_jobs=1 (set the teachers' n_jobs instead)."
            )

    def reserve(self, cost, label=""):
        """Charge ``cost`` if a filter still in force has room for it; return the ledger index.

        Parameters
        ----------
        cost : skpate.privacy.Cost
            What the fit can cost at most.
        label : str

        Raises
        ------
        BudgetExceededError
            If no filter has room; nothing is charged.
        """
        charge = self._charge(cost)
        self._check_process()
        with self._lock:
            total = self._spent() + charge
            room = self._alive & (total <= np.concatenate([[self._mu_squared_budget], self._rdp_budget]))
            if not room.any():
                raise BudgetExceededError(
                    f"{label or 'this fit'} could spend up to epsilon {np.min(self._epsilons(charge)):.4g} (a priori) "
                    f"at delta {self._filter_delta:.3g}, which does not fit in the budget {self.epsilon:g} at delta "
                    f"{self.delta:g} ({self.spent_epsilon:.4g} already spent in {self.n_fits} fits). Use fewer "
                    "queries or more noise (e.g. GNMax.for_budget), or a new budget only for new private data."
                )
            self._alive = room
            self._charges.append(charge)
            self._settled.append(False)
            self.ledger.append({"label": label, "epsilon": float(np.min(self._epsilons(charge))), "settled": False})
            return len(self.ledger) - 1

    def cancel(self, index):
        """Void the reservation ``index`` of a fit that failed before releasing anything."""
        self._settle(index, np.zeros(1 + self.orders.size), " (failed before any vote was released)")

    def settle(self, index, cost):
        """Replace the reservation ``index`` by what the fit charged, ``cost`` (at most the reservation)."""
        self._settle(index, self._charge(cost), "")

    def _settle(self, index, charge, note):
        self._check_process()
        with self._lock:
            if not isinstance(index, numbers.Integral) or not 0 <= index < len(self._charges):
                raise IndexError(f"no reservation {index!r} in this accountant ({len(self._charges)} fits).")
            if self._settled[index]:
                raise ValueError(f"reservation {index} is already settled; a charge is settled once and stays.")
            reserved = self._charges[index]
            if np.any(charge > reserved * (1 + 1e-12)):
                raise ValueError("a fit cannot cost more than it reserved.")
            self._charges[index] = np.minimum(charge, reserved)  # within float tolerance of the check above
            self._settled[index] = True
            entry = self.ledger[index]
            entry.update(epsilon=float(np.min(self._epsilons(self._charges[index]))), settled=True)
            entry["label"] += note
