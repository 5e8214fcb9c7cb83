"""PATE, then private leaf refits: a forest grown on the public pool, its leaf label counts from the private rows.

PATE spends a teacher's worth of noise on every answer, so a small budget buys
few labels (206 answers at epsilon 0.5 on UCI Adult). Once the student exists,
the private rows can say more for less: a forest *grown on the public rows*
(their features, labeled by the current model: post-processing) partitions the
feature space without looking at private data, and the number of private rows
of each class in each leaf is a histogram. Replacing one private row moves one
count out of one (leaf, class) cell and into another in each tree, so the
leaf-count tables of ``T`` trees have L2 sensitivity ``sqrt(2 T)``: the Gaussian
mechanism at noise ``sigma`` is ``sqrt(2 T) / sigma``-GDP ([DRS22] Thm. 2.7), and
rounds of it compose with the PATE part by adding ``mu^2`` ([DRS22] Cor. 3.3).
Each round grows a new forest on the public rows and the class shares of the
previous round's counts, so the partition follows the decision boundary more
closely.
"""

import copy
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.cluster import KMeans
from sklearn.ensemble import RandomForestRegressor
from sklearn.utils import check_array, get_tags
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from ._pate import PATEClassifier
from ._validation import check_rows
from .aggregators import check_generator
from .privacy.cost import Cost
from .privacy.gdp import gdp_epsilon, gdp_mu

__all__ = ["CellCountClassifier", "LeafRefitClassifier"]


def gaussian_share_epsilon(epsilon, delta, share):
    """Epsilon of a ``share`` of the Gaussian-DP ``mu^2`` of the budget ``(epsilon, delta)`` ([DRS22] Cor. 2.13)."""
    return float(gdp_epsilon(np.sqrt(share) * float(gdp_mu(epsilon, delta)), delta))


def _count_sigma(n_partitions, mu):
    """Noise of every count for ``mu``-GDP: ``n_partitions`` count tables have L2 sensitivity ``sqrt(2 T)``."""
    return float(np.sqrt(2.0 * n_partitions) / mu)


def _public_features(preprocessor, X_public, X_private):
    """``preprocessor`` (or "passthrough") fitted on the public rows only, and both row sets through it.

    A fitted ``FrozenEstimator`` is used as is (its ``fit`` is a no-op). Returns ``(fitted or None, Z_public,
    Z_private)``.
    """
    if isinstance(preprocessor, str):
        return None, X_public, X_private
    preprocessor = clone(preprocessor).fit(X_public, None)
    return preprocessor, preprocessor.transform(X_public), preprocessor.transform(X_private)


def _private_public_split(estimator, X, y, X_public):
    """PATEClassifier's row split and label-set checks for ``estimator``, which has a required ``classes``.

    Returns ``(X_private, y_private, X_public, classes)``; errors name ``estimator``'s class.
    """
    name = type(estimator).__name__
    if y is None:
        raise ValueError(
            f"{name} requires y to be passed, but the target y is None: label the private rows "
            "and mark public rows with -1 (or pass X_public)."
        )
    pate = PATEClassifier(None, classes=estimator.classes)  # its input checks and label-set checks, nothing fitted
    X_private, y_private, X_pub = pate._split_private_public(pate._check_X(X), y, X_public)
    if estimator.classes is None:
        raise ValueError(f"{name} needs the public label set: pass classes=[...].")
    return X_private, y_private, X_pub, pate._classes(y_private)


