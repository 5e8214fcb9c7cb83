"""The contract every skpate estimator that learns from private rows keeps.

Constructor parameters ``epsilon`` (the budget, fixed before the fit),
``delta``, ``classes`` (the public label set), ``accountant``,
``random_state`` and, where an estimator offers a choice, ``neighboring``;
``fit(X, y, *, X_public=None)`` with rows labeled ``-1`` public unless ``-1``
is one of ``classes``; fitted ``privacy_spent_``, ``privacy_report_`` and
``classes_``; :meth:`~PrivateClassifierMixin.planned_cost` before the fit and
:meth:`~PrivateClassifierMixin.export_model` after it.
"""

from contextlib import contextmanager

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ._validation import check_classes, public_rows, split_private_public

__all__ = ["PrivateClassifierMixin", "PublishedModelMixin", "charged"]


@contextmanager
def charged(accountant, cost, label):
    """Reserve ``cost`` with ``accountant`` (if any) before the block reads a private row; charge it after.

    The planned cost stays charged whether the block succeeds or raises: once private rows were read,
    the fit is paid for (fail closed). A fit the budget cannot cover raises before the block runs.
    """
    reservation = None if accountant is None else accountant.reserve(cost, label=label)
    try:
        yield
    finally:
        if reservation is not None:
            accountant.settle(reservation, cost)


class PrivateClassifierMixin:
    """Mixin of the private estimators: planning, publishing and scoring the same way everywhere.

    Put it before ``ClassifierMixin`` in the bases. A subclass implements
    :meth:`planned_cost` and :meth:`export_model`, and reserves
    ``planned_cost`` with its ``accountant`` before it reads a private row.
    """

    def _private_and_public_rows(self, X, y, X_public):
        """The opening of every ``fit``: validated parameters, the row split, the resolved ``classes``.

        Returns
        -------
        X_private, y_private, X_public, classes
        """
        self._validate_params()
        name = type(self).__name__
        X_private, y_private, X_pub = split_private_public(X, y, X_public, self.classes, name)
        classes = check_classes(self.classes, y_private, name, stacklevel=4)  # the warning points at the caller
        return X_private, y_private, X_pub, classes

    def planned_cost(self, n_public):
        """What a fit with these parameters will cost at most, known before it runs.

        A function of public quantities only (the parameters and the number of
        public rows): what an accountant reserves before the fit.

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see (some estimators' cost does
            not depend on it).

        Returns
        -------
        cost : skpate.privacy.Cost
        """
        raise NotImplementedError

    def publishable_epsilon(self, n_public):
        """The epsilon a fit with these parameters can publish at most, at ``delta``, known before it runs.

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.

        Returns
        -------
        epsilon : float
        """
        return self.planned_cost(n_public).epsilon(self.delta)[0]

    def export_model(self):
        """The publishable artifact: an independent copy of the only model meant for publication.

        Publish it with ``privacy_spent_``. The fitted estimator itself may hold
        private state (teachers, private rows' statistics): never publish it.

        Returns
        -------
        model : estimator
        """
        raise NotImplementedError

    def score(self, X, y, sample_weight=None):
        """Accuracy on the labeled rows: rows labeled ``-1`` are ignored unless ``-1`` is one of ``classes_``.

        The convention of ``fit``, so that ``GridSearchCV`` with public rows
        (``y == -1``) in a fold scores the labeled rows only.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        check_is_fitted(self, "classes_")
        y = column_or_1d(y)
        keep = np.flatnonzero(~public_rows(y, self.classes_))
        if keep.size == 0:
            raise ValueError("score needs labeled rows; every label is -1.")
        weights = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return super().score(_safe_indexing(X, keep), y[keep], sample_weight=weights)


class PublishedModelMixin:
    """Mixin of the models an estimator publishes (built from released outputs, never fitted on rows).

    ``fit`` exists so that scikit-learn treats them as estimators (in a ``Pipeline``, say) and refuses
    with a clear message: refitting a published model on rows would make it a non-private model.
    """

    def fit(self, X=None, y=None):
        """Not available: a published model is built by the private estimator that released it.

        Raises
        ------
        TypeError
        """
        raise TypeError(
            f"{type(self).__name__} is a published model built from a private fit's released outputs; it is not "
            "fitted on rows. Fit the private estimator (e.g. NoisyGDClassifier, LeafRefitClassifier) instead."
        )
