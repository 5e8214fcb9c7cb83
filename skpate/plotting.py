"""Plots in scikit-learn's ``Display`` style (``from_estimator`` / ``from_votes``, then ``plot(ax=...)``).

matplotlib is optional: only this module needs it. Each display keeps what
it plotted (``ax_``, ``figure_`` and the data), as scikit-learn's do.

Privacy: a plot is a publication. ``VoteGapDisplay`` and the data-dependent
curve of ``CumulativeEpsilonDisplay`` are computed from the raw votes: they
are diagnostics for whoever holds the private data, not figures to publish.
The data-independent curve alone (``plot(data_dependent=False)``) is
publishable. The epsilons of ``PrivacyUtilityDisplay`` are publishable; its
scores are whatever the search scored on (private validation rows, unless
the search was given labeled public data). ``TeacherCountDisplay``'s points
are noisy labels (DP outputs) scored on public labels; its fits together
cost the composition of their epsilons (``epsilons``).
"""

import numpy as np
from sklearn.base import clone

from ._validation import check_votes
from .pate import PATEClassifier
from .privacy import analyze, check_delta, gdp_epsilon, rdp_to_dp

__all__ = ["CumulativeEpsilonDisplay", "PrivacyUtilityDisplay", "TeacherCountDisplay", "VoteGapDisplay"]


def _label(value):
    return f"{value:g}" if isinstance(value, (int, float, np.number)) and not isinstance(value, bool) else str(value)


def _axes(ax):
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError('skpate.plotting needs matplotlib: pip install matplotlib (or "skpate[plot]").') from exc

    if ax is None:
        _, ax = plt.subplots()
    return ax


def _data_dependent_after_each_query(report):
    """The report's data-dependent conversion of every prefix sum of its per-query curves."""
    cumulative = np.cumsum(report.rdp_per_query, axis=0)
    return np.array([rdp_to_dp(report.orders, curve, report.delta, report.method)[0] for curve in cumulative])


def _publishable_after_each_query(report, n_points=100):
    """The report's publishable epsilon had the fit stopped after each query: same accounting, release included.

    Exact Gaussian DP is vectorized over all queries; other accountings are
    evaluated at ``n_points`` counts (the last one included) and
    interpolated between them (the curve is non-decreasing).
    """
    per_query, release, delta = report.per_query_cost, report.release_cost, report.delta
    counts = np.arange(1, report.n_queries + 1)
    if release.is_zero and not per_query.pure:
        curve = gdp_epsilon(np.sqrt(counts * per_query.mu_squared), delta)
    else:
        at = np.unique(np.linspace(1, report.n_queries, n_points).round().astype(int))
        values = [(int(k) * per_query + release).epsilon(delta)[0] for k in at]
        curve = np.interp(counts, at, values)
    return np.minimum(curve, np.inf if report.budget is None else report.budget)


class VoteGapDisplay:
    """Histogram of the gap between the two largest vote counts (PATE 2017, Fig. 3).

    Large gaps are cheap queries (the data-dependent bound is small) and
    mostly correct labels. **Computed from raw votes: a private diagnostic,
    do not publish.**

    Parameters
    ----------
    gaps : ndarray of shape (n_queries,)
    n_teachers : int

    Attributes
    ----------
    ax_, figure_ : matplotlib Axes and Figure
    bars_ : BarContainer
    """

    def __init__(self, gaps, n_teachers):
        self.gaps = gaps
        self.n_teachers = n_teachers

    @classmethod
    def from_votes(cls, votes, *, ax=None, bins=25, **kwargs):
        """Plot the gaps of a vote matrix ``(n_queries, n_classes)``."""
        votes = check_votes(votes)
        top_two = np.sort(votes, axis=1)[:, -2:]
        return cls(top_two[:, 1] - top_two[:, 0], int(votes[0].sum())).plot(ax=ax, bins=bins, **kwargs)

    @classmethod
    def from_estimator(cls, estimator, X_public, *, ax=None, bins=25, **kwargs):
        """Ask the fitted teachers of ``estimator`` (a fitted PATEClassifier) to vote on ``X_public``.

        This queries the teachers again outside any accounting: it is for the
        data owner's eyes only.
        """
        votes = estimator.teachers_.vote(X_public)
        return cls.from_votes(votes, ax=ax, bins=bins, **kwargs)

    def plot(self, ax=None, bins=25, **kwargs):
        """Draw the histogram on ``ax`` (a new figure if None); returns ``self``."""
        ax = _axes(ax)
        _, _, self.bars_ = ax.hist(self.gaps, bins=bins, range=(0, self.n_teachers), **kwargs)
        ax.set(xlabel="gap between the two largest vote counts", ylabel="queries",
               title=f"vote gaps, {self.n_teachers} teachers (private diagnostic)")  # fmt: skip
        self.ax_, self.figure_ = ax, ax.figure
        return self


