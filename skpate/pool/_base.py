"""The shared base of the learners that use the public pool without teachers (or after them).

As ``BaseBagging`` carries scikit-learn's bagging estimators, :class:`BasePoolClassifier`
carries the contract of :mod:`skpate.base` for them: it splits the rows, resolves
``classes``, reserves the a-priori cost with the ``accountant`` before any
private row is read, sets ``privacy_spent_`` and ``privacy_report_``, and
exports the published model ``model_`` that every learner fits. A
learner implements ``_fit_pool`` (which reads the private rows) and
``_mechanism`` (what it released); its work on the public rows alone
(``_fit_public``: by default its ``preprocessor`` fitted on them) runs
before the budget is reserved. One whose cost is not the whole budget
overrides :meth:`BasePoolClassifier.planned_cost` and ``_plan``.

Every step on the private rows (the preprocessor's transform, the cells' or
leaves' assignment) runs under :func:`skpate._validation.on_private_rows`: its
errors and warnings name the estimator and the fix and quote no private value.
What a fit refuses, it refuses from public quantities (parameters, classes,
the public rows, the configuration), before the accountant is charged.
"""

from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import _num_samples, check_array, check_is_fitted, validate_data

from .._validation import (
    PUBLIC_ROWS,
    EpsilonRange,
    RealRange,
    check_noise_generator,
    fit_public_preprocessor,
    on_private_rows,
    transform_private,
)
from ..base import PrivateClassifierMixin, charged, published_copy
from ..privacy import BudgetAccountant, PrivacyReport
from ..privacy.calibration import budget_cost

__all__ = ["BasePoolClassifier", "private_features", "private_matrix", "public_matrix"]


def private_features(preprocessor, X_private, Z_public, name="the estimator"):
    """The private rows through the preprocessor fitted by :func:`fit_public_preprocessor` (None: as they are).

    Through :func:`~skpate._validation.transform_private`, whose errors and warnings name ``name`` and quote no
    private value, and which refuses an output whose width is not that of ``Z_public``, the public rows through
    it. The output may be sparse.
    """
    if preprocessor is None:
        return X_private
    return transform_private(preprocessor, X_private, name, width=np.shape(Z_public)[1])


def public_matrix(Z, name, ensure_all_finite=True):
    """The public rows after the preprocessor as a float64 matrix (CSR if sparse); errors say which rows they are.

    Public: the error may quote them. ``ensure_all_finite`` as in ``check_array``.
    """
    try:
        return check_array(Z, accept_sparse="csr", dtype=np.float64, ensure_all_finite=ensure_all_finite)
    except ValueError as error:
        raise ValueError(
            f"{name} needs {PUBLIC_ROWS}, after the preprocessor, as a finite numeric matrix: {error} Fix the "
            "preprocessor (impute, encode) or the public rows."
        ) from error


def private_matrix(Z, name):
    """The private rows after the preprocessor as a finite float64 matrix (CSR if sparse), guarded (no value quoted)."""
    return on_private_rows(
        name, "the conversion of the preprocessor's output to a finite numeric matrix", check_array, Z,
        accept_sparse="csr", dtype=np.float64, ensure_min_samples=0, stacklevel=3,
    )  # fmt: skip


class BasePoolClassifier(PrivateClassifierMixin, ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Base of the private learners that use the public pool: the contract's ``fit``, accounting and report.

    Not to be used directly. Subclasses take ``epsilon``, ``delta``,
    ``classes``, ``accountant`` and ``random_state`` (and ``neighboring``
    where they offer it) and implement ``_fit_pool`` and ``_mechanism``; they may
    resolve their default preprocessor in ``_preprocessor`` and extend
    ``_fit_public``.
    """

    _parameter_constraints: dict = {
        "epsilon": [EpsilonRange()],
        "delta": [RealRange(0, 1, closed="neither")],
        "classes": ["array-like", None],
        "accountant": [None, BudgetAccountant],
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

    def export_model(self):
        """The publishable artifact: an independent copy of the fitted model (``model_``).

        It holds the public preprocessing and the released statistics only: no
        private row, teacher or vote.

        Returns
        -------
        model : estimator
        """
        check_is_fitted(self, "model_")
        return published_copy(self.model_)

    def _plan(self, n_public, classes):
        """``(cost, plan)`` of a fit, from public quantities and the resolved ``classes``.

        ``cost`` is what the fit spends (:meth:`planned_cost`, validated already); ``plan`` is whatever
        ``_fit_pool`` needs of the planning (None here), so that it is not computed twice.
        """
        return budget_cost(self.epsilon, self.delta), None

    def _check_public(self, n_public):
        """Refuse settings the public pool cannot carry (a public quantity); nothing by default."""

    def _preprocessor(self):
        """The preprocessor the fit applies, unfitted ("passthrough": none), the learner's default resolved."""
        return self.preprocessor

    def _preprocessor_is(self, option):
        """Whether ``preprocessor`` is the string ``option`` ("auto", "passthrough"), not a transformer."""
        return isinstance(self.preprocessor, str) and self.preprocessor == option

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self._preprocessor_is("auto"):  # PublicPreprocessor's inputs
            tags.input_tags.allow_nan = True
            tags.input_tags.string = True
        return tags

    def check_public(self, X_public):
        """Refuse, for free, what a fit would refuse on the public rows alone: :meth:`_check_public` of their
        number and :meth:`_fit_public`, discarded.

        Parameters
        ----------
        X_public : {array-like, DataFrame} of shape (n_public, n_features)

        Returns
        -------
        self : object
        """
        self._validate_params()
        self._check_public(_num_samples(X_public))
        self._fit_public(X_public, type(self).__name__)
        return self

    def _fit_public(self, X_public, name):
        """What the fit does with the public rows alone, before the budget is reserved, so that what it refuses
        there costs nothing: the preprocessor fitted on them, and their matrix.

        Returns
        -------
        public : tuple
            What ``_fit_pool`` receives as ``public``: here ``(preprocessor, Z_public)``, the fitted preprocessor
            (or None) and the public rows after it as a finite float64 matrix (CSR if sparse).
        """
        preprocessor, Z_public = fit_public_preprocessor(self._preprocessor(), X_public, name)
        return preprocessor, public_matrix(Z_public, name)

    @abstractmethod
    def _fit_pool(self, X_private, y_private, X_public, public, classes, rng, plan):
        """Fit on the private rows and the public rows (``public`` from :meth:`_fit_public`, ``classes`` resolved,
        ``rng`` seeded once per fit)."""

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
        public = self._fit_public(X_pub, name)  # before the budget too: a refusal on the public rows costs nothing
        relation = self._neighboring()
        with charged(self.accountant, cost, f"{name}: {n_public} public rows", self, relation):
            rng = check_noise_generator(self.random_state)
            self._fit_pool(X_private, y_private, X_pub, public, classes, rng, plan)
        validate_data(self, X, skip_check_array=True)  # n_features_in_, feature_names_in_
        self.model_._record_columns(self)  # the published model refuses other columns too
        self.classes_ = classes
        self.privacy_report_ = PrivacyReport.from_cost(
            cost, self.delta, mechanism=self._mechanism(), neighboring=relation,
            budget=self.epsilon, guarantee=self._guarantee,
        )  # fmt: skip
        self.privacy_spent_ = (self.privacy_report_.epsilon, self.privacy_report_.delta)
        return self
