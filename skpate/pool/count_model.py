"""The published model of the count learners: noisy class counts per cell of public partitions.

A partition (a tree's leaves, a k-means clustering) fitted on public rows
costs nothing; the private rows of each class in each cell are counted and
released with Gaussian noise. :class:`NoisyCountModel` is that release: the
partitions and their noisy tables, and nothing else.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_rows, within_float32
from ..base import PublishedModelMixin

__all__ = ["NoisyCountModel", "noisy_counts"]

#: The largest finite float32: scikit-learn's trees compare float32 values.


def _cells(partition, Z):
    """Each row's cell in every partition, ``(n_rows, n_partitions)``; a forest's rows kept within float32."""
    return partition.apply(within_float32(Z) if hasattr(partition, "estimators_") else Z)


def _cell_masks(partition):
    """Per partition, which rows of its count table are cells: a tree's leaves (its other nodes hold no row)."""
    if hasattr(partition, "cell_masks"):
        return partition.cell_masks()
    return [tree.tree_.children_left == -1 for tree in partition.estimators_]


def noisy_counts(partition, Z_private, codes, n_classes, sigma, rng):
    """Per partition, private rows per (cell, class) plus N(0, sigma^2) on every cell (other rows stay 0).

    Each private row lands in one cell of each partition, so the tables have the L2 sensitivity of
    :func:`skpate.privacy.sensitivity.count_tables_sensitivity`.
    """
    masks = _cell_masks(partition)
    # (n_private, n_partitions); an empty private set (add/remove) in no cell: scikit-learn refuses 0 rows
    cells = _cells(partition, Z_private) if Z_private.shape[0] else np.empty((0, len(masks)), dtype=np.intp)
    counts = []
    for is_cell, cell in zip(masks, cells.T):
        table = np.zeros((is_cell.size, n_classes))
        np.add.at(table, (cell, codes), 1.0)
        table[is_cell] += rng.normal(0.0, sigma, (np.count_nonzero(is_cell), n_classes))
        counts.append(table)
    return counts


class NoisyCountModel(PublishedModelMixin, ClassifierMixin, BaseEstimator):
    """Public partitions (a forest's leaves, k-means cells) with noisy class counts per cell: what is published.

    Not fitted by itself: built from fitted partitions, their fitted
    preprocessor (or None) and one ``(n_cells, n_classes)`` table per
    partition. It holds no private row, teacher or vote.

    Parameters
    ----------
    partition : fitted forest or :class:`~skpate.pool.cells.KMeansCells`
        ``apply`` gives each row's cell in every partition.
    preprocessor : fitted transformer or None
    classes : ndarray of shape (n_classes,)
    counts : list of ndarray of shape (n_cells, n_classes)
    prior : float, default=1.0
        Pseudo-rows added to every class of every cell before the shares.
    """

    def __init__(self, partition, preprocessor, classes, counts, prior=1.0):
        self.partition = partition
        self.preprocessor = preprocessor
        self.classes = classes
        self.counts = counts
        self.prior = prior

    def predict_proba(self, X):
        """Mean over partitions of each cell's class shares (counts clipped at 0, plus ``prior`` per class).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self.transformed_proba(self._features(X))

    def transformed_proba(self, Z):
        """:meth:`predict_proba` of rows already through the preprocessor."""
        cells = _cells(self.partition, Z)
        proba = np.zeros((cells.shape[0], len(self.classes_)))
        for table, cell in zip(self.counts, cells.T):
            shares = np.clip(table, 0.0, None) + self.prior
            proba += (shares / shares.sum(axis=1, keepdims=True))[cell]
        return proba / len(self.counts)

    def predict(self, X):
        """The class of highest :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class PredictsWithCountsMixin:
    """Prediction for the estimators whose published model is a :class:`NoisyCountModel` (``model_``)."""

    def predict(self, X):
        """Predict classes: the highest mean class share of each row's cells.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        X = self._model_input(X)  # checks the fit first
        return self.model_.predict(X)

    def predict_proba(self, X):
        """Mean over partitions of the class shares of each row's cell.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        X = self._model_input(X)
        return self.model_.predict_proba(X)

    def _model_input(self, X):
        check_is_fitted(self, "model_")
        X = check_rows(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        return X
