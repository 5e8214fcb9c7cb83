"""A privacy budget shared by every fit on the same private data: privacy filters fixed in advance.

:class:`BudgetFilters` is the composition rule, pure arithmetic on charge vectors. Two accountants keep
its state: :class:`RDPAccountant` in this process's memory, and
:class:`~skpate.privacy.PrivacyLedger` in a database that processes, jobs and days share. Both offer
the same thin interface (:class:`BudgetAccountant`): ``reserve`` a fit's a-priori cost before it reads
a private row, ``settle`` or ``cancel`` it after, read ``spent_epsilon`` and ``history()``.
"""

import json
import numbers
import os
import threading
import uuid
import weakref
from datetime import datetime, timezone

import numpy as np
from sklearn.utils._param_validation import validate_parameter_constraints

from .._validation import RealRange
from .cost import Cost
from .gdp import gdp_epsilon, gdp_mu
from .rdp import check_delta, check_orders

__all__ = ["BudgetAccountant", "BudgetExceededError", "BudgetFilters", "RDPAccountant", "default_order"]

#: The smallest default Renyi order: at huge budgets the best order tends to 1, where the conversion's
#: ``1 / (order - 1)`` would overflow; any order > 1 is valid, this one keeps the arithmetic finite.
_MIN_DEFAULT_ORDER = 1.001


class BudgetExceededError(ValueError):
    """A fit would spend more privacy than the accountant's budget allows."""


def rdp_conversion_offset(delta, orders):
    """What the improved conversion adds to RDP at each order: ``epsilon = rdp + offset``.

    Canonne, Kamath, Steinke 2020, Prop. 12:
    ``epsilon = rdp + log(1 - 1/lam) - (log delta + log lam) / (lam - 1)``. Kept apart from the budget
    ``epsilon - offset`` so that a charge's epsilon is never computed as a difference of huge budgets.
    """
    return np.log1p(-1.0 / orders) - (np.log(delta) + np.log(orders)) / (orders - 1.0)


def default_order(epsilon, delta):
    """The RDP order at which a Gaussian composition costing exactly ``(epsilon, delta)`` converts best.

    With ``rho``-zCDP, ``epsilon = rho + 2 sqrt(rho log(1/delta))`` at the
    order ``1 + sqrt(log(1/delta) / rho)`` (Bun & Steinke 2016, Prop. 1.3):
    a function of the budget alone, so it can be fixed before any fit. At
    least ``1.001``, so that huge budgets stay finite.
    """
    log_inv = np.log(1.0 / delta)
    rho = (np.sqrt(log_inv + epsilon) - np.sqrt(log_inv)) ** 2
    return max(1.0 + np.sqrt(log_inv / rho), _MIN_DEFAULT_ORDER)


