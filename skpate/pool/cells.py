"""Private class counts in cells of k-means partitions of the public pool (no teachers)."""

import numpy as np
from sklearn.cluster import KMeans
from sklearn.utils import check_array
from sklearn.utils._param_validation import HasMethods, StrOptions

from .._validation import Count, check_generator
from ..preprocessing import PublicPreprocessor
from ..privacy.calibration import count_sigma
from ..privacy.gdp import gdp_mu
from ._base import BasePoolClassifier, private_features, private_matrix
from .count_model import NoisyCountModel, PredictsWithCountsMixin, noisy_counts

__all__ = ["CellCountClassifier", "KMeansCells"]


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

    def cell_masks(self):
        """Per partition, which rows of its count table are cells: all of them."""
        return [np.ones(self.n_cells, dtype=bool)] * self.n_partitions


class CellCountClassifier(PredictsWithCountsMixin, BasePoolClassifier):
    """Private class counts in cells of k-means partitions of the public rows (no teachers).

    The public rows (features only) are partitioned ``n_partitions`` times by
    k-means into ``n_cells`` cells (after ``preprocessor``, fitted on the
    public rows too), so the partitions cost no privacy. The private rows of
    each class in each cell are counted and released with Gaussian noise
    ``sigma = D / mu``, where ``D`` is the L2 sensitivity of the count tables
    (:func:`skpate.privacy.sensitivity.count_tables_sensitivity`: ``sqrt(2
    n_partitions)`` for replacing one row, ``sqrt(n_partitions)`` for adding
    or removing one) and ``mu`` the Gaussian-DP parameter of the budget
    ``epsilon`` at ``delta`` ([DRS22] Thm. 2.7, Cor. 2.13): ``privacy_spent_``
    is the budget, fixed before the fit. A row is predicted with the mean over
    partitions of its cell's class shares (counts clipped at 0, plus 0.1
    pseudo-row per class).

    It is not PATE: it needs no teachers or labeled public rows, only public
    features on which nearby rows tend to share a label (e.g. wavelet
    scattering of images); see ``docs/benchmarks/fashion_mnist.md``.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        The budget, fixed before the fit.
    delta : float in (0, 1), default=1e-5
    classes : array-like, default=None
        The public label set. None takes it from the private labels with a
        :class:`~skpate.PrivacyLeakWarning` (the label set is then published).
    accountant : skpate.privacy.RDPAccountant or PrivacyLedger, default=None
        Budget shared across fits: the fit reserves ``epsilon`` with it before
        reading a private row, and is refused if it does not fit.
    preprocessor : "auto", "passthrough" or transformer, default="auto"
        Fitted on the public rows (e.g. a scaler and a whitening PCA); its
        output may be sparse. ``"auto"``:
        :class:`~skpate.preprocessing.PublicPreprocessor` (categories one-hot,
        missing values imputed, numbers clipped to the public range and
        scaled to [-1, 1]; every private row has an encoding).
        A step with ``handle_unknown="error"`` is refused before the fit (a
        private category the public rows never showed would fail it, quoted);
        a failure on the private rows is a ``ValueError`` that quotes none.
    n_cells : int >= 2, default=500
    n_partitions : int >= 1, default=20
        More partitions average more cell boundaries; the noise of each count
        grows as their square root.
    neighboring : {"replace-one", "add-remove"}, default="replace-one"
        What the epsilon protects: replacing one private row, or adding or
        removing one (a count table's sensitivity halves in ``mu^2``). Under
        "add-remove" the number of rows is private: with public ``classes``,
        no private rows at all fit as one does, and the ``delta >= 1/n``
        warning is not given (choose ``delta`` well below ``1/n``).
    random_state : int, RandomState instance or None, default=None
        Seeds k-means and the noise. None (default) draws from OS entropy; a
        seed makes the noise reproducible by anyone who knows it
        (:class:`~skpate.SeededNoiseWarning`).

    Attributes
    ----------
    model_ : NoisyCountModel
        The publishable model: the partitions and their noisy counts.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    sigma_ : float
        Noise of every count.
    privacy_spent_ : tuple of (float, float)
    privacy_report_ : skpate.PrivacyReport

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
        **BasePoolClassifier._parameter_constraints,
        "preprocessor": [StrOptions({"auto", "passthrough"}), HasMethods(["fit", "transform"])],
        "n_cells": [Count(2)],
        "n_partitions": [Count(1)],
        "neighboring": [StrOptions({"replace-one", "add-remove"})],
    }

    def __init__(
        self, *, epsilon=1.0, delta=1e-5, classes=None, accountant=None, preprocessor="auto", n_cells=500,
        n_partitions=20, neighboring="replace-one", random_state=None,
    ):  # fmt: skip
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.accountant = accountant
        self.preprocessor = preprocessor
        self.n_cells = n_cells
        self.n_partitions = n_partitions
        self.neighboring = neighboring
        self.random_state = random_state

    def _check_public(self, n_public):
        if n_public < self.n_cells:
            raise ValueError(
                f"n_cells={self.n_cells} cells need at least as many public rows; got {n_public}. "
                "Lower n_cells or pass more public rows."
            )

    def _preprocessor(self):
        return PublicPreprocessor() if self._preprocessor_is("auto") else self.preprocessor  # accepts every row

    def _fit_pool(self, X_private, y_private, X_public, public, classes, rng, plan):
        codes = np.searchsorted(classes, y_private)  # check_classes checked that every label is in classes
        name = type(self).__name__
        preprocessor, Z_public = public  # dense or CSR
        Z_private = private_matrix(private_features(preprocessor, X_private, Z_public, name), name)
        cells = KMeansCells(self.n_cells, self.n_partitions, int(rng.integers(2**31))).fit(Z_public)
        self.sigma_ = count_sigma(self.n_partitions, float(gdp_mu(self.epsilon, self.delta)), self.neighboring)
        counts = noisy_counts(cells, Z_private, codes, classes.size, self.sigma_, rng)
        self.model_ = NoisyCountModel(cells, preprocessor, classes, counts, prior=0.1)

    def _mechanism(self):
        return (
            f"Gaussian class counts in {self.n_partitions} k-means partitions of {self.n_cells} public cells "
            f"(sigma={self.sigma_:.4g})"
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # k-means and the counts take sparse rows; PublicPreprocessor ("auto") does not
        tags.input_tags.sparse = not self._preprocessor_is("auto")
        return tags
