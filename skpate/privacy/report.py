"""``analyze``: the privacy report of aggregating a vote matrix."""

from dataclasses import dataclass, field

import numpy as np

from .._validation import noise_scope
from .cost import Cost
from .rdp import check_delta, check_orders, compose, rdp_to_dp
from .smooth import SanitizedEpsilon, default_parameters, sanitize

__all__ = ["PrivacyReport", "analyze", "filter_report"]


@dataclass(frozen=True, repr=False)
class PrivacyReport:
    """What aggregating a set of queries cost: the publishable guarantee first.

    Attributes
    ----------
    epsilon : float
        **The epsilon to publish**, at ``delta``: an a-priori bound, a
        function of public quantities only. With a budget (``guarantee ==
        "budget"``) it is the budget the privacy filter enforced; otherwise
        the cost of every submitted query as if answered, plus the sanitized
        release if one was made.
    delta : float
    guarantee : {"a-priori", "budget"}
        Where ``epsilon`` comes from: the budget the noise was calibrated to
        (or a privacy filter enforced), or the a-priori cost of what was released.
    mechanism : str
        What was released, with all its parameters (for PATE, the aggregator).
    neighboring : {"replace-one", "add-remove", "groups"}
        The neighbouring relation the epsilon protects: replacing one private
        row, adding or removing one, or (a PATE fit with ``groups``) adding or
        removing one group or changing any of its rows; replacing one row
        there may change two groups, twice the Gaussian-DP ``mu`` (what an
        accountant is charged).
    accounting : {"gdp", "pld", "rdp"}
        How ``epsilon`` was composed and converted (see
        :meth:`skpate.privacy.Cost.epsilon`): exact Gaussian DP, privacy loss
        distributions, or RDP with the improved conversion.
    spent_epsilon : float
        Under a budget, what the filter actually charged (answers only where
        they ran): how much of the budget was used. It is a function of the
        released outputs, but a reading, not a guarantee: the guarantee is
        the budget. Without a budget, equal to ``epsilon``.
    sanitized_epsilon : float or None
        A differentially private release of the data-dependent epsilon
        (smooth sensitivity + GNSS, PATE 2018 App. B) at an order fixed in
        advance, including the release's own cost: publishable as a DP
        *estimate* (the noise can put it below the true value), not a bound.
        ``None`` when no release was asked for.
    data_dependent_epsilon : float or None
        None where the estimator has no data-dependent analysis (the learners
        without teachers). For PATE, the papers' data-dependent epsilon (RDP with ``method``). Computed
        from the private votes: **private, do not publish**. For an
        aggregator without a data-dependent analysis
        (``has_data_dependent_analysis`` False, e.g.
        :class:`~skpate.GaussianHistogram`) it is the a-priori RDP curve,
        converted: no tighter than ``epsilon`` and a function of public
        quantities only.
    data_dependent_order : float
        Its RDP order (also private).
    method : str
        RDP-to-DP conversion of the data-dependent epsilon (``"classic"``,
        the papers', or ``"improved"``).
    n_queries : int or None
        Queries submitted to the aggregator (PATE only).
    n_answered : int or None
        Queries the teachers answered (PATE only).
    cost : Cost
        The a-priori cost behind ``epsilon`` (without a budget) or the
        filter's charges (with one).
    per_query_cost, release_cost : Cost
        What one submitted query can cost (check and answer), and the
        sanitized release (zero if none).
    budget : float or None
        The epsilon budget fixed before the fit, if any.
    orders : ndarray of shape (n_orders,)
    rdp : ndarray of shape (n_orders,)
        Summed data-dependent RDP curve (private).
    rdp_per_query : ndarray of shape (n_queries, n_orders)
        Data-dependent RDP of each query (private).
    data_independent_rdp_per_query : ndarray of shape (n_queries, n_orders)
        A-priori RDP of each query (every query as if answered), without
        the release.
    sanitization : SanitizedEpsilon or None
        Parameters and parts of the release.
    aggregator : str
        The aggregator with all its parameters.
    is_private : bool
        False for the non-private :class:`~skpate.pate.aggregators.Plurality`
        (infinite epsilon).
    data_dependent_analysis : bool
        Whether ``data_dependent_epsilon`` comes from the votes (the papers'
        analysis) or is the a-priori curve (aggregators without one).
    """

    epsilon: float
    delta: float
    guarantee: str
    accounting: str
    spent_epsilon: float
    cost: Cost = field(compare=False)
    mechanism: str = ""
    neighboring: str = "replace-one"
    budget: float = None
    data_dependent_epsilon: float = None
    data_dependent_order: float = None
    method: str = None
    n_queries: int = None
    n_answered: int = None
    per_query_cost: Cost = field(default=Cost(), compare=False)
    release_cost: Cost = field(default=Cost(), compare=False)
    orders: np.ndarray = field(default=None, compare=False)
    rdp: np.ndarray = field(default=None, compare=False)
    rdp_per_query: np.ndarray = field(default=None, compare=False)
    data_independent_rdp_per_query: np.ndarray = field(default=None, compare=False)
    aggregator: str = ""
    is_private: bool = True
    data_dependent_analysis: bool = False
    sanitization: SanitizedEpsilon = field(default=None, compare=False)

    @classmethod
    def from_cost(cls, cost, delta, *, mechanism, neighboring="replace-one", budget=None, guarantee="a-priori"):
        """The report of a fit whose whole cost is known before it runs (no data-dependent analysis).

        Parameters
        ----------
        cost : Cost
            What the fit released, a priori.
        delta : float in (0, 1)
        mechanism : str
            What was released, with its noise.
        neighboring : {"replace-one", "add-remove"}, default="replace-one"
        budget : float or None, default=None
            The budget fixed before the fit.
        guarantee : {"a-priori", "budget"}, default="a-priori"
            ``"budget"``: the noise was calibrated to ``budget``, which is the
            epsilon to publish (``cost`` must fit in it); ``"a-priori"``: the
            epsilon of ``cost``.

        Returns
        -------
        report : PrivacyReport
        """
        delta = check_delta(delta)
        spent_epsilon, accounting = cost.epsilon(delta)
        epsilon = spent_epsilon
        if guarantee == "budget":
            if budget is None or spent_epsilon > float(budget) * (1 + 1e-9):
                raise ValueError(f"a budget guarantee needs a cost within the budget {budget!r}.")
            epsilon = float(budget)
        return cls(
            epsilon=float(epsilon), delta=delta, guarantee=guarantee, accounting=accounting,
            spent_epsilon=float(spent_epsilon), cost=cost, mechanism=mechanism, neighboring=neighboring,
            budget=None if budget is None else float(budget),
        )  # fmt: skip

    @property
    def sanitized_epsilon(self):
        return None if self.sanitization is None else self.sanitization.epsilon

    def publishable(self):
        """The fields that may be published, as a JSON-ready dict; nothing computed from the raw votes.

        ``epsilon`` and ``delta`` (the guarantee), where they come from, the
        budget, and what the released outputs already tell (queries
        submitted, answered, the filter's charges, the sanitized DP estimate
        if one was made). The data-dependent epsilon, its order and the RDP
        curves are left out: they are private.

        Returns
        -------
        fields : dict
        """
        return {
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "guarantee": self.guarantee,
            "accounting": self.accounting,
            "neighboring": self.neighboring,
            "mechanism": self.mechanism,
            "budget": None if self.budget is None else float(self.budget),
            "spent_epsilon": float(self.spent_epsilon),
            "n_queries": None if self.n_queries is None else int(self.n_queries),
            "n_answered": None if self.n_answered is None else int(self.n_answered),
            "aggregator": self.aggregator,
            "is_private": bool(self.is_private),
            "sanitized_epsilon": None if self.sanitization is None else float(self.sanitized_epsilon),
        }

    def __repr__(self):
        if self.n_queries is None:
            return (
                f"PrivacyReport(epsilon={self.epsilon:.4g}, delta={self.delta:g}, guarantee={self.guarantee!r}, "
                f"neighboring={self.neighboring!r}, mechanism={self.mechanism})"
            )
        return (
            f"PrivacyReport(epsilon={self.epsilon:.4g}, delta={self.delta:g}, guarantee={self.guarantee!r}, "
            f"n_queries={self.n_queries}, n_answered={self.n_answered}, aggregator={self.aggregator})"
        )

    def __str__(self):
        if self.n_queries is None:  # no teachers, no queries: the mechanism and its budget
            source = "the budget the noise was calibrated to" if self.guarantee == "budget" else "a-priori bound"
            return "\n".join([
                f"Privacy report for {self.mechanism}",
                f"  PUBLISH: (epsilon, delta) = ({self.epsilon:.4g}, {self.delta:g})  [{source}; {self.accounting}; "
                f"{self.neighboring}]",
                "  data-dependent epsilon: none (no data-dependent analysis for this mechanism)",
            ])  # fmt: skip
        if not self.is_private:
            return (
                f"{self.aggregator}: NOT differentially private (epsilon = inf); "
                f"{self.n_queries} queries, {self.n_answered} answered."
            )
        if self.guarantee == "budget":
            source = f"the budget, enforced by a privacy filter; spent {self.spent_epsilon:.4g} of it"
        else:
            source = "a-priori bound: every submitted query as if answered"
        lines = [
            f"Privacy report for {self.aggregator}",
            f"  queries: {self.n_queries}, answered by the teachers: {self.n_answered}",
            f"  PUBLISH: (epsilon, delta) = ({self.epsilon:.4g}, {self.delta:g})  [{source}; {self.accounting}; "
            f"{self.neighboring}]",
        ]
        if self.sanitization is not None:
            lines.append(
                f"  sanitized data-dependent epsilon: {self.sanitized_epsilon:.4g} (order {self.sanitization.order:g}; "
                "a DP estimate, publishable next to the bound, not a bound)"
            )
        if self.data_dependent_analysis:
            source = "PRIVATE: computed from the votes, do not publish"
        else:  # nothing to hide, and nothing gained: say so rather than label a public number private
            source = "no data-dependent analysis for this aggregator: the a-priori RDP curve, not from the votes"
        lines.append(
            f"  data-dependent epsilon: {self.data_dependent_epsilon:.4g} (order {self.data_dependent_order:g}, "
            f"{self.method} conversion; {source})"
        )
        return "\n".join(lines)


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
        Teacher vote histograms of the queries that were submitted: non-negative
        counts whose rows all sum to the number of teachers, below ``2**53``
        (larger counts would overflow int64 sums or lose exactness as floats:
        a ``ValueError``).
    aggregator : aggregator object
        One of :mod:`skpate.pate.aggregators`, with the parameters that were used.
    delta : float in (0, 1)
    answered : array-like of bool, shape (n_queries,), optional
        Queries the teachers answered; required for ``ConfidentGNMax`` and
        ``InteractiveGNMax`` (``aggregate(..., return_answered=True)``).
    orders : array-like of float > 1, optional
        Orders of the data-dependent analysis; default
        :data:`skpate.privacy.DEFAULT_ORDERS`.
    student_proba : array-like of shape (n_queries, n_classes), optional
        For ``InteractiveGNMax``.
    method : {"classic", "improved"}, default="classic"
        RDP-to-DP conversion of the data-dependent epsilon (see
        :func:`skpate.privacy.rdp_to_dp`); the publishable epsilon always
        uses the tightest valid accounting.
    sanitize_order : float > 1 or None, default=None
        For GNMax and Confident-GNMax, also release the data-dependent
        epsilon with :func:`skpate.privacy.sanitize` at this order, which
        must be fixed before seeing the votes; its cost joins the
        publishable epsilon. None: no release.
    random_state : None, int or numpy.random.Generator
        Noise of the sanitized release: ``None`` draws fresh OS entropy; a
        seed warns with :class:`~skpate.SeededNoiseWarning`.

    Returns
    -------
    report : PrivacyReport
        Its publishable ``epsilon`` charges every submitted query as if
        answered (the a-priori worst case). A vote matrix cannot prove that a
        privacy filter stopped the queries in time, so the budget guarantee
        (``guarantee == "budget"``) is only given by the estimator that ran
        the filter (``PATEClassifier(epsilon=...)``), never from votes alone.

    Examples
    --------
    >>> import numpy as np
    >>> from skpate.pate.aggregators import GNMax
    >>> from skpate.privacy import analyze
    >>> votes = np.tile([[240, 5, 5]], (500, 1))  # 500 near-unanimous queries
    >>> report = analyze(votes, GNMax(sigma=40), delta=1e-5)
    >>> round(report.epsilon, 2), round(report.data_dependent_epsilon, 2)  # publishable, then private
    (3.34, 0.45)
    """
    releases = sanitize_order is not None and getattr(aggregator, "_sanitizable", False)  # noise drawn only then
    with noise_scope(random_state if releases else None, "analyze", stacklevel=2):  # a seeded release warns here
        return filter_report(
            votes, aggregator, delta, None, answered, orders, student_proba, method, sanitize_order, random_state
        )


def filter_report(
    votes, aggregator, delta, budget, answered=None, orders=None, student_proba=None, method="classic",
    sanitize_order=None, random_state=None,
):  # fmt: skip
    """:func:`analyze`, and with ``budget`` the report of a privacy filter with that budget.

    Only for the code that ran the filter (``PATEClassifier``, which stops
    submitting before a query could exceed ``budget``): only it may claim the
    filter's guarantee; everyone else calls :func:`analyze`.
    Ex post, "these answers spent less than B" is no guarantee: on a
    neighbouring dataset the same unfiltered run could have spent more.
    """
    delta = check_delta(delta)
    orders = check_orders(orders)
    if isinstance(sanitize_order, str):
        raise ValueError(
            f"sanitize_order must be a number fixed before seeing the votes, or None; got {sanitize_order!r} "
            "(choosing the order from the data-dependent curve would leak the private votes)."
        )
    common = dict(answered=answered, orders=orders, student_proba=student_proba)
    per_query = aggregator.privacy_cost(votes, data_dependent=True, **common)
    independent = aggregator.privacy_cost(votes, data_dependent=False, **common)
    rdp = compose(per_query)
    epsilon_dd, order_dd = rdp_to_dp(orders, rdp, delta, method)
    n_queries = per_query.shape[0]
    n_answered = n_queries if answered is None else int(np.count_nonzero(answered))

    sanitization = None
    release = Cost()
    if sanitize_order is not None and getattr(aggregator, "_sanitizable", False):
        release = Cost(release=default_parameters(float(sanitize_order)))
        sanitization = sanitize(
            votes, aggregator, delta, sanitize_order, answered=answered, random_state=random_state
        )  # fmt: skip
    check, answer = aggregator.query_cost()
    apriori = n_queries * (check + answer) + release
    spent = n_queries * check + n_answered * answer + release  # the answer step charged where it ran
    if budget is None:
        cost, guarantee = apriori, "a-priori"
        epsilon, accounting = cost.epsilon(delta)
        spent_epsilon = epsilon
    else:
        cost, guarantee = spent, "budget"
        spent_epsilon, accounting = spent.epsilon(delta)
        if spent_epsilon > float(budget) * (1 + 1e-9):
            raise ValueError(
                f"these queries spent epsilon {spent_epsilon:.4g} > the budget {budget:g}: they were not run under a "
                "privacy filter with this budget."
            )
        epsilon = float(budget)
    return PrivacyReport(
        epsilon=epsilon,
        delta=delta,
        guarantee=guarantee,
        accounting=accounting,
        spent_epsilon=spent_epsilon,
        data_dependent_epsilon=epsilon_dd,
        data_dependent_order=order_dd,
        method=method,
        n_queries=n_queries,
        n_answered=n_answered,
        cost=cost,
        per_query_cost=check + answer,
        release_cost=release,
        budget=None if budget is None else float(budget),
        mechanism=_describe(aggregator),
        orders=orders,
        rdp=rdp,
        rdp_per_query=per_query,
        data_independent_rdp_per_query=independent,
        aggregator=_describe(aggregator),
        is_private=bool(getattr(aggregator, "is_private", True)),
        data_dependent_analysis=bool(getattr(aggregator, "has_data_dependent_analysis", True)),
        sanitization=sanitization,
    )
