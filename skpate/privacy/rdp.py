"""Orders, composition and the conversion from Renyi DP to (epsilon, delta)-DP."""

import numbers

import numpy as np

__all__ = ["DEFAULT_ORDERS", "check_orders", "check_delta", "compose", "rdp_to_dp"]

#: The authors' grid (orders 2..100 by 0.5, then a log grid to 500), plus a few
#: orders below 2 (they win when the RDP is large) and a log grid to 5,000
#: (they win when the RDP is tiny). Any grid is valid; more orders can only
#: lower the reported epsilon, never make it unsound.
DEFAULT_ORDERS = np.unique(
    np.concatenate(
        [
            [1.1, 1.25, 1.5, 1.75],
            np.arange(2.0, 100.5, 0.5),
            np.logspace(np.log10(100.0), np.log10(500.0), 100),
            np.logspace(np.log10(500.0), np.log10(5000.0), 20),
        ]
    )
)


def check_orders(orders):
    """Validate an order grid: a 1-d array of finite floats > 1 (``None`` = default)."""
    if orders is None:
        return DEFAULT_ORDERS
    try:
        orders = np.atleast_1d(np.asarray(orders, dtype=float))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"orders must be a 1-d array of floats > 1, got {orders!r}.") from exc
    if orders.ndim != 1 or orders.size == 0:
        raise ValueError(f"orders must be a non-empty 1-d array of floats > 1, got shape {orders.shape}.")
    if not np.all(np.isfinite(orders)) or np.any(orders <= 1):
        raise ValueError(
            f"orders must all be finite and > 1 (RDP is defined for orders > 1), got min {orders.min()!r}."
        )
    return orders


def check_delta(delta):
    """Validate ``delta`` in the open interval (0, 1)."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not (0.0 < delta < 1.0):
        raise ValueError(
            f"delta must be a float in (0, 1), got {delta!r}; a common choice is below 1 / n_private_records, "
            "e.g. 1e-5."
        )
    return float(delta)


def compose(*rdp_curves):
    """Compose mechanisms: RDP of the same order adds ([Mir17] Prop. 1).

    Each argument is an array ``(..., n_orders)``; per-query curves are summed
    over their leading axes.
    """
    total = 0.0
    for curve in rdp_curves:
        curve = np.asarray(curve, dtype=float)
        total = total + curve.reshape(-1, curve.shape[-1]).sum(axis=0)
    return total


def rdp_to_dp(orders, rdp, delta, method="classic"):
    """Convert an RDP curve to ``(epsilon, delta)``-DP, optimising the order.

    Parameters
    ----------
    orders : array-like of shape (n_orders,)
        Orders ``lam > 1``.
    rdp : array-like of shape (n_orders,)
        RDP of the whole (composed) mechanism at each order.
    delta : float in (0, 1)
    method : {"classic", "improved"}, default="classic"
        ``"classic"``: ``eps = min_lam RDP(lam) + log(1/delta) / (lam - 1)``
        ([Mir17] Prop. 3; what the PATE papers report).
        ``"improved"``: ``eps = min_lam RDP(lam) + log((lam-1)/lam)
        - (log(delta) + log(lam)) / (lam - 1)`` (Canonne, Kamath, Steinke 2020,
        Prop. 12; Balle et al. 2020, Thm. 21); smaller than the classic one at
        every order, since ``log((lam-1)/lam) - log(lam)/(lam-1) < 0``.

    Returns
    -------
    epsilon : float
        ``inf`` if the RDP is infinite at every order (e.g. no noise).
    order : float
        The order that attains the minimum (``nan`` if ``epsilon`` is ``inf``).
    """
    orders = check_orders(orders)
    delta = check_delta(delta)
    rdp = np.asarray(rdp, dtype=float)
    if rdp.shape != orders.shape:
        raise ValueError(f"rdp must have the shape of orders {orders.shape}, got {rdp.shape}.")
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ValueError("rdp must be non-negative (and not NaN) at every order.")
    if method == "classic":
        eps = rdp + np.log(1.0 / delta) / (orders - 1.0)
    elif method == "improved":
        eps = rdp + np.log1p(-1.0 / orders) - (np.log(delta) + np.log(orders)) / (orders - 1.0)
    else:
        raise ValueError(f"method must be 'classic' or 'improved', got {method!r}.")
    if not np.any(np.isfinite(eps)):
        return float("inf"), float("nan")
    best = int(np.argmin(eps))
    # (eps, delta)-DP implies (eps', delta)-DP for eps' >= eps, so a negative
    # value (tiny RDP, very large order) is reported as 0.
    return max(float(eps[best]), 0.0), float(orders[best])
