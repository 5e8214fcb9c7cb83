"""A privacy budget shared by every fit on the same private data, composed in RDP."""

import os
import threading

import numpy as np

from .rdp import check_delta, check_orders, rdp_to_dp

__all__ = ["BudgetExceededError", "RDPAccountant"]


class BudgetExceededError(ValueError):
    """A fit would spend more privacy than the accountant's budget allows."""


class RDPAccountant:
    """Privacy budget ``(epsilon, delta)`` across fits, composed in Renyi DP.

    Give the same accountant to every :class:`~skpate.PATEClassifier` that
    trains on the same private data (``PATEClassifier(accountant=...)``). Each
    fit first *reserves* its worst-case data-independent cost (every query
    answered) and is refused with :class:`BudgetExceededError` before any
    teacher is trained if that does not fit in what is left; once the fit has
    released its labels, the reservation is settled to the fit's actual
    data-independent RDP curve (which depends on released outputs only, e.g.
    the number of answered queries, so the ledger itself is publishable).
    RDP curves add order by order, which is much tighter than adding epsilons.

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
        RDP orders; default :data:`skpate.privacy.DEFAULT_ORDERS`. Fits
        must use the same grid (they do unless you change it).

    Attributes
    ----------
    ledger : list of dict
        One entry per fit: ``label`` (the estimator and aggregator),
        ``epsilon`` (that fit alone, data-independent) and ``settled`` (False
        while the fit runs, or if it failed after reserving).

    Examples
    --------
    >>> from skpate.privacy import RDPAccountant
    >>> accountant = RDPAccountant(epsilon=3.0, delta=1e-5)
    >>> accountant.spent_epsilon
    0.0
    """

    def __init__(self, epsilon, delta, orders=None):
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating)) or not epsilon > 0:
            raise ValueError(f"epsilon must be a positive number, got {epsilon!r}.")
        self.epsilon = float(epsilon)
        self.delta = check_delta(delta)
        self.orders = check_orders(orders)
        self._curves = []
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
    def rdp(self):
        """Composed RDP curve of everything charged so far, shape ``(n_orders,)``."""
        return np.sum(self._curves, axis=0) if self._curves else np.zeros_like(self.orders)

    def _epsilon_of(self, rdp):
        return rdp_to_dp(self.orders, rdp, self.delta)[0]

    @property
    def spent_epsilon(self):
        """Epsilon (at the budget's delta) of everything charged so far."""
        rdp = self.rdp
        return self._epsilon_of(rdp) if np.any(rdp > 0) else 0.0  # nothing released, nothing spent

    @property
    def remaining_epsilon(self):
        """``epsilon - spent_epsilon`` (a fit fits if its composed epsilon stays within ``epsilon``)."""
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

    def _check_curve(self, rdp):
        rdp = np.asarray(rdp, dtype=float)
        if rdp.shape != self.orders.shape:
            raise ValueError(
                f"an RDP curve of shape {rdp.shape} cannot be charged to an accountant with {self.orders.size} "
                "orders; give the fit the accountant's orders."
            )
        if np.any(np.isnan(rdp)) or np.any(rdp < 0):
            raise ValueError("an RDP curve must be non-negative at every order.")
        return rdp

    def _check_process(self):
        if os.getpid() != self._pid:
            raise RuntimeError(
                "this RDPAccountant was copied into another process (e.g. GridSearchCV(n_jobs=2)), where its "
                "spending would be lost; run the search with n_jobs=1 (set the teachers' n_jobs instead)."
            )

    def reserve(self, rdp, label=""):
        """Charge ``rdp`` if the budget allows it; return the ledger index.

        Raises
        ------
        BudgetExceededError
            If the composed epsilon would exceed ``epsilon``; nothing is charged.
        """
        rdp = self._check_curve(rdp)
        self._check_process()
        with self._lock:
            total = self._epsilon_of(self.rdp + rdp)
            if total > self.epsilon:
                raise BudgetExceededError(
                    f"{label or 'this fit'} could spend up to epsilon {self._epsilon_of(rdp):.4g} (data-independent, "
                    f"every query answered), which would bring the total to {total:.4g} > the budget "
                    f"{self.epsilon:g} at delta {self.delta:g} ({self.spent_epsilon:.4g} already spent in "
                    f"{self.n_fits} fits). Use fewer queries or more noise (e.g. GNMax.for_budget), or a new budget "
                    "only for new private data."
                )
            self._curves.append(rdp)
            self.ledger.append({"label": label, "epsilon": self._epsilon_of(rdp), "settled": False})
            return len(self.ledger) - 1

    def cancel(self, index):
        """Void the reservation ``index`` of a fit that failed before any query was answered."""
        self.settle(index, np.zeros_like(self.orders))
        self.ledger[index]["label"] += " (failed before any vote was released)"

    def settle(self, index, rdp):
        """Replace the reservation ``index`` by the actual cost ``rdp`` (at most the reservation)."""
        rdp = self._check_curve(rdp)
        self._check_process()
        with self._lock:
            if np.any(rdp > self._curves[index] * (1 + 1e-12)):
                raise ValueError("a fit cannot cost more than it reserved.")
            self._curves[index] = rdp
            self.ledger[index].update(epsilon=self._epsilon_of(rdp), settled=True)
