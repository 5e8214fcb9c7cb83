"""Prediction from class scores (logits), shared by the pool learners that publish a logit model.

:class:`LogitsModelMixin` serves a published model that computes ``logits(X)``
(:class:`~skpate.pool.SoftmaxModel`, :class:`~skpate.pool.BoostedPartitionsModel`);
:class:`PredictsWithModelMixin` serves the estimator that fitted it (``model_``).
"""

import numpy as np
from scipy.special import log_softmax, softmax
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_rows

__all__ = ["LogitsModelMixin", "PredictsWithModelMixin", "decision"]


def decision(logits):
    """sklearn's ``decision_function``: the logits, or with two classes the second's minus the first's."""
    return logits[:, 1] - logits[:, 0] if logits.shape[1] == 2 else logits


class LogitsModelMixin:
    """The predictions of a published model (:class:`~skpate.base.PublishedModelMixin`) that has ``logits(X)``."""

    def decision_function(self, X):
        """Class scores; with two classes, the second's minus the first's."""
        return decision(self.logits(X))

    def predict_proba(self, X):
        """Softmax of the class scores."""
        return softmax(self.logits(X), axis=1)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`, computed stably."""
        return log_softmax(self.logits(X), axis=1)

    def predict(self, X):
        """The class of highest score."""
        return self.classes_[np.argmax(self.logits(X), axis=1)]


class PredictsWithModelMixin:
    """The predictions of an estimator through the logit model it fitted and publishes (``model_``)."""

    def _logits(self, X):
        check_is_fitted(self, "model_")
        X = check_rows(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        return self.model_.logits(X)

    def decision_function(self, X):
        """Class scores (logits) of the rows; with two classes, the second's minus the first's.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes), or (n_samples,) with two classes
        """
        return decision(self._logits(X))

    def predict_proba(self, X):
        """Softmax of the class scores.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return softmax(self._logits(X), axis=1)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`, computed stably.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return log_softmax(self._logits(X), axis=1)

    def predict(self, X):
        """The class of highest score.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        logits = self._logits(X)  # checks the fit first
        return self.classes_[np.argmax(logits, axis=1)]