def now():
    """The time of a charge: UTC, ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def fit_params(estimator):
    """An estimator's own parameters as JSON text for a charge's record: public settings, never rows.

    Nested estimators and other objects are recorded by their ``repr``; the accountant is left out.
    """
    if estimator is None:
        return "{}"
    params = {k: v for k, v in estimator.get_params(deep=False).items() if k != "accountant"}
    return json.dumps(params, default=repr, sort_keys=True)


class BudgetFilters:
    """The composition rule of every skpate budget: privacy filters fixed before the first fit.

    A budget ``(epsilon, delta)`` is enforced by a Gaussian-DP filter (``sum
    mu_i^2 <= mu^2``, Smith & Thakurta 2022; Gaussian fits only), Renyi
    filters at ``orders`` (Feldman & Zrnic 2021), with ``delta`` split evenly
    among them, and a pure-DP filter (``sum epsilon_i <= epsilon``; pure fits
    only, no ``delta``: each fit's privacy loss is at most its ``epsilon_i``
    at every output, whatever earlier outputs chose, so the sequence's is at
    most the sum, basic composition as a filter, Rogers et al. 2016). A
    charge is a vector: its ``mu^2`` (``inf`` unless every part is Gaussian),
    its RDP at each order, then its pure epsilon (``inf`` unless every part is
    pure). A fit is admitted if a filter that admitted
    every earlier fit still has room for it; filters without room drop out.
    So at the end some filter admitted every fit, and the union bound over the
    filters (over the disjoint events "the first filter still in force is
    this one") gives ``(epsilon, delta)``-DP for the whole sequence, whatever
    the fits and their order.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)
    orders : array-like of float > 1, optional
        Default: :func:`default_order` of the budget.
    """

    _parameter_constraints: dict = {
        "epsilon": [RealRange(0, np.inf, closed="neither")],
        "delta": [RealRange(0, 1, closed="neither")],
        "orders": [None, "array-like"],
    }

    def __init__(self, epsilon, delta, orders=None, owner="RDPAccountant"):
        # Validated as scikit-learn validates estimator parameters; numpy numbers are numbers.
        validate_parameter_constraints(
            self._parameter_constraints, {"epsilon": epsilon, "delta": delta, "orders": orders}, owner
        )
        if isinstance(epsilon, (bool, np.bool_)):
            raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}.")
        self.epsilon = float(epsilon)
        self.delta = check_delta(delta)
        self.orders = np.array([default_order(self.epsilon, self.delta)]) if orders is None else check_orders(orders)
        self.filter_delta = self.delta / (1 + self.orders.size)  # the pure filter needs none
        self._offset = rdp_conversion_offset(self.filter_delta, self.orders)
        mu_squared = float(gdp_mu(self.epsilon, self.filter_delta)) ** 2
        self.limits = np.concatenate([[mu_squared], self.epsilon - self._offset, [self.epsilon]])
        if not np.all(np.isfinite(self.limits)):  # an internal guarantee: a budget is finite numbers, never nan
            raise ValueError(f"epsilon={self.epsilon!r} at delta={self.delta!r} has no finite filter; lower epsilon.")

    @property
    def size(self):
        return 2 + self.orders.size

    @property
    def names(self):
        return ["gdp"] + [f"rdp({order:g})" for order in self.orders] + ["pure"]

    def stored(self, vector, fill):
        """A vector over the filters kept by an earlier version, one filter short (before the pure-DP filter), over
        this version's filters: the missing entry is ``fill`` (``inf`` for a charge: no pure part; ``False`` for a
        filter in force: not in force)."""
        vector = np.asarray(vector)
        return np.append(vector, fill) if vector.size == self.size - 1 else vector

    def charge(self, cost):
        """The charge vector of ``cost``: ``mu^2`` (``inf`` if any part is not Gaussian), RDP per order, then its
        pure epsilon by basic composition (``inf`` if any part is not pure)."""
        if not isinstance(cost, Cost):
            raise TypeError(f"charges are skpate.privacy.Cost objects, got {type(cost).__name__}.")
        gaussian_only = not cost.pure and cost.release is None
        pure_only = cost.mu_squared == 0 and cost.release is None
        pure = float(sum(eps0 * count for eps0, count in cost.pure)) if pure_only else np.inf
        return np.concatenate([[cost.mu_squared if gaussian_only else np.inf], cost.rdp(self.orders), [pure]])

    def admit(self, spent, alive, charge):
        """The filters that admitted every earlier charge and still have room for ``charge`` (may be none)."""
        return np.asarray(alive, dtype=bool) & (np.asarray(spent) + charge <= self.limits)

    def epsilons(self, charge):
        """Epsilon of ``charge`` at the filters' delta, per filter: exact GDP, improved RDP conversion."""
        gdp = gdp_epsilon(np.sqrt(charge[0]), self.filter_delta) if np.isfinite(charge[0]) else np.inf
        rdp = charge[1:-1] + self._offset
        return np.concatenate([[gdp], np.maximum(rdp, 0.0), [charge[-1]]])

    def epsilon_of(self, charge, alive=None):
        """Epsilon of ``charge`` by the best filter (among ``alive`` ones); 0 for a zero charge."""
        charge = np.asarray(charge, dtype=float)
        if not np.any(charge > 0):
            return 0.0
        epsilons = self.epsilons(charge)
        return float(np.min(epsilons if alive is None else epsilons[np.asarray(alive, dtype=bool)]))

    def refusal(self, charge, label, spent_epsilon, n_fits, fit_delta=None):
        """The error of a fit that does not fit: what it costs, the budget, what is spent, and the fix."""
        message = (
            f"{label or 'this fit'} could spend up to epsilon {self.epsilon_of(charge):.4g} (a priori) at delta "
            f"{self.filter_delta:.3g}, which would exceed the budget {self.epsilon:g} at delta {self.delta:g} "
            f"({spent_epsilon:.4g} already spent in {n_fits} fits)."
        )
        if fit_delta is not None and not np.isclose(fit_delta, self.delta, rtol=1e-12, atol=0):
            message += (
                f" The fit was calibrated at delta={fit_delta:g}, but the budget is at delta={self.delta:g} (split "
                f"among {self.size - 1} filters): at the budget's delta the same noise costs more epsilon. Give the "
                "estimator the budget's delta."
            )
        return BudgetExceededError(
            message + " Use fewer queries or more noise (e.g. GNMax.for_budget), or a new budget only for new "
            "private data."
        )