class CumulativeEpsilonDisplay:
    """Epsilon as the queries are answered: publishable (a priori) first, data-dependent (private) next.

    Parameters
    ----------
    publishable_epsilon : ndarray of shape (n_queries,)
        The report's publishable epsilon had the fit stopped after each
        query (same accounting, sanitized release included, at most the
        budget): its last value is ``report.epsilon``.
    data_dependent_epsilon : ndarray of shape (n_queries,)
        The papers' data-dependent epsilon after each query (private).
    delta : float

    Attributes
    ----------
    ax_, figure_ : matplotlib Axes and Figure
    lines_ : list of Line2D
        Publishable, then data-dependent.
    """

    def __init__(self, publishable_epsilon, data_dependent_epsilon, delta):
        self.publishable_epsilon = publishable_epsilon
        self.data_dependent_epsilon = data_dependent_epsilon
        self.delta = delta

    @classmethod
    def from_report(cls, report, *, ax=None, **kwargs):
        """From a :class:`~skpate.PrivacyReport` (``analyze`` or ``PATEClassifier.privacy_report_``)."""
        return cls(_publishable_after_each_query(report), _data_dependent_after_each_query(report), report.delta).plot(
            ax=ax, **kwargs
        )

    @classmethod
    def from_estimator(cls, estimator, *, ax=None, **kwargs):
        """From a fitted :class:`~skpate.PATEClassifier`."""
        return cls.from_report(estimator.privacy_report_, ax=ax, **kwargs)

    @classmethod
    def from_votes(cls, votes, aggregator, delta, *, answered=None, student_proba=None, ax=None, **kwargs):
        """From a vote matrix and the aggregator that answered it (see :func:`skpate.analyze`)."""
        report = analyze(votes, aggregator, delta, answered=answered, student_proba=student_proba)
        return cls.from_report(report, ax=ax, **kwargs)

    def plot(self, ax=None, *, data_dependent=True, **kwargs):
        """Draw the curves on ``ax`` (a new figure if None); returns ``self``.

        ``data_dependent=False`` draws the publishable curve only: a figure
        without the private one.
        """
        ax = _axes(ax)
        queries = np.arange(1, self.publishable_epsilon.size + 1)
        self.lines_ = [
            ax.plot(queries, self.publishable_epsilon, label="publishable (a-priori bound or budget)", **kwargs)[0]
        ]
        if data_dependent:
            self.lines_.append(
                ax.plot(queries, self.data_dependent_epsilon, label="data-dependent (private)", **kwargs)[0]
            )
        ax.set(xlabel="queries", ylabel=f"epsilon (delta = {self.delta:g})", title="privacy spent")
        ax.legend()
        self.ax_, self.figure_ = ax, ax.figure
        return self


