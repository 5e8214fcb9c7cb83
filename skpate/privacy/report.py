"""``analyze``: the privacy report of aggregating a vote matrix."""

from dataclasses import dataclass, field

import numpy as np

from .rdp import check_delta, check_orders, compose, rdp_to_dp
from .smooth import SanitizedEpsilon, gnss_rdp, sanitize

__all__ = ["PrivacyReport", "analyze"]


@dataclass(frozen=True, repr=False)
class PrivacyReport:
    """What aggregating a set of queries cost, in RDP and in (epsilon, delta).

    Attributes
    ----------
    epsilon : float
        Data-dependent epsilon (what the PATE papers report). It is computed
        from the private votes, so it is itself sensitive: do not publish it
        as is.
    order : float
        The RDP order that attains ``epsilon``.
    data_independent_epsilon : float
        Epsilon from the data-independent bound: a function of the noise
        parameters, the number of queries and the released outputs only, so
        it is safe to publish. Always ``>= epsilon``. Includes the cost of
        the sanitized release when one was made.
    data_independent_order : float
    delta : float
    method : str
        RDP-to-DP conversion used (``"classic"`` or ``"improved"``).
    n_queries : int
        Queries submitted to the aggregator.
    n_answered : int
        Queries the teachers answered (whose answer step was paid for).
    orders : ndarray of shape (n_orders,)
    rdp : ndarray of shape (n_orders,)
        Summed data-dependent RDP curve.
    data_independent_rdp : ndarray of shape (n_orders,)
    rdp_per_query : ndarray of shape (n_queries, n_orders)
        Data-dependent RDP of each query (derived from the private votes).
    data_independent_rdp_per_query : ndarray of shape (n_queries, n_orders)
        Data-independent RDP of each query (without the sanitized release).
    sanitized_epsilon : float or None
        A differentially private release of the data-dependent epsilon
        (smooth sensitivity + GNSS, PATE 2018 App. B), including the cost
        of the release itself: publishable, but an *estimate* (it may fall
        below ``epsilon``). ``None`` when not computed (aggregators other
        than GNMax and Confident-GNMax, or ``sanitize_order=None``).
    sanitization : SanitizedEpsilon or None
        Parameters and parts of that release.
    aggregator : str
        ``repr`` of the aggregator.
    is_private : bool
        False for the non-private :class:`~skpate.aggregators.Plurality`
        (infinite epsilon).
    """

    epsilon: float
    order: float
    data_independent_epsilon: float
    data_independent_order: float
    delta: float
    method: str
    n_queries: int
    n_answered: int
    orders: np.ndarray = field(compare=False)
    rdp: np.ndarray = field(compare=False)
    data_independent_rdp: np.ndarray = field(compare=False)
    rdp_per_query: np.ndarray = field(compare=False)
    data_independent_rdp_per_query: np.ndarray = field(default=None, compare=False)
    aggregator: str = ""
    is_private: bool = True
    sanitization: SanitizedEpsilon = field(default=None, compare=False)

    @property
    def sanitized_epsilon(self):
        return None if self.sanitization is None else self.sanitization.epsilon

    def __repr__(self):
        return (
            f"PrivacyReport(epsilon={self.epsilon:.4g}, data_independent_epsilon={self.data_independent_epsilon:.4g}, "
            f"delta={self.delta:g}, n_queries={self.n_queries}, n_answered={self.n_answered}, "
            f"aggregator={self.aggregator})"
        )

    def __str__(self):
        if not self.is_private:
            return (
                f"{self.aggregator}: NOT differentially private (epsilon = inf); "
                f"{self.n_queries} queries, {self.n_answered} answered."
            )
        return "\n".join(
            [
                f"Privacy report for {self.aggregator}, delta = {self.delta:g} ({self.method} RDP conversion)",
                f"  queries: {self.n_queries}, answered by the teachers: {self.n_answered}",
                f"  data-independent epsilon: {self.data_independent_epsilon:.4g} "
                f"(order {self.data_independent_order:g}; safe to publish)",
                f"  data-dependent epsilon:   {self.epsilon:.4g} "
                f"(order {self.order:g}; depends on the private votes, do not publish as is)",
            ]
            + (
                []
                if self.sanitization is None
                else [
                    f"  sanitized epsilon:        {self.sanitized_epsilon:.4g} "
                    f"(order {self.sanitization.order:g}; a DP estimate of the data-dependent one, publishable)"
                ]
            )
        )