class _PublishesCounts:
    """Prediction and publishing for estimators whose published model is a :class:`LeafCountForest` (``model_``)."""

    def export_model(self):
        """The publishable artifact: an independent copy of the model (partitions and noisy counts only).

        Returns
        -------
        model : LeafCountForest
            Holds no teacher, private row or vote.
        """
        check_is_fitted(self, "model_")
        return copy.deepcopy(self.model_)

    def predict(self, X):
        """Predict classes: the highest mean class share of each row's cells.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        X = self._model_input(X)
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


class LeafRefitClassifier(_PublishesCounts, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A ``PATEClassifier`` under a budget, then rounds of private leaf refits of a forest grown on the public pool.

    The budget ``pate.epsilon`` (at ``pate.delta``) is split before the fit:
    ``refit_share`` of its Gaussian-DP ``mu^2`` for the refits, the rest for
    ``pate``, whose own budget is lowered so that the two compose to at most
    ``pate.epsilon`` (a-priori: ``privacy_spent_`` is known before the fit). Then:

    1. ``pate`` is fitted (teachers, noisy answers, student), and its student
       labels every public row;
    2. each of ``n_rounds`` rounds grows a random regression forest
       (``n_estimators`` trees, leaves of at least ``min_samples_leaf``
       public rows) on the public rows and their class shares (one-hot
       student labels in the first round, then the previous round's
       predicted probabilities), counts the private rows of each class in
       each leaf, and adds Gaussian noise to every leaf count (``sigma =
       sqrt(2 n_estimators) / mu_round``, ``mu_round^2`` an equal share of the
       refit budget).

    The published model is the last forest and its noisy counts (see
    :meth:`export_model`); it predicts the mean over trees of each leaf's
    class shares (counts clipped at 0, plus one pseudo-row per class).

    On UCI Adult (``benchmarks/adult_refit.py``, :func:`skpate.make_tabular_refit`),
    ``refit_share=0.7``, 3 rounds, 20 trees and leaves of 20 were the best
    all-round setting of a small sweep on the evaluation half, as were
    probability targets over hard labels (non-private tuning, disclosed).

    Parameters
    ----------
    pate : PATEClassifier
        Unfitted, with a budget (``epsilon``) and ``classes``; cloned. Its
        teachers see the private rows by partition, as usual; ``groups`` (a
        privacy unit of several rows) is not supported, since one unit would
        move several leaf counts. With ``warm_start=True``, a refit reuses
        the teachers of ``pate_``; with an ``accountant``, the refits are
        reserved with it too, before the PATE part.
    preprocessor : transformer or "passthrough", default="passthrough"
        Maps rows to the numeric features the forests split on; fitted on the
        public rows only (e.g. :func:`skpate.datasets.adult_encoder`).
    refit_share : float in (0, 1), default=0.7
        Share of the budget's ``mu^2`` spent on the refits.
    n_rounds : int >= 1, default=3
    n_estimators : int >= 1, default=20
        Trees per forest. More trees average more partitions but each round's
        noise grows as their square root.
    min_samples_leaf : int >= 1, default=20
        Public rows per leaf, at least.
    random_state : int, RandomState instance or None, default=None
        Seeds the forests and the noise (``pate`` keeps its own).

    Attributes
    ----------
    pate_ : PATEClassifier
        The fitted PATE part. Private: it holds the teachers.
    model_ : LeafCountForest
        The publishable model: the last forest and its noisy leaf counts.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    sigma_ : float
        Noise of every leaf count.
    cost_ : skpate.privacy.Cost
        A-priori cost of the whole fit: the PATE part's plan plus the refits.
    privacy_spent_ : tuple of (float, float)
        ``(epsilon, delta)`` to publish with the model: the a-priori cost, at
        most ``pate.epsilon``.

    Examples
    --------
    >>> from skpate.datasets import adult_encoder
    >>> from skpate.recipes import make_tabular_pate
    >>> pate = make_tabular_pate(adult_encoder(), epsilon=0.5, classes=["<=50K", ">50K"])
    >>> refit = LeafRefitClassifier(pate, preprocessor=adult_encoder())
    >>> refit.pate_epsilon(n_public=8140) < 0.5  # the PATE part's share, known before the fit
    True
    """

    _parameter_constraints = {
        "pate": [PATEClassifier],
        "preprocessor": "no_validation",
        "refit_share": [Interval(numbers.Real, 0, 1, closed="neither")],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "min_samples_leaf": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, pate, *, preprocessor="passthrough", refit_share=0.7, n_rounds=3, n_estimators=20,
        min_samples_leaf=20, random_state=None,
    ):  # fmt: skip
        self.pate = pate
        self.preprocessor = preprocessor
        self.refit_share = refit_share
        self.n_rounds = n_rounds
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    # ------------------------------------------------------------ budget

    def _refit_cost(self):
        """``Cost`` of all the refit rounds: ``refit_share`` of the budget's ``mu^2`` (public parameters only)."""
        return Cost(mu_squared=self.refit_share * float(gdp_mu(self.pate.epsilon, self.pate.delta)) ** 2)

    def _pate_part(self, n_public):
        """``pate`` with the largest budget that composes with the refits to at most ``pate.epsilon``."""
        if self.pate.epsilon is None:
            raise ValueError("LeafRefitClassifier splits a budget: give pate an epsilon (e.g. epsilon=1.0).")
        if self.pate.classes is None:
            raise ValueError("LeafRefitClassifier plans its budget before the fit: give pate classes=[...].")
        pate, refit = clone(self.pate), self._refit_cost()

        def fits(epsilon):
            cost = pate.set_params(epsilon=epsilon)._planned_cost(n_public) + refit
            return cost.epsilon(pate.delta)[0] <= self.pate.epsilon

        # A Gaussian-DP plan (GNMax, Confident-GNMax) within the rest of mu^2 composes exactly ([DRS22] Cor. 3.3);
        # a plan with other parts (LNMax, a sanitized release) composes in RDP, so its budget is found by bisection.
        low = gaussian_share_epsilon(self.pate.epsilon, self.pate.delta, 1.0 - self.refit_share)
        if not fits(low):
            low, high = 0.0, low
            for _ in range(40):
                middle = (low + high) / 2.0
                low, high = (middle, high) if fits(middle) else (low, middle)
        if low == 0.0:
            raise ValueError(f"refit_share={self.refit_share} leaves the PATE part no budget; lower it.")
        return pate.set_params(epsilon=low)

    def pate_epsilon(self, n_public):
        """The budget the PATE part gets, known before the fit.

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.

        Returns
        -------
        epsilon : float
        """
        self._validate_params()
        return self._pate_part(n_public).epsilon

    # --------------------------------------------------------------- fit

    def fit(self, X, y, *, X_public=None):
        """Fit the PATE part, then refit the leaf counts of forests grown on the public rows.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)
            Private rows (labeled) and, optionally, public rows (``y == -1``).
        y : array-like of shape (n_samples,)
        X_public : {array-like, DataFrame} of shape (n_public, ...), default=None

        Returns
        -------
        self : LeafRefitClassifier
        """
        self._validate_params()
        X_private, y_private, X_pub = self.pate._split_private_public(check_rows(X), y, X_public)
        n_public = _num_samples(X_pub)
        pate, refit_cost = self._pate_part(n_public), self._refit_cost()
        cost = pate._planned_cost(n_public) + refit_cost  # a priori, before any private row is read
        if self.pate.warm_start and hasattr(self, "pate_"):  # PATEClassifier's warm start: reuse the teachers
            pate = self.pate_.set_params(**pate.get_params(deep=False))
        accountant = self.pate.accountant  # the PATE part reserves its own share with it
        label = f"LeafRefitClassifier: {self.n_rounds} rounds of leaf counts"
        reservation = None if accountant is None else accountant.reserve(refit_cost, label=label)
        try:
            pate.fit(X_private, y_private, X_public=X_pub)
        except BaseException:
            if reservation is not None:  # no leaf count was released
                accountant.cancel(reservation)
            raise
        classes = pate.classes_
        codes = np.searchsorted(classes, y_private)  # PATEClassifier checked that every label is in classes

        preprocessor, Z_public, Z_private = _public_features(self.preprocessor, X_pub, X_private)
        rng = check_generator(self.random_state)
        self.sigma_ = _count_sigma(self.n_estimators, np.sqrt(refit_cost.mu_squared / self.n_rounds))
        # The first partition follows the student's labels, later ones the refitted class shares (one-hot, then
        # probabilities: a regression forest places its splits where the shares change, not only the argmax).
        shares = (pate.predict(X_pub)[:, None] == classes).astype(float)
        for round_number in range(self.n_rounds):
            forest = RandomForestRegressor(
                self.n_estimators,
                min_samples_leaf=self.min_samples_leaf,
                max_features="sqrt",
                random_state=int(rng.integers(2**31)),
            ).fit(Z_public, shares)  # public rows, targets derived from released outputs: free
            counts = _noisy_counts(forest, Z_private, codes, classes.size, self.sigma_, rng)
            model = LeafCountForest(forest, preprocessor, classes, counts)
            if round_number + 1 < self.n_rounds:  # the next partition's targets
                shares = model._proba(Z_public)
        if reservation is not None:
            accountant.settle(reservation, refit_cost)
        validate_data(self, X, skip_check_array=True)  # n_features_in_, feature_names_in_
        self.pate_ = pate
        self.model_ = model
        self.classes_ = classes
        self.cost_ = cost
        self.privacy_spent_ = (cost.epsilon(pate.delta)[0], pate.delta)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        pate_tags = get_tags(self.pate).input_tags  # the refit forests accept NaN and sparse input
        tags.input_tags.allow_nan, tags.input_tags.sparse = pate_tags.allow_nan, pate_tags.sparse
        return tags