class PrivacyUtilityDisplay:
    """Score against publishable epsilon over noise settings, from a fitted ``GridSearchCV``.

    Each candidate's epsilon is what its fit publishes at most, known before
    it runs: the a-priori cost of its ``max_queries`` queries, all answered,
    and of the sanitized release, or its ``epsilon`` budget if smaller: the
    x axis is publishable. The scores are the search's ``mean_test_score``:
    computed on the rows the search validated on, private labeled rows
    unless it was given labeled public data. Scores on private rows are a
    diagnostic for the data owner (and choosing a candidate by them is not
    covered by any candidate's epsilon).

    Parameters
    ----------
    epsilons, scores : ndarray of shape (n_candidates,)
    labels : list of str
        The candidates' parameters.

    Attributes
    ----------
    ax_, figure_ : matplotlib Axes and Figure
    line_ : Line2D
    """

    def __init__(self, epsilons, scores, labels):
        self.epsilons = epsilons
        self.scores = scores
        self.labels = labels

    @classmethod
    def from_cv_results(cls, search, *, delta=None, ax=None, **kwargs):
        """Plot the candidates of a fitted search over a ``PATEClassifier`` at their publishable epsilon.

        Parameters
        ----------
        search : fitted GridSearchCV or RandomizedSearchCV
            Its estimator is a ``PATEClassifier`` with ``max_queries`` or ``epsilon`` set.
        delta : float in (0, 1), default=None
            Express each candidate's a-priori cost as epsilon at this delta
            instead of the candidate's own ``delta``. The cost is the one the
            candidate plans at its own ``delta`` (the noise and queries its
            fits use), only converted: a budget of epsilon 1 at delta 1e-5
            is more than 1 at delta 1e-7.
        ax : matplotlib Axes, default=None
        **kwargs
            Passed to :meth:`plot`.

        Returns
        -------
        display : PrivacyUtilityDisplay
        """
        delta = None if delta is None else check_delta(delta)
        epsilons = []
        for params in search.cv_results_["params"]:
            candidate = clone(search.estimator).set_params(**params)
            if not isinstance(candidate, PATEClassifier):
                raise ValueError("from_cv_results needs a search over a PATEClassifier.")
            if candidate.max_queries is None and candidate.epsilon is None:
                raise ValueError("set max_queries or epsilon on the PATEClassifier: the bound needs one of them.")
            cost = candidate.planned_cost(candidate.max_queries or np.iinfo(np.int64).max)
            epsilons.append(cost.epsilon(candidate.delta if delta is None else delta)[0])
        params = search.cv_results_["params"]
        labels = [", ".join(f"{key.split('__')[-1]}={_label(value)}" for key, value in p.items()) for p in params]
        return cls(np.array(epsilons), np.asarray(search.cv_results_["mean_test_score"]), labels).plot(ax=ax, **kwargs)

    def plot(self, ax=None, annotate=True, **kwargs):
        """Draw the candidates, in order of epsilon, on ``ax``; returns ``self``."""
        ax = _axes(ax)
        order = np.argsort(self.epsilons)
        (self.line_,) = ax.plot(self.epsilons[order], self.scores[order], marker="o", **kwargs)
        if annotate:
            for i in order:
                ax.annotate(self.labels[i], (self.epsilons[i], self.scores[i]), fontsize=7)
        ax.set(xlabel="publishable epsilon", ylabel="mean test score", title="privacy-utility trade-off")
        self.ax_, self.figure_ = ax, ax.figure
        return self


class TeacherCountDisplay:
    """Accuracy of the noisy labels against the number of teachers.

    More teachers: more consensus per unit of noise, but less data per
    teacher. Uses the true labels of the public rows (``y_public``), which
    the data owner has in a study; they never reach the teachers. Each
    setting is a separate fit on the same private data: the figure costs
    the composition of their publishable epsilons (at most their sum, the
    deltas summed too), not one fit's.

    Parameters
    ----------
    n_teachers : ndarray of shape (n_settings,)
    label_accuracy : ndarray of shape (n_settings,)
    answered : ndarray of shape (n_settings,)
    epsilons : ndarray of shape (n_settings,), default=None
        Each fit's publishable epsilon (``privacy_spent_[0]``).

    Attributes
    ----------
    ax_, figure_ : matplotlib Axes and Figure
    line_ : Line2D
    """

    def __init__(self, n_teachers, label_accuracy, answered, epsilons=None):
        self.n_teachers = n_teachers
        self.label_accuracy = label_accuracy
        self.answered = answered
        self.epsilons = epsilons

    @classmethod
    def from_estimator(cls, estimator, X, y, X_public, y_public, *, n_teachers=(10, 25, 50, 100), ax=None, **kwargs):
        """Fit ``clone(estimator)`` (an unfitted PATEClassifier) for each number of teachers."""
        accuracy, answered, epsilons = [], [], []
        for count in n_teachers:
            pate = clone(estimator).set_params(n_teachers=count).fit(X, y, X_public=X_public)
            mask = pate.public_labels_ != -1
            accuracy.append(np.mean(pate.public_labels_[mask] == np.asarray(y_public)[mask]))
            answered.append(int(mask.sum()))
            epsilons.append(pate.privacy_spent_[0])
        display = cls(np.asarray(n_teachers), np.array(accuracy), np.array(answered), np.array(epsilons))
        return display.plot(ax=ax, **kwargs)

    def plot(self, ax=None, **kwargs):
        """Draw label accuracy against the number of teachers on ``ax``; returns ``self``."""
        ax = _axes(ax)
        (self.line_,) = ax.plot(self.n_teachers, self.label_accuracy, marker="o", **kwargs)
        ax.set(xlabel="teachers", ylabel="accuracy of the answered labels", title="label accuracy vs teachers")
        self.ax_, self.figure_ = ax, ax.figure
        return self