def _describe(aggregator):
    """``Name(param=value, ...)`` with every parameter, defaults included: a report must be explicit."""
    if not hasattr(aggregator, "get_params"):
        return repr(aggregator)
    params = ", ".join(f"{name}={value!r}" for name, value in sorted(aggregator.get_params(deep=False).items()))
    return f"{type(aggregator).__name__}({params})"


def analyze(
    votes,
    aggregator,
    delta,
    answered=None,
    orders=None,
    student_proba=None,
    method="classic",
    sanitize_order=None,
    random_state=None,
):
    """Privacy report of aggregating ``votes`` with ``aggregator``.

    The entry point for teachers trained anywhere: only their votes are needed.

    Parameters
    ----------
    votes : array-like of int, shape (n_queries, n_classes)
        Teacher vote histograms of the queries that were submitted.
    aggregator : aggregator object
        One of :mod:`skpate.aggregators`, with the parameters that were used.
    delta : float in (0, 1)
    answered : array-like of bool, shape (n_queries,), optional
        Queries the teachers answered; required for ``ConfidentGNMax`` and
        ``InteractiveGNMax`` (``aggregate(..., return_answered=True)``).
    orders : array-like of float > 1, optional
        Default :data:`skpate.privacy.DEFAULT_ORDERS`.
    student_proba : array-like of shape (n_queries, n_classes), optional
        For ``InteractiveGNMax``.
    method : {"classic", "improved"}, default="classic"
        RDP-to-DP conversion (see :func:`skpate.privacy.rdp_to_dp`).
    sanitize_order : float > 1, "auto" or None, default=None
        For GNMax and Confident-GNMax, also release the data-dependent
        epsilon with :func:`skpate.privacy.sanitize` at this order:
        ``"auto"`` uses the order of the data-dependent epsilon (the papers'
        practice; the choice of order itself then depends on the votes), a
        number fixes it in advance (fully covered). None: no release.
    random_state : None, int or numpy.random.Generator
        Noise of the sanitized release.

    Returns
    -------
    report : PrivacyReport

    Examples
    --------
    >>> import numpy as np
    >>> from skpate.aggregators import GNMax
    >>> from skpate.privacy import analyze
    >>> votes = np.array([[240, 5, 5], [200, 30, 20]])
    >>> report = analyze(votes, GNMax(sigma=40), delta=1e-5)
    >>> report.epsilon < report.data_independent_epsilon
    True
    """
    delta = check_delta(delta)
    orders = check_orders(orders)
    common = dict(answered=answered, orders=orders, student_proba=student_proba)
    per_query = aggregator.privacy_cost(votes, data_dependent=True, **common)
    independent = aggregator.privacy_cost(votes, data_dependent=False, **common)
    rdp, rdp_independent = compose(per_query), compose(independent)
    epsilon, order = rdp_to_dp(orders, rdp, delta, method)
    epsilon_independent, order_independent = rdp_to_dp(orders, rdp_independent, delta, method)
    n_queries = per_query.shape[0]
    n_answered = n_queries if answered is None else int(np.count_nonzero(answered))
    sanitization = None
    if sanitize_order is not None and getattr(aggregator, "_sanitizable", False):
        sanitization = sanitize(
            votes,
            aggregator,
            delta,
            order if isinstance(sanitize_order, str) and sanitize_order == "auto" else sanitize_order,
            answered=answered,
            random_state=random_state,
        )
        # The release is a mechanism on the private votes too: the guarantee covers it.
        rdp_independent = rdp_independent + gnss_rdp(sanitization.beta, sanitization.sigma, orders)
        epsilon_independent, order_independent = rdp_to_dp(orders, rdp_independent, delta, method)
    return PrivacyReport(
        epsilon=epsilon,
        order=order,
        data_independent_epsilon=epsilon_independent,
        data_independent_order=order_independent,
        delta=delta,
        method=method,
        n_queries=n_queries,
        n_answered=n_answered,
        orders=orders,
        rdp=rdp,
        data_independent_rdp=rdp_independent,
        rdp_per_query=per_query,
        data_independent_rdp_per_query=independent,
        aggregator=_describe(aggregator),
        is_private=bool(getattr(aggregator, "is_private", True)),
        sanitization=sanitization,
    )