class BudgetAccountant:
    """The interface every skpate budget offers the estimators (``accountant=``).

    An estimator calls :meth:`reserve` with its a-priori cost before it reads a
    private row, then :meth:`settle` with what it charged (at most the
    reservation) or :meth:`cancel` if it failed before it read a private row.
    ``clone`` and ``copy.deepcopy`` hand back the accountant itself: every fit
    of a search is charged to the one budget.
    """

    def reserve(self, cost, label="", *, delta=None, params="{}"):
        """Charge ``cost`` before a fit reads a private row, if a filter still in force has room for it.

        Parameters
        ----------
        cost : skpate.privacy.Cost
            What the fit can cost at most.
        label : str
            The estimator and its mechanism, for :meth:`history`.
        delta : float, optional
            The delta the fit was calibrated at; named in the error if it is not the budget's.
        params : str
            The estimator's parameters as JSON (:func:`fit_params`), for :meth:`history`.

        Returns
        -------
        reservation : int

        Raises
        ------
        BudgetExceededError
            If no filter has room; nothing is charged.
        """
        raise NotImplementedError

    def settle(self, reservation, cost):
        """Replace the reservation by what the fit charged, ``cost`` (at most the reservation)."""
        raise NotImplementedError

    def cancel(self, reservation):
        """Void the reservation of a fit that failed before it read a private row."""
        raise NotImplementedError

    def history(self):
        """Every charge, oldest first: a list of dicts (time, label, parameters, epsilon, status); no private data."""
        raise NotImplementedError

    @property
    def spent_epsilon(self):
        """Epsilon of everything charged so far, by the best filter still in force (0 before any charge)."""
        raise NotImplementedError

    @property
    def filter_delta(self):
        """The share of ``delta`` each filter converts at: ``delta / (1 + number of orders)``."""
        return self._budget.filter_delta

    @property
    def remaining_epsilon(self):
        """``epsilon - spent_epsilon``."""
        return max(self.epsilon - self.spent_epsilon, 0.0)

    @property
    def n_fits(self):
        """Number of fits charged (settled or not; cancelled ones too)."""
        return len(self.history())

    # Shared, not copied: clone() and deepcopy() hand back this very object.
    def __sklearn_clone__(self):
        return self

    def __deepcopy__(self, memo):
        return self


#: The live in-memory accountants of this process, by id: a pickled accountant loaded in the same process is
#: the accountant itself, not a second budget.
_LIVE = weakref.WeakValueDictionary()


def _restore(uid, state):
    """Unpickle an :class:`RDPAccountant`: the live one of this process, or a read-only copy."""
    live = _LIVE.get(uid)
    if live is not None and live._pid == os.getpid():
        return live
    copy = RDPAccountant.__new__(RDPAccountant)
    copy.__dict__.update(state)
    # The filters from the budget's numbers, and its vectors over them: a pickle of an earlier version has fewer.
    kept = copy._budget
    copy._budget = BudgetFilters(kept.epsilon, kept.delta, kept.orders)
    copy._alive = copy._budget.stored(copy._alive, False).astype(bool)
    copy._charges = [copy._budget.stored(charge, np.inf).astype(float) for charge in copy._charges]
    copy._lock = threading.Lock()
    copy._read_only = True
    return copy