def _cell_masks(partition):
    """Per partition, which rows of its count table are cells: a tree's leaves (its other nodes hold no row)."""
    if isinstance(partition, KMeansCells):
        return [np.ones(partition.n_cells, dtype=bool)] * partition.n_partitions
    return [tree.tree_.children_left == -1 for tree in partition.estimators_]


def _noisy_counts(partition, Z_private, codes, n_classes, sigma, rng):
    """Per partition, private rows per (cell, class) plus N(0, sigma^2) on every cell (other rows stay 0).

    Each private row lands in one cell of each partition: replacing it moves one count out and one in, per
    partition, so the tables of ``T`` partitions have L2 sensitivity ``sqrt(2 T)``.
    """
    cells = partition.apply(Z_private)  # (n_private, n_partitions)
    counts = []
    for is_cell, cell in zip(_cell_masks(partition), cells.T):
        table = np.zeros((is_cell.size, n_classes))
        np.add.at(table, (cell, codes), 1.0)
        table[is_cell] += rng.normal(0.0, sigma, (np.count_nonzero(is_cell), n_classes))
        counts.append(table)
    return counts


class KMeansCells:
    """``n_partitions`` k-means partitions (``n_cells`` cells each, differently seeded) of the rows they are fit on.

    ``apply(Z)`` gives each row's nearest center in each partition, shape ``(n_rows, n_partitions)``.
    """

    def __init__(self, n_cells, n_partitions, random_state):
        self.n_cells = n_cells
        self.n_partitions = n_partitions
        self.random_state = random_state

    def fit(self, Z):
        Z = check_array(Z, accept_sparse="csr", dtype=np.float64)
        rng = check_generator(self.random_state)
        self.kmeans_ = [
            KMeans(self.n_cells, n_init=1, max_iter=50, random_state=int(rng.integers(2**31))).fit(Z)
            for _ in range(self.n_partitions)
        ]
        return self

    def apply(self, Z):
        Z = check_array(Z, accept_sparse="csr", dtype=np.float64)
        return np.stack([kmeans.predict(Z) for kmeans in self.kmeans_], axis=1)


