"""Recipes: configurations that won measured comparisons, as estimators that resolve their settings in ``fit``.

:class:`TabularPATEClassifier` is PATE configured for tabular data from the
budget: its settings are a function of ``epsilon``, ``delta`` and the number
of classes, resolved when it is fitted, so ``clone``, ``set_params(epsilon=...)``
and a ``GridSearchCV`` over ``epsilon`` run the settings each budget calls for.
:func:`make_tabular_refit` puts it under part of a budget inside a
:class:`~skpate.LeafRefitClassifier`. The measurements behind the settings are
in ``docs/benchmarks/adult.md``.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import Count, EpsilonRange, NJobs, RealRange
from .base import PrivateClassifierMixin
from .pate import GaussianHistogram, GNMax, PATEClassifier
from .pate.students import VoteRegressionClassifier
from .pool import LeafRefitClassifier
from .privacy import BudgetAccountant
from .privacy.calibration import largest_count

__all__ = ["TabularPATEClassifier", "make_tabular_pate", "make_tabular_refit"]

#: ``vote_regression="auto"`` regresses noisy histograms where the budget buys fewer hard-label answers than this.
#: Chosen between two measured budgets on UCI Adult's evaluation half (non-private tuning, disclosed in
#: docs/benchmarks/adult.md).
VOTE_REGRESSION_ANSWERS = 400


#: Fitted attributes of the PATE estimator a recipe copies: the resolved settings and the released outputs.
_PUBLISHED_ATTRIBUTES = (
    "classes_", "n_teachers_", "aggregator_", "query_strategy_", "n_rounds_", "n_queries_", "n_answered_",
    "n_labeled_", "public_labels_", "public_queried_",
)  # fmt: skip


def _unencoded_columns(X_public):
    """What of ``X_public`` a forest cannot take without an encoder, or ``""``: read on the public rows only."""
    if hasattr(X_public, "select_dtypes"):
        names = []
        for name in X_public.select_dtypes(exclude=["number", "bool"]).columns.tolist():
            try:  # an object column of numbers is fine for a forest
                X_public[name].to_numpy(dtype=float, na_value=np.nan)
            except (TypeError, ValueError):
                names.append(name)
        return f"X has non-numeric columns {names}" if names else ""
    if sp.issparse(X_public):  # numbers by construction
        return ""
    values = np.asarray(X_public)
    # Strings only: other objects (a dict, say) are left to the forests' own TypeError, which names them.
    if values.dtype.kind in "US" or (values.dtype.kind == "O" and any(isinstance(v, str) for v in values.ravel())):
        try:
            values.astype(float)
        except (TypeError, ValueError):
            return f"X has non-numeric values (dtype {values.dtype})"
    return ""


class TabularPATEClassifier(PrivateClassifierMixin, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A budget-first :class:`~skpate.PATEClassifier` for tabular data: forest teachers, a smooth forest student.

    The recipe that did best on UCI Adult at publishable epsilon 0.5 to 4
    (``docs/benchmarks/adult.md``; a handful of settings chosen on the
    evaluation half, i.e. non-private tuning, disclosed):

    * teachers: ``preprocessor`` then a random forest with
      ``max_features=None`` (the papers' teachers);
    * student: ``preprocessor`` then a random forest whose leaves hold at
      least 5 rows, so that it averages noisy labels instead of memorising
      them; where the budget buys few answers (``vote_regression="auto"``),
      the whole noisy histograms instead (:class:`skpate.GaussianHistogram`
      at twice the noise, so four times the answers, at the same cost),
      regressed by a forest
      (:class:`skpate.pate.students.VoteRegressionClassifier`);
    * noise and queries: ``PATEClassifier``'s budget defaults (GNMax at
      ``sigma = n_teachers / 1.75`` for two classes, as many queries as the
      budget covers up to ``max_answers``, then less noise instead; rounds of
      uncertainty sampling, which cost nothing).

    Every setting is a function of public quantities (``epsilon``,
    ``delta``, the number of classes), resolved in ``fit``: the fitted
    :class:`~skpate.PATEClassifier` is ``pate_`` and the resolved choices are
    ``vote_regression_`` and ``n_teachers_``. The publishable epsilon is
    ``epsilon``, a budget fixed before the fit; :meth:`configured_pate`
    shows the ``PATEClassifier`` a fit will run.

    Parameters
    ----------
    preprocessor : transformer or "passthrough", default="passthrough"
        Cloned in front of every teacher and of the student. It is fitted on
        each teacher's private partition (private) and on the public rows (the
        student's); use one fixed by a public schema (e.g.
        :func:`skpate.datasets.adult_encoder`) when the student must not
        depend on private rows at all.
    epsilon : float > 0, default=1.0
        The privacy budget, fixed before the fit.
    delta : float in (0, 1), default=1e-5
    classes : array-like, default=None
        The public label set. None takes it from the private labels with a
        :class:`~skpate.PrivacyLeakWarning` (the label set is then published).
    accountant : skpate.privacy.RDPAccountant or PrivacyLedger, default=None
        Budget shared across fits (see :class:`~skpate.PATEClassifier`).
    n_teachers : int or "auto", default=250
        ``"auto"``: more teachers where 250 would buy few answers
        (:func:`skpate.teachers_for_budget`).
    max_answers : int, default=None
        Above this many queries, the budget buys less noise instead of more
        queries (``GNMax.for_ensemble``); None: ``PATEClassifier``'s default.
    vote_regression : bool or "auto", default="auto"
        Release the whole noisy vote histogram and let the student regress it
        instead of learning hard labels. ``"auto"``: where the budget buys
        fewer than ``VOTE_REGRESSION_ANSWERS`` hard-label answers at the
        recipe's GNMax noise, a function of ``epsilon``, ``delta``,
        ``n_teachers`` and the number of classes only.
    n_rounds : int or "auto", default="auto"
        Query rounds (:class:`~skpate.PATEClassifier`).
    max_queries : int, default=None
    warm_start : bool, default=False
        Reuse the teachers of ``pate_``, e.g. to fit the same data at several
        budgets. The fit must be given the same private rows: only public
        quantities are checked (see :class:`~skpate.PATEClassifier`'s
        ``warm_start``).
    memory : str, joblib.Memory or None, default=None
    random_state : int, RandomState instance or None, default=None
        None (default) draws from OS entropy; a seed makes the noise reproducible by anyone who knows it
        (:class:`~skpate.SeededNoiseWarning`).
    n_jobs : int, default=None
    verbose : int, default=0

    Attributes
    ----------
    pate_ : PATEClassifier
        The fitted PATE estimator. Private: it holds the teachers.
    vote_regression_ : bool
        ``vote_regression``, resolved.
    n_teachers_, aggregator_, query_strategy_, n_rounds_ : resolved settings
        As :class:`~skpate.PATEClassifier`'s.
    n_queries_, n_answered_, n_labeled_, public_labels_, public_queried_ : released outputs
        As :class:`~skpate.PATEClassifier`'s.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    privacy_spent_ : tuple of (float, float)
    privacy_report_ : skpate.PrivacyReport

    Examples
    --------
    >>> from skpate import TabularPATEClassifier
    >>> from skpate.datasets import adult_encoder
    >>> pate = TabularPATEClassifier(adult_encoder(), epsilon=1.0, classes=["<=50K", ">50K"])
    >>> round(pate.publishable_epsilon(n_public=8140), 3)  # the budget, known before the fit
    1.0
    """

    _parameter_constraints: dict = {
        "preprocessor": [StrOptions({"passthrough"}), HasMethods(["fit", "transform"])],
        "epsilon": [EpsilonRange()],
        "delta": [RealRange(0, 1, closed="neither")],
        "classes": [None, "array-like"],
        "accountant": [None, BudgetAccountant],
        "n_teachers": [Count(1), StrOptions({"auto"})],
        "max_answers": [None, Count(1)],
        "vote_regression": ["boolean", StrOptions({"auto"})],
        "n_rounds": [Count(1), StrOptions({"auto"})],
        "max_queries": [None, Count(1)],
        "warm_start": ["boolean"],
        "memory": "no_validation",
        "random_state": ["random_state"],
        "n_jobs": [NJobs()],
        "verbose": ["verbose"],
    }

    def __init__(
        self, preprocessor="passthrough", *, epsilon=1.0, delta=1e-5, classes=None, accountant=None, n_teachers=250,
        max_answers=None, vote_regression="auto", n_rounds="auto", max_queries=None, warm_start=False, memory=None,
        random_state=None, n_jobs=None, verbose=0,
    ):  # fmt: skip
        self.preprocessor = preprocessor
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.accountant = accountant
        self.n_teachers = n_teachers
        self.max_answers = max_answers
        self.vote_regression = vote_regression
        self.n_rounds = n_rounds
        self.max_queries = max_queries
        self.warm_start = warm_start
        self.memory = memory
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def configured_pate(self, classes=None):
        """The unfitted ``PATEClassifier`` a fit with these parameters runs, from public quantities only.

        Parameters
        ----------
        classes : array-like, default=None
            The label set; None: ``classes``.

        Returns
        -------
        pate : PATEClassifier
        """
        self._validate_params()
        classes = self.classes if classes is None else classes
        if classes is None:
            raise ValueError("the recipe's noise depends on the number of classes: pass classes=[...] to plan a fit.")
        teacher = make_pipeline(clone(self.preprocessor, safe=False), RandomForestClassifier(max_features=None))
        pate = PATEClassifier(
            teacher, n_teachers=self.n_teachers, epsilon=self.epsilon, delta=self.delta, classes=classes,
            max_queries=self.max_queries, n_rounds=self.n_rounds, warm_start=self.warm_start, memory=self.memory,
            accountant=self.accountant, random_state=self.random_state, n_jobs=self.n_jobs, verbose=self.verbose,
        )  # fmt: skip
        n_classes = np.unique(classes).size
        n_teachers = pate.resolve_n_teachers(n_classes)  # the count the fit will train (public)
        vote_regression = self.vote_regression
        if vote_regression == "auto":  # few answers: their margins are worth more than their argmax (public rule)
            noise = GNMax.for_ensemble(self.epsilon, self.delta, n_teachers, n_classes, self.max_answers)
            hard_answers = largest_count(noise.query_cost()[1], self.epsilon, self.delta, VOTE_REGRESSION_ANSWERS)
            vote_regression = hard_answers < VOTE_REGRESSION_ANSWERS
        final = VoteRegressionClassifier() if vote_regression else RandomForestClassifier(min_samples_leaf=5)
        pate.set_params(student=make_pipeline(clone(self.preprocessor, safe=False), final))
        if self.max_answers is not None:  # the noise is fixed before the fit, for the teachers the fit will train
            noise = GaussianHistogram if vote_regression else GNMax
            aggregator = noise.for_ensemble(self.epsilon, self.delta, n_teachers, n_classes, self.max_answers)
            pate.set_params(n_teachers=n_teachers, aggregator=aggregator)
        return pate

    def planned_cost(self, n_public):
        """What a fit will cost at most, known before it runs (see :meth:`skpate.PATEClassifier.planned_cost`).

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.

        Returns
        -------
        cost : skpate.privacy.Cost
        """
        return self.configured_pate().planned_cost(n_public)

    def check_public(self, X_public):
        """Refuse, for free, what a fit would refuse on the public rows alone: raw columns the forests cannot split.

        Parameters
        ----------
        X_public : {array-like, DataFrame} of shape (n_public, n_features)

        Returns
        -------
        self : TabularPATEClassifier
        """
        unencoded = _unencoded_columns(X_public) if isinstance(self.preprocessor, str) else ""
        if unencoded:
            raise ValueError(
                f"preprocessor='passthrough' gives the raw columns to the forests, but {unencoded}; pass a "
                "preprocessor that encodes them, e.g. make_column_transformer((OneHotEncoder(handle_unknown='ignore'), "
                "[...]), remainder='passthrough') or one fixed by a public schema (skpate.datasets.adult_encoder() "
                "for UCI Adult), or use skpate.PrivateClassifier, which encodes from the public rows."
            )
        return self

    def fit(self, X, y, *, X_public=None):
        """Resolve the settings for ``epsilon``, then fit the configured ``PATEClassifier``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Private rows (labeled) and, optionally, public rows (``y == -1``,
            unless ``-1`` is one of ``classes``).
        y : array-like of shape (n_samples,)
        X_public : {array-like, DataFrame} of shape (n_public, n_features), default=None

        Returns
        -------
        self : TabularPATEClassifier
        """
        X_private, y_private, X_pub, classes = self._private_and_public_rows(X, y, X_public)
        self.check_public(X_pub)  # decided on the public rows, before any teacher is trained
        pate = self.configured_pate(classes)
        self.vote_regression_ = isinstance(pate.student[-1], VoteRegressionClassifier)
        if self.warm_start and hasattr(self, "pate_"):  # the previous fit's teachers
            pate = self.pate_.set_params(**pate.get_params(deep=False))
        self.pate_ = pate.fit(X_private, y_private, X_public=X_pub)
        validate_data(self, X, skip_check_array=True)  # n_features_in_, feature_names_in_
        for name in _PUBLISHED_ATTRIBUTES:  # what the fit released and resolved, beside the private pate_
            setattr(self, name, getattr(self.pate_, name))
        self.privacy_report_ = self.pate_.privacy_report_
        self.privacy_spent_ = self.pate_.privacy_spent_
        return self

    def predict(self, X):
        """Predict classes with the student.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "pate_")
        return self.pate_.predict(X)

    def predict_proba(self, X):
        """Class probabilities from the student, columns in ``classes_`` order.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "pate_")
        return self.pate_.predict_proba(X)

    def export_model(self):
        """The publishable artifact: an independent copy of the fitted student.

        Returns
        -------
        student : estimator
        """
        check_is_fitted(self, "pate_")
        return self.pate_.export_model()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The teachers' input is the preprocessor's, or the forest's when it passes the rows through.
        first = RandomForestClassifier() if isinstance(self.preprocessor, str) else self.preprocessor
        tags.input_tags.allow_nan = get_tags(first).input_tags.allow_nan
        tags.input_tags.sparse = get_tags(first).input_tags.sparse
        return tags


