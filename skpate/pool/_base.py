"""The shared base of the learners that use the public pool without teachers (or after them).

As ``BaseBagging`` carries scikit-learn's bagging estimators, :class:`BasePoolClassifier`
carries the contract of :mod:`skpate.base` for them: it splits the rows, resolves
``classes``, reserves the a-priori cost with the ``accountant`` before any
private row is read, and sets ``privacy_spent_`` and ``privacy_report_``. A
learner implements ``_fit_pool`` (which reads the private rows) and
``_mechanism`` (what it released); one whose cost is not the whole budget
overrides :meth:`BasePoolClassifier.planned_cost` and ``_plan``.
"""

from abc import ABCMeta, abstractmethod
from numbers import Real

from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _num_samples, validate_data

from .._validation import check_generator
from ..base import PrivateClassifierMixin, charged
from ..privacy import PrivacyReport, RDPAccountant
from ..privacy.calibration import budget_cost

__all__ = ["BasePoolClassifier", "public_features"]


def public_features(preprocessor, X_public, X_private):
    """``preprocessor`` (or "passthrough") fitted on the public rows only, and both row sets through it.

    A fitted ``FrozenEstimator`` is used as is (its ``fit`` is a no-op). Returns ``(fitted or None, Z_public,
    Z_private)``.
    """
    if isinstance(preprocessor, str):
        return None, X_public, X_private
    preprocessor = clone(preprocessor).fit(X_public, None)
    return preprocessor, preprocessor.transform(X_public), preprocessor.transform(X_private)


class BasePoolClassifier(PrivateClassifierMixin, ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Base of the private learners that use the public pool: the contract's ``fit``, accounting and report.

    Not to be used directly. Subclasses take ``epsilon``, ``delta``,
    ``classes``, ``accountant`` and ``random_state`` (and ``neighboring``
    where they offer it) and implement ``_fit_pool`` and ``_mechanism``.
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "classes": ["array-like", None],
        "accountant": [None, RDPAccountant],
        "random_state": ["random_state"],
    }

    #: Whether the noise is calibrated to ``epsilon`` (the guarantee is the budget) or the epsilon is the a-priori
    #: cost of what the fit released (at most the budget).
    _guarantee = "budget"

    def planned_cost(self, n_public):
        """What a fit will cost, known before it runs: the whole budget, in Gaussian DP.

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see (the cost does not depend on it).

        Returns
        -------
        cost : skpate.privacy.Cost
        """
        self._validate_params()
        return budget_cost(self.epsilon, self.delta)

    def _plan(self, n_public, classes):
        """``(cost, plan)`` of a fit, from public quantities and the resolved ``classes``.

        ``cost`` is what the fit spends (:meth:`planned_cost`, validated already); ``plan`` is whatever
        ``_fit_pool`` needs of the planning (None here), so that it is not computed twice.
        """
        return budget_cost(self.epsilon, self.delta), None

    def _check_public(self, n_public):
        """Refuse settings the public pool cannot carry (a public quantity); nothing by default."""

    @abstractmethod
    def _fit_pool(self, X_private, y_private, X_public, classes, rng, plan):
        """Fit on the private rows and the public rows (``classes`` resolved, ``rng`` seeded once per fit)."""

    @abstractmethod
    def _mechanism(self):
        """What the fit released, with its noise, for :attr:`privacy_report_`."""

    def fit(self, X, y, *, X_public=None):
        """Fit on the private rows (labeled) and the public pool (features only).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Private rows (labeled) and, optionally, public rows (``y == -1``,
            unless ``-1`` is one of ``classes``).
        y : array-like of shape (n_samples,)
        X_public : {array-like, DataFrame} of shape (n_public, n_features), default=None
            Public rows, instead of rows of ``X`` labeled ``-1``.

        Returns
        -------
        self : object
        """
        X_private, y_private, X_pub, classes = self._private_and_public_rows(X, y, X_public)
        name = type(self).__name__
        n_public = _num_samples(X_pub)
        self._check_public(n_public)
        cost, plan = self._plan(n_public, classes)  # a priori, before any private row is read
        with charged(self.accountant, cost, label=f"{name}: {n_public} public rows"):
            self._fit_pool(X_private, y_private, X_pub, classes, check_generator(self.random_state), plan)
        validate_data(self, X, skip_check_array=True)  # n_features_in_, feature_names_in_
        self.classes_ = classes
        self.privacy_report_ = PrivacyReport.from_cost(
            cost, self.delta, mechanism=self._mechanism(), neighboring=getattr(self, "neighboring", "replace-one"),
            budget=self.epsilon, guarantee=self._guarantee,
        )  # fmt: skip
        self.privacy_spent_ = (self.privacy_report_.epsilon, self.privacy_report_.delta)
        return self