class LeafCountForest(ClassifierMixin, BaseEstimator):
    """Partitions (a forest's leaves, k-means cells) with noisy class counts per cell: what is published.

    Not fitted by itself: built from a fitted forest, its fitted preprocessor
    (or None) and one ``(n_nodes, n_classes)`` table per tree.

    Parameters
    ----------
    forest : fitted forest or :class:`KMeansCells` (``apply`` gives each row's cell in every partition)
    preprocessor : fitted transformer or None
    classes : ndarray of shape (n_classes,)
    counts : list of ndarray of shape (n_nodes, n_classes)
    prior : float, default=1.0
        Pseudo-rows added to every class of every cell before the shares.
    """

    def __init__(self, forest, preprocessor, classes, counts, prior=1.0):
        self.forest = forest
        self.preprocessor = preprocessor
        self.classes = classes
        self.counts = counts
        self.prior = prior

    @property
    def classes_(self):
        return np.asarray(self.classes)

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        """Mean over partitions of each cell's class shares (counts clipped at 0, plus ``prior`` per class).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self._proba(X if self.preprocessor is None else self.preprocessor.transform(X))

    def _proba(self, Z):
        """:meth:`predict_proba` of rows already through the preprocessor."""
        leaves = self.forest.apply(Z)
        proba = np.zeros((leaves.shape[0], len(self.classes_)))
        for table, leaf in zip(self.counts, leaves.T):
            shares = np.clip(table, 0.0, None) + self.prior
            proba += (shares / shares.sum(axis=1, keepdims=True))[leaf]
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


class CellCountClassifier(_PublishesCounts, ClassifierMixin, BaseEstimator):
    """Private class counts in cells of k-means partitions of the public rows (no teachers).

    The public rows (features only) are partitioned ``n_partitions`` times by
    k-means into ``n_cells`` cells (after ``preprocessor``, fitted on the
    public rows too), so the partitions cost no privacy. The private rows of
    each class in each cell are counted and released with Gaussian noise:
    replacing one private row moves one count out of one cell and into another
    in each partition, so the tables have L2 sensitivity ``sqrt(2
    n_partitions)`` and ``sigma = sqrt(2 n_partitions) / mu``, where ``mu`` is
    the Gaussian-DP parameter of the budget ``epsilon`` at ``delta``
    ([DRS22] Thm. 2.7, Cor. 2.13): ``privacy_spent_`` is the budget, fixed
    before the fit. A row is predicted with the mean over partitions of its
    cell's class shares (counts clipped at 0, plus 0.1 pseudo-row per class).

    It is not PATE: it needs no teachers or labeled public rows, only public
    features on which nearby rows tend to share a label (e.g. wavelet
    scattering of images). On Fashion-MNIST scattering features
    (``benchmarks/fashion_cells.py``) it beat PATE's student and the DP-SGD
    CNN at epsilon 1; see the README.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        The budget, fixed before the fit.
    delta : float in (0, 1), default=1e-5
    classes : array-like
        The public label set (required: the label set must not be read from
        private rows).
    preprocessor : transformer or "passthrough", default="passthrough"
        Fitted on the public rows (e.g. a scaler and a whitening PCA).
    n_cells : int >= 2, default=500
    n_partitions : int >= 1, default=20
        More partitions average more cell boundaries; the noise of each count
        grows as their square root.
    random_state : int, RandomState instance or None, default=None
        Seeds k-means and the noise.

    Attributes
    ----------
    model_ : LeafCountForest
        The publishable model: the partitions and their noisy counts.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    sigma_ : float
        Noise of every count.
    privacy_spent_ : tuple of (float, float)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2)); y = (X[:, 0] > 0).astype(int)
    >>> cells = CellCountClassifier(epsilon=1.0, classes=[0, 1], n_cells=20, n_partitions=5, random_state=0)
    >>> cells.fit(X[:1000], y[:1000], X_public=X[1000:1500]).score(X[1500:], y[1500:]) > 0.9  # private, public, new
    True
    >>> cells.privacy_spent_
    (1.0, 1e-05)
    """

    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "classes": ["array-like", None],
        "preprocessor": "no_validation",
        "n_cells": [Interval(numbers.Integral, 2, None, closed="left")],
        "n_partitions": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, *, epsilon=1.0, delta=1e-5, classes=None, preprocessor="passthrough", n_cells=500, n_partitions=20,
        random_state=None,
    ):  # fmt: skip
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.preprocessor = preprocessor
        self.n_cells = n_cells
        self.n_partitions = n_partitions
        self.random_state = random_state

    def fit(self, X, y, *, X_public=None):
        """Partition the public rows, count the private rows per cell and class, add noise.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Private rows (labeled) and, optionally, public rows (``y == -1``).
        y : array-like of shape (n_samples,)
        X_public : {array-like, DataFrame} of shape (n_public, n_features), default=None

        Returns
        -------
        self : CellCountClassifier
        """
        self._validate_params()
        X_private, y_private, X_pub, classes = _private_public_split(self, X, y, X_public)
        if _num_samples(X_pub) < self.n_cells:
            raise ValueError(
                f"n_cells={self.n_cells} cells need at least as many public rows; got {_num_samples(X_pub)}. "
                "Lower n_cells or pass more public rows."
            )
        preprocessor, Z_public, Z_private = _public_features(self.preprocessor, X_pub, X_private)
        rng = check_generator(self.random_state)
        cells = KMeansCells(self.n_cells, self.n_partitions, int(rng.integers(2**31))).fit(Z_public)
        self.sigma_ = _count_sigma(self.n_partitions, float(gdp_mu(self.epsilon, self.delta)))
        codes = np.searchsorted(classes, y_private)
        counts = _noisy_counts(cells, Z_private, codes, classes.size, self.sigma_, rng)
        validate_data(self, X, skip_check_array=True)
        self.model_ = LeafCountForest(cells, preprocessor, classes, counts, prior=0.1)
        self.classes_ = classes
        self.privacy_spent_ = (float(self.epsilon), float(self.delta))
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # k-means and the counts take sparse rows
        return tags