def make_tabular_pate(preprocessor="passthrough", **params):
    """The tabular PATE recipe: a :class:`TabularPATEClassifier` (settings resolved in ``fit``).

    Parameters
    ----------
    preprocessor : transformer or "passthrough", default="passthrough"
    **params
        :class:`TabularPATEClassifier` parameters (``epsilon``, ``classes``, ``delta``, ``n_teachers``, ...).

    Returns
    -------
    pate : TabularPATEClassifier
        Unfitted.

    See Also
    --------
    make_tabular_refit : This recipe under part of the budget, then private leaf refits; better on UCI Adult at
        every epsilon measured (``docs/benchmarks/adult.md``).

    Examples
    --------
    >>> from skpate import make_tabular_pate
    >>> from skpate.datasets import adult_encoder
    >>> pate = make_tabular_pate(adult_encoder(), epsilon=1.0, classes=["<=50K", ">50K"])
    >>> pate.set_params(epsilon=4.0).epsilon  # resolved again in fit: the settings follow the budget
    4.0
    """
    return TabularPATEClassifier(preprocessor, **params)


def make_tabular_refit(
    preprocessor="passthrough", *, epsilon=1.0, classes=None, delta=1e-5, accountant=None, refit_share=0.7,
    n_refits=3, random_state=None, n_jobs=None, **params,
):  # fmt: skip
    """The tabular recipe under part of the budget, then private leaf refits: a :class:`~skpate.LeafRefitClassifier`.

    ``refit_share`` of the budget's Gaussian-DP ``mu^2`` goes to ``n_refits``
    rounds of leaf counts (20-tree forests grown on the public rows, leaves of
    at least 20, the private rows' class counts per leaf released with
    Gaussian noise); the rest to a :class:`TabularPATEClassifier`, which
    resolves its settings for that smaller budget in ``fit``. Both parts are
    Gaussian DP, so they compose exactly to ``epsilon`` at ``delta``, fixed
    before the fit. The split and the rounds were chosen on UCI Adult's
    evaluation half (non-private tuning, disclosed in ``docs/benchmarks/adult.md``).

    Parameters
    ----------
    preprocessor : transformer or "passthrough", default="passthrough"
        In front of every teacher and of the student, and the features the
        refit forests split on (fitted on the public rows).
    epsilon : float > 0, default=1.0
        The whole budget.
    classes : array-like, default=None
    delta : float in (0, 1), default=1e-5
    accountant : skpate.privacy.RDPAccountant or PrivacyLedger, default=None
    refit_share : float in (0, 1), default=0.7
    n_refits : int, default=3
    random_state : int, RandomState instance or None, default=None
        Seeds the PATE part and the refits. None (default) draws from OS
        entropy; a seed makes the noise reproducible by anyone who knows it
        (:class:`~skpate.SeededNoiseWarning`).
    n_jobs : int, default=None
    **params
        Passed to :class:`TabularPATEClassifier` (``n_teachers``, ``warm_start``, ...).

    Returns
    -------
    refit : LeafRefitClassifier
        Unfitted; ``set_params(epsilon=...)`` re-plans both parts.

    Examples
    --------
    >>> from skpate import make_tabular_refit
    >>> from skpate.datasets import adult_encoder
    >>> refit = make_tabular_refit(adult_encoder(), epsilon=1.0, classes=["<=50K", ">50K"])
    >>> refit.epsilon, round(refit.pate_epsilon(n_public=8140), 3)  # the budget, the PATE part's share
    (1.0, 0.518)
    """
    pate = make_tabular_pate(preprocessor, random_state=random_state, n_jobs=n_jobs, **params)
    return LeafRefitClassifier(
        pate, epsilon=epsilon, delta=delta, classes=classes, accountant=accountant,
        preprocessor=clone(preprocessor, safe=False), refit_share=refit_share, n_refits=n_refits,
        random_state=random_state,
    )  # fmt: skip