class RDPAccountant(BudgetAccountant):
    """Privacy budget ``(epsilon, delta)`` across fits in this process, enforced by privacy filters fixed in advance.

    Give the same accountant to every estimator that trains on the same
    private data (``accountant=...``). Each fit first *reserves* its a-priori
    cost (:class:`~skpate.privacy.Cost`: every query answered, or its own
    budget) and is refused with :class:`BudgetExceededError` before it reads a
    private row if that does not fit in what is left; once the fit has
    released its outputs, the reservation is *settled* to what the fit charged
    (answer steps only where they ran), which is at most the reservation.

    The budget is enforced by the filters of :class:`BudgetFilters`: a
    Gaussian-DP filter and Renyi filters at ``orders``, with ``delta`` split
    evenly among them.

    The budget lives in this process's memory and cannot be doubled:
    ``clone``, ``copy.deepcopy`` and a pickle loaded in the same process give
    back the accountant itself. A copy in another process (a pickle loaded
    tomorrow, a worker of ``GridSearchCV(n_jobs=2)``) is read-only: it reports
    what was spent and refuses to charge. To keep one budget across processes
    and days, use :class:`~skpate.privacy.PrivacyLedger`.

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
    filters : list of str
        The filters still in force (``"gdp"``, ``"rdp(order)"``).

    See Also
    --------
    skpate.privacy.PrivacyLedger : the same budget in a database, shared by processes.

    Examples
    --------
    >>> from skpate.privacy import RDPAccountant
    >>> accountant = RDPAccountant(epsilon=3.0, delta=1e-5)
    >>> accountant.spent_epsilon
    0.0
    """

    def __init__(self, epsilon, delta, orders=None):
        self._budget = BudgetFilters(epsilon, delta, orders, owner="RDPAccountant")
        self.epsilon, self.delta, self.orders = self._budget.epsilon, self._budget.delta, self._budget.orders
        self._alive = np.ones(self._budget.size, dtype=bool)  # [gdp, orders...]
        self._charges = []  # one charge vector per fit
        self._entries = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._read_only = False
        self._uid = uuid.uuid4().hex
        _LIVE[self._uid] = self

    def __reduce__(self):
        state = {k: v for k, v in self.__dict__.items() if k != "_lock"}
        return _restore, (self._uid, state)

    # ------------------------------------------------------------ reading

    @property
    def filters(self):
        return [name for name, alive in zip(self._budget.names, self._alive) if alive]

    def _spent(self):
        return np.sum(self._charges, axis=0) if self._charges else np.zeros(self._budget.size)

    @property
    def spent_epsilon(self):
        """Epsilon of everything charged so far, by the best filter still in force (0 before any charge)."""
        return self._budget.epsilon_of(self._spent(), self._alive)

    def history(self):
        """Every charge, oldest first: a list of dicts.

        Keys: ``id`` (the reservation), ``time`` (UTC), ``label`` (the
        estimator and its mechanism), ``params`` (the estimator's parameters,
        JSON), ``epsilon`` (that charge alone, at the filters' delta) and
        ``status`` (``"reserved"`` while the fit runs, ``"settled"``,
        ``"cancelled"``). No private data.
        """
        return [dict(entry) for entry in self._entries]

    def __repr__(self):
        copy = "; a read-only copy" if self._read_only else ""
        return (
            f"RDPAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}; spent {self.spent_epsilon:.4g} "
            f"in {self.n_fits} fits, {self.remaining_epsilon:.4g} left{copy})"
        )

    # ----------------------------------------------------------- charging

    def _check_writable(self):
        if self._read_only or os.getpid() != self._pid:
            raise RuntimeError(
                "this RDPAccountant is a copy made in another process (a worker of GridSearchCV(n_jobs=2), a pickle "
                "loaded later): an in-memory budget charged there would be a second budget, or lost. Keep the budget "
                "in a skpate.privacy.PrivacyLedger, which every process shares, or run the search with n_jobs=1 "
                "(set the teachers' n_jobs instead)."
            )

    def reserve(self, cost, label="", *, delta=None, params="{}"):
        """Charge ``cost`` if a filter still in force has room for it (:meth:`BudgetAccountant.reserve`)."""
        charge = self._budget.charge(cost)
        self._check_writable()
        with self._lock:
            room = self._budget.admit(self._spent(), self._alive, charge)
            if not room.any():
                raise self._budget.refusal(charge, label, self.spent_epsilon, self.n_fits, delta)
            self._alive = room
            self._charges.append(charge)
            self._entries.append(
                {
                    "id": len(self._entries),
                    "time": now(),
                    "label": label,
                    "params": params,
                    "epsilon": self._budget.epsilon_of(charge),
                    "status": "reserved",
                }
            )
            return len(self._entries) - 1

    def cancel(self, reservation):
        """Void the reservation of a fit that failed before it read a private row."""
        self._close(reservation, np.zeros(self._budget.size), "cancelled")

    def settle(self, reservation, cost):
        """Replace the reservation by what the fit charged, ``cost`` (at most the reservation)."""
        self._close(reservation, self._budget.charge(cost), "settled")

    def _close(self, index, charge, status):
        self._check_writable()
        with self._lock:
            if not isinstance(index, numbers.Integral) or not 0 <= index < len(self._charges):
                raise IndexError(f"no reservation {index!r} in this accountant ({len(self._charges)} fits).")
            entry = self._entries[index]
            if entry["status"] != "reserved":
                raise ValueError(f"reservation {index} is already {entry['status']}; a charge is closed once.")
            self._charges[index] = close_charge(self._charges[index], charge)
            entry.update(epsilon=self._budget.epsilon_of(self._charges[index]), status=status)


def close_charge(reserved, charge):
    """What a reservation becomes when its fit settles: ``charge``, which may not exceed ``reserved``."""
    reserved, charge = np.asarray(reserved, dtype=float), np.asarray(charge, dtype=float)
    if np.any(charge > reserved * (1 + 1e-12)):
        raise ValueError("a fit cannot cost more than it reserved.")
    return np.minimum(charge, reserved)  # within float tolerance of the check above
