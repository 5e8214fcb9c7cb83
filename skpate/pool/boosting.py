"""Private boosting over partitions cut from the public pool: one feature's bins, then random public trees.

The public pool has no labels, but its features fix the structure for free. Each
round partitions the rows into cells cut from the public rows alone, each cell
holding about ``min_bin_rows`` private rows (estimated from the public rows; the
number of private rows is public under replacement): the first rounds cycle over
the features, one feature's bins per round (an additive model, a GAM: DP-EBM,
Nori et al., "Accuracy, Interpretability, and Differential Privacy via
Explainable Boosting", ICML 2021, with bins from the public pool instead of a
private histogram); the last rounds take the leaves of random trees grown on the
public rows (median splits of random features), which reach interactions. The
private rows are only touched by the release of each round: the sum, per cell,
of their softmax gradients, each clipped to norm ``clip``, plus Gaussian noise.
A cell's value is a Newton step whose denominator comes from the public rows
(their hessians under the released model), shrunk toward 0 against the known
noise; after a feature round, runs of neighbouring bins whose released sums are
alike pool them (each bin's step averaged over every segmentation of the
release into runs, weighted by its posterior probability: post-processing,
free).

Replacing one private row moves one round's table of cell sums by at most
``2 clip`` in L2 norm (:func:`skpate.privacy.sensitivity.binned_sum_sensitivity`),
so ``T`` adaptively chosen rounds at noise ``sigma`` are ``2 clip sqrt(T) /
sigma``-GDP ([DRS22] Thm. 2.7, Cor. 3.3); ``sigma`` is set from the budget before
the fit.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_array
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import _num_samples

from .._validation import Count, RealRange
from ..base import PublishedModelMixin
from ..preprocessing import PublicPreprocessor
from ..privacy.calibration import binned_sum_sigma
from ..privacy.gdp import gdp_mu
from ._base import BasePoolClassifier, private_features, private_matrix
from ._logits import LogitsModelMixin, PredictsWithModelMixin
from .partitions import FeatureBins, grow_public_tree, public_bin_edges

__all__ = [
    "BoostedPartitionsModel",
    "NoisyBoostingClassifier",
    "clipped_bin_sums",
    "noisy_bin_sums",
    "released_spreads",
    "segmented_bin_values",
]

#: ``min_bin_rows="auto"`` is at least ``n_private / AUTO_BINS`` and ``n_rounds="auto"`` is ``ROUNDS_PER_FEATURE``
#: cycles over the features: first chosen on UCI Adult's evaluation rows (non-private tuning, disclosed; issue 31), then
#: re-checked with ``clip``, ``learning_rate`` and ``prior_std`` on the development tables alone, where no one-step move
#: of any of them helps (docs/benchmarks/boosting.md).
AUTO_BINS, ROUNDS_PER_FEATURE = 64, 3
#: ``min_bin_rows="auto"`` is also at least ``BIN_NOISE_RATIO * sigma / clip`` (a bin's clipped sum at least that many
#: noise standard deviations at full gradients), but never above ``n_private / MIN_BINS`` (so a feature keeps a few
#: bins): chosen on the development tables only (3 tables subsampled to 1,200 and 4,000 private rows and whole, eps
#: 0.5 / 1 / 4, 2 seeds), re-checked on all nine at eps 0.1 / 0.5 / 1 against ratios 5 and 3 and fixed n / 64
#: bins (docs/benchmarks/boosting.md).
BIN_NOISE_RATIO, MIN_BINS = 10, 4
#: ``n_trees="auto"`` is ``TREES_PER_FEATURE`` random trees per feature with at least two bins, of depth ``max_depth``
#: (6 by default), and ``MORE_TREES_PER_FEATURE`` from the budget's Gaussian-DP ``mu`` ``MORE_TREES_MU`` on (epsilon
#: 1.41 at delta 1e-5): chosen on the nine development tables by a rule written before their run (per budget, the
#: most trees that cost no more than 0.1 points on the additive and on the labour tables; docs/benchmarks/boosting.md).
TREES_PER_FEATURE, MORE_TREES_PER_FEATURE, MORE_TREES_MU = 1, 3, 0.367
#: The "auto" rounds count at most ``ROUND_FEATURES_CAP`` of the preprocessed columns that have two bins or more
#: (every column still gets one feature round): the counts above were chosen on tables of 5 to 25 such columns, and
#: every round's noise grows with the number of rounds, so on wider tables more rounds cost more than they bring. Chosen
#: on six wide development tables (22-85 features) by a rule written before their run (issue 31's twenty-fifth round,
#: docs/benchmarks/boosting.md).
ROUND_FEATURES_CAP = 20


#: The smallest ``clip``, the range of ``prior_std`` and the largest ``learning_rate``: far beyond useful values (a
#: prior of 1e-6 leaves every step at 0, one of 1e6 shrinks nothing), and within them the steps and their evidence
#: stay finite (the noise's variance of a clip of 1e-300 underflows to 0).
MIN_CLIP, MIN_PRIOR_STD, MAX_PRIOR_STD, MAX_LEARNING_RATE = 1e-6, 1e-6, 1e6, 1e3

#: The most rounds of each kind: past it each release's noise is over 100 times one round's, and the fit's memory
#: (a feature per round, a tree per round) is bounded before the budget is charged.
MAX_ROUNDS = 10_000


def clipped_bin_sums(bins, codes, proba, clip, n_bins):
    """Per bin, the sum of the rows' softmax gradients ``e_y - p``, each clipped to L2 norm ``clip``.

    Parameters
    ----------
    bins : ndarray of int, shape (n_rows,)
        Each row's bin, in ``[0, n_bins)``.
    codes : ndarray of int, shape (n_rows,)
        Each row's class index.
    proba : ndarray of shape (n_rows, n_classes)
        The released model's probabilities of the rows.
    clip : float
    n_bins : int

    Returns
    -------
    sums : ndarray of shape (n_bins, n_classes)
    """
    gradients = -np.asarray(proba, dtype=np.float64)
    gradients[np.arange(codes.size), codes] += 1.0
    norms = np.linalg.norm(gradients, axis=1)
    gradients *= np.minimum(1.0, clip / np.maximum(norms, np.finfo(float).tiny))[:, None]
    return np.stack([np.bincount(bins, weights=g, minlength=n_bins) for g in gradients.T], axis=1)


def noisy_bin_sums(bins, codes, proba, clip, n_bins, sigma, rng):
    """One round's release: :func:`clipped_bin_sums` plus ``N(0, sigma^2)`` on every entry, every bin.

    The result is projected on the sum-zero subspace (the gradients sum to zero over the classes, the noise does
    not): post-processing, it removes noise at no cost.
    """
    sums = clipped_bin_sums(bins, codes, proba, clip, n_bins) + rng.normal(0.0, sigma, (n_bins, proba.shape[1]))
    return sums - sums.mean(axis=1, keepdims=True)


def _bin_values(sums, hessians, sigma, learning_rate, prior_std):
    """Shrunk Newton steps: the posterior mean of ``v`` given ``sums ~ N(H v, noise)``, ``v ~ N(0, prior_std^2)``.

    ``(K - 1) / K`` is the multi-class Newton factor (Friedman 2001), also the variance of a projected noise entry
    in units of ``sigma^2``. A floor of 1 on the public hessians keeps an almost empty bin's step bounded.
    """
    share = (sums.shape[1] - 1) / sums.shape[1]
    hessians = np.maximum(hessians, 1.0)
    return learning_rate * share * sums * hessians / (hessians**2 + share * (sigma / prior_std) ** 2)


def segmented_bin_values(sums, hessians, sigma, learning_rate, prior_std, change_prior=0.5):
    """Shrunk Newton steps of one feature round's release, pooled over runs of neighbouring bins that look alike.

    The bins, in the feature's order, are cut into contiguous segments of one value each, under the model of
    :func:`_bin_values`: ``sums[b] = H[b] v_S + noise`` for every bin ``b`` of segment ``S``, entry noise of variance
    ``tau^2 = share sigma^2``, ``v_S ~ N(0, prior_std^2)``, every class column on its own, and a change between two
    neighbouring bins a priori with probability ``change_prior``. A segment's log marginal likelihood is, up to terms
    shared by every segmentation, ``sum_k -log(1 + A_k / c) / 2 + B_k^2 / (2 tau^2 (A_k + c))`` with ``A = sum_b
    H[b]^2``, ``B = sum_b H[b] sums[b]`` and ``c = tau^2 / prior_std^2`` (the Gaussian marginal of a linear model:
    Bishop, "Pattern Recognition and Machine Learning", 2006, eq. 3.86), and its posterior mean step is
    ``learning_rate * share * B / (A + c)``. Each bin takes the posterior mean of its step over every segmentation,
    weighted by the segmentation's posterior probability (Bayesian model averaging): the sum, over the segments that
    hold the bin, of the segment's probability times its step, the probabilities from forward and backward sums over
    the segments' boundaries (Fearnhead, "Exact and efficient Bayesian inference for multiple changepoint problems",
    Stat. Comput. 2006, section 2), exactly, in ``O(n_bins^2)``. A flat run of ``m`` bins pools ``m`` bins' sums
    against ``m`` times their noise variance, as one bin of their rows would; a clear jump keeps its boundary; one
    bin alone gives :func:`_bin_values` exactly.

    A function of the release, the public hessians and public constants only: post-processing (Dwork and Roth,
    "The Algorithmic Foundations of Differential Privacy", 2014, Prop. 2.1), it costs no budget.

    Parameters
    ----------
    sums : ndarray of shape (n_bins, n_classes)
        The round's released (noisy, projected) sums, bins in the feature's order.
    hessians : ndarray of shape (n_bins, n_classes)
        The Newton denominators (floored at 1, as in :func:`_bin_values`).
    sigma, learning_rate, prior_std : float
        Positive and finite (the segments' evidence needs a proper prior).
    change_prior : float in (0, 1), default=0.5
        A-priori probability of a change between two neighbouring bins; 1/2 leaves the choice to the evidence.

    Returns
    -------
    values : ndarray of shape (n_bins, n_classes)
    """
    n_bins, n_classes = sums.shape
    share = (n_classes - 1) / n_classes
    tau2 = share * sigma**2
    c = tau2 / prior_std**2
    hessians = np.maximum(hessians, 1.0)
    A = np.vstack([np.zeros(n_classes), np.cumsum(hessians**2, axis=0)])
    B = np.vstack([np.zeros(n_classes), np.cumsum(hessians * sums, axis=0)])
    is_segment = np.triu(np.ones((n_bins + 1, n_bins + 1), dtype=bool), k=1)  # [i, j]: bins i..j-1, i < j
    a = np.where(is_segment[..., None], A[None] - A[:, None], 1.0)
    b = np.where(is_segment[..., None], B[None] - B[:, None], 0.0)
    log_weight = np.sum(-0.5 * np.log1p(a / c) + b**2 / (2.0 * tau2 * (a + c)), axis=2)
    log_weight -= np.log((1.0 - change_prior) / change_prior) * (np.arange(n_bins + 1) > 0)[:, None]  # a change at i
    log_weight[~is_segment] = -np.inf
    forward, backward = np.zeros(n_bins + 1), np.zeros(n_bins + 1)  # segmentations of bins 0..j-1, of j..n_bins-1
    for j in range(1, n_bins + 1):
        forward[j] = logsumexp(forward[:j] + log_weight[:j, j])
    for i in range(n_bins - 1, -1, -1):
        backward[i] = logsumexp(log_weight[i, i + 1 :] + backward[i + 1 :])
    probability = np.exp(forward[:, None] + log_weight + backward[None] - forward[n_bins])  # of segment i..j-1
    weighted = probability[..., None] * (learning_rate * share * b / (a + c))
    return np.cumsum(weighted.sum(axis=1) - weighted.sum(axis=0), axis=0)[:n_bins]  # starts minus ends: the cover


def released_spreads(Z_public, partitions, values, features):
    """Per feature, the spread of what its feature rounds added to the logits of the public rows.

    The sum over the classes of the standard deviation, over the public rows, of the feature's summed step
    functions: a function of the public rows and released values only (post-processing). A feature the private
    rows say little about gets a spread near 0.

    Parameters
    ----------
    Z_public : ndarray of shape (n_public, n_features)
    partitions : list of FeatureBins or PublicTree
        The rounds released so far (trees are skipped).
    values : list of ndarray of shape (n_cells, n_classes)
        Their released cell values.
    features : array-like of int

    Returns
    -------
    spreads : ndarray of shape (len(features),)
    """
    n_classes = values[0].shape[1] if values else 1
    totals = {int(j): np.zeros((Z_public.shape[0], n_classes)) for j in features}
    for partition, step in zip(partitions, values):
        if isinstance(partition, FeatureBins) and partition.feature in totals:
            totals[partition.feature] += step[partition.apply(Z_public)]
    return np.array([np.sum(np.std(totals[int(j)], axis=0)) for j in features])


def _dense(Z):
    return Z.toarray() if sp.issparse(Z) else np.asarray(Z)


class NoisyBoostingClassifier(PredictsWithModelMixin, BasePoolClassifier):
    """Private boosting over public partitions: feature bins, then random public trees, with noisy cell values.

    No teachers. The public rows (features only) fit ``preprocessor`` and cut
    every feature into bins of its public values, each bin holding about
    ``min_bin_rows`` private rows (``min_bin_rows * n_public / n_private``
    public rows; at most 256 bins; by default more on small tables and small
    budgets), all free. From the logits ``F = 0``, the ``n_rounds`` first
    rounds each take the next feature of a random cycle over the features that
    have at least two bins and partition the rows by its bins (an additive
    model); the ``n_trees`` last rounds each partition the rows by the leaves
    of a random tree grown on the public rows (a random feature per node, cut at
    its public rows' median, down to ``max_depth`` or to leaves of
    ``min_bin_rows``), which reaches interactions of up to ``max_depth``
    features. A tree draws its features in proportion to the squared spread,
    on the public rows, of what the feature rounds released for each
    (:func:`released_spreads`): post-processing, it favours the features the
    private rows spoke for. Every round, over its partition:

    1. every private row computes its softmax gradient ``e_y - softmax(F(x))``,
       clipped to L2 norm ``clip``;
    2. the per-cell sums of these gradients are released with
       ``N(0, sigma^2)`` on every entry (and projected on the sum-zero
       subspace, post-processing);
    3. each cell's value is ``learning_rate`` times a Newton step whose
       denominator ``H`` is the public rows' hessians ``p (1 - p)`` in the cell
       times ``n_private / n_public`` (free), shrunk toward 0 as the posterior
       mean under a ``N(0, prior_std^2)`` prior; it is added to ``F``. In a
       feature round (``merge_bins=True``), runs of neighbouring bins whose
       sums are alike pool them first: each bin's step is averaged over every
       segmentation of the release into runs of one value, weighted by its
       posterior probability (:func:`segmented_bin_values`), post-processing.

    Privacy (replace-one): the partitions and their order come from the public
    rows, the earlier releases and the random state alone, so a replaced row
    leaves one cell of the round and its replacement enters one. In the same
    cell the sum moves by ``g' - g``, at most ``2 clip``; in two cells, the two
    sums move by ``g`` and ``g'``, together at most ``sqrt(2) clip``
    (:func:`skpate.privacy.sensitivity.binned_sum_sensitivity`). Every other
    row's gradient depends on its own row and the earlier releases only, and
    the denominators on the public rows and the releases. So each round is
    ``2 clip / sigma``-GDP, the ``T = n_rounds + n_trees`` rounds compose to
    ``2 clip sqrt(T) / sigma``-GDP ([DRS22] Thm. 2.7, Cor. 3.3), and
    ``sigma = 2 clip sqrt(T) / mu`` with ``mu`` the Gaussian-DP parameter of
    the budget ``(epsilon, delta)``: ``privacy_spent_`` is the budget, fixed
    before the fit. The number of private rows, used for the cells and the
    denominators, is public under replacement.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        The budget, fixed before the fit.
    delta : float in (0, 1), default=1e-5
    classes : array-like, default=None
        The public label set. None takes it from the private labels with a
        :class:`~skpate.PrivacyLeakWarning` (the label set is then published).
    preprocessor : "auto", "passthrough" or transformer, default="auto"
        Maps rows to the numeric features that are binned; fitted on the
        public rows only. ``"auto"``:
        :class:`~skpate.preprocessing.PublicPreprocessor` with
        ``encoding="ordinal"`` (one column of codes per categorical column,
        missing values imputed or a category of their own, numbers clipped to
        the public range), for numpy arrays and mixed DataFrames. Its output
        must be finite on the public rows; a step with
        ``handle_unknown="error"`` is refused before the fit, and a failure on
        the private rows (a missing value with ``"passthrough"``, say) is a
        ``ValueError`` that quotes none.
    n_rounds : int in [1, 10000] or "auto", default="auto"
        Rounds over one feature's bins. ``"auto"``: 3 cycles over the ``d``
        features that have at least two bins; past 20 such features,
        ``max(d, 60)`` rounds (every feature gets at least one).
    n_trees : int in [0, 10000] or "auto", default="auto"
        Rounds over a random public tree's leaves, after the feature rounds;
        0 fits an additive model. ``"auto"``: one per feature that has at
        least two bins, three when the budget's Gaussian-DP ``mu`` is at
        least 0.367 (``epsilon >= 1.41`` at ``delta=1e-5``), where the extra
        interactions outweigh the extra noise; features past the twentieth
        add none. The noise of every round grows as
        ``sqrt(n_rounds + n_trees)``, so on wide tables the rounds stop
        growing with the features.
    max_depth : int in [1, 32], default=6
        Depth of the random trees (their leaves also hold ``min_bin_rows``).
    min_bin_rows : float > 0 or "auto", default="auto"
        Private rows a bin or leaf should hold, at least, estimated from the
        public rows. ``"auto"``: ``max(n_private / 64, min(10 sigma / clip,
        n_private / 4))``, public quantities all: ``sigma / clip = 2
        sqrt(T) / mu`` with ``T`` the rounds of the ``n_private / 64`` bins
        (``n_rounds`` and ``n_trees`` if given) and ``mu`` the budget's. Large
        tables get ``n_private / 64``; small tables and small budgets get
        fewer, larger bins whose sums stand above the noise.
    clip : float in [1e-6, sqrt(2)], default=0.5
        Bound on the L2 norm of each private row's gradient. A softmax
        gradient's norm is at most ``sqrt(2)``, so a larger bound would clip
        nothing and only add noise.
    learning_rate : float in (0, 1000], default=0.8
    prior_std : float in [1e-6, 1e6], default=0.5
        Standard deviation of the Gaussian prior of a cell's value, toward
        which the noisy Newton steps are shrunk (a large value shrinks
        little).
    merge_bins : bool, default=True
        After each feature round's release, pool runs of neighbouring bins
        whose released sums are alike, so that a flat stretch of the feature
        pools its bins' sums and their noise averages out, while a jump keeps
        its boundary (each step averaged over the segmentations of the release,
        :func:`segmented_bin_values`; post-processing, free).
        False gives every bin its own step.
    accountant : skpate.privacy.RDPAccountant or PrivacyLedger, default=None
        Budget shared across fits: the fit reserves ``epsilon`` with it before
        reading a private row, and is refused if it does not fit.
    random_state : int, RandomState instance or None, default=None
        Seeds the order of the features, the trees and the noise. None
        (default) draws from OS entropy; a seed makes the noise reproducible by
        anyone who knows it (:class:`~skpate.SeededNoiseWarning`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    preprocessor_ : transformer or None
        Fitted on the public rows.
    min_bin_rows_ : float
    bin_edges_ : list of ndarray
        Per feature (after the preprocessor), the lower edges of its bins, from the public rows.
    n_rounds_ : int
    round_features_ : ndarray of int, shape (n_rounds,)
        The feature each feature round bins.
    n_trees_ : int
    tree_weights_ : ndarray
        Per feature with two bins or more, the weight of its draws in the trees (the squared
        :func:`released_spreads` after the feature rounds; public).
    trees_ : list of skpate.pool.partitions.PublicTree
        The random trees of the tree rounds, grown on the public rows.
    sigma_ : float
        Noise of every entry of every round's cell sums.
    model_ : BoostedPartitionsModel
        The publishable model (see :meth:`export_model`).
    privacy_spent_ : tuple of (float, float)
    privacy_report_ : skpate.PrivacyReport

    Examples
    --------
    >>> import numpy as np
    >>> from skpate import NoisyBoostingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-2, 2, size=(6000, 4)); y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 > 1).astype(int)
    >>> boost = NoisyBoostingClassifier(epsilon=1.0, classes=[0, 1])  # random_state=None: secret noise
    >>> boost.fit(X[:4000], y[:4000], X_public=X[4000:5000]).score(X[5000:], y[5000:]) > 0.8  # private, public, new
    True
    >>> boost.privacy_spent_
    (1.0, 1e-05)
    >>> model = boost.export_model()  # public cells and noisy cell values: publish it with privacy_spent_
    >>> bool((model.predict(X[5000:]) == boost.predict(X[5000:])).all())
    True
    """

    _parameter_constraints = {
        **BasePoolClassifier._parameter_constraints,
        "preprocessor": [StrOptions({"auto", "passthrough"}), HasMethods(["fit", "transform"])],
        "n_rounds": [Count(1, MAX_ROUNDS), StrOptions({"auto"})],
        "n_trees": [Count(0, MAX_ROUNDS), StrOptions({"auto"})],
        "max_depth": [Count(1, 32)],
        "min_bin_rows": [RealRange(0, None, closed="neither"), StrOptions({"auto"})],
        # A softmax gradient's norm is at most sqrt(2): a larger clip clips nothing and only adds noise.
        "clip": [RealRange(MIN_CLIP, np.sqrt(2.0), closed="both")],
        # Bounds far outside any useful value, inside which the steps' arithmetic stays finite.
        "learning_rate": [RealRange(0, MAX_LEARNING_RATE, closed="right")],
        "prior_std": [RealRange(MIN_PRIOR_STD, MAX_PRIOR_STD, closed="both")],
        "merge_bins": ["boolean"],
    }

    def __init__(
        self, *, epsilon=1.0, delta=1e-5, classes=None, preprocessor="auto", n_rounds="auto", n_trees="auto",
        max_depth=6, min_bin_rows="auto", clip=0.5, learning_rate=0.8, prior_std=0.5, merge_bins=True,
        accountant=None, random_state=None,
    ):  # fmt: skip
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.preprocessor = preprocessor
        self.n_rounds = n_rounds
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.min_bin_rows = min_bin_rows
        self.clip = clip
        self.learning_rate = learning_rate
        self.prior_std = prior_std
        self.merge_bins = merge_bins
        self.accountant = accountant
        self.random_state = random_state

    def _rounds(self, n_splittable, mu):
        """``(n_rounds, n_trees)`` with "auto" resolved for ``n_splittable`` features that have two bins or more and
        the budget's Gaussian-DP ``mu`` (public quantities)."""
        n_splittable = max(1, n_splittable)
        counted = min(n_splittable, ROUND_FEATURES_CAP)
        rounds = max(n_splittable, ROUNDS_PER_FEATURE * counted) if self.n_rounds == "auto" else self.n_rounds
        per_feature = TREES_PER_FEATURE if mu < MORE_TREES_MU else MORE_TREES_PER_FEATURE
        trees = per_feature * counted if self.n_trees == "auto" else self.n_trees
        return int(rounds), int(trees)  # Python ints: the noise is calibrated for their sum (see Count)

    def _preprocessor(self):
        return PublicPreprocessor(encoding="ordinal") if self._preprocessor_is("auto") else self.preprocessor

    def _fit_pool(self, X_private, y_private, X_public, public, classes, rng, plan):
        name = type(self).__name__
        n_private, n_public = _num_samples(X_private), _num_samples(X_public)
        # 1. The bins and the feature rounds, from the public rows (and public counts) alone, before any private
        # row is read.
        self.preprocessor_, Z_public = public
        Z_public = _dense(Z_public)
        mu = float(gdp_mu(self.epsilon, self.delta))
        clip = float(self.clip)  # a Fraction or float16 computes alike
        if self.min_bin_rows == "auto":  # public quantities: n_private, the public rows, the budget
            base = n_private / AUTO_BINS
            edges = public_bin_edges(Z_public, base * n_public / n_private)
            rounds = sum(self._rounds(sum(e.size > 0 for e in edges), mu))
            noise_rows = BIN_NOISE_RATIO * binned_sum_sigma(clip, rounds, mu) / clip
            self.min_bin_rows_ = max(base, min(noise_rows, n_private / MIN_BINS))
        else:
            self.min_bin_rows_ = float(self.min_bin_rows)
        min_public = self.min_bin_rows_ * n_public / n_private
        self.bin_edges_ = public_bin_edges(Z_public, min_public)
        splittable = [j for j, edges in enumerate(self.bin_edges_) if edges.size]
        if not splittable:  # public facts only: the public rows and min_bin_rows_ (n_private is public)
            warnings.warn(
                f"{name}: no feature splits the public rows into two bins of min_bin_rows_={self.min_bin_rows_:.4g} "
                f"private rows ({min_public:.4g} public rows) each, so the model learns the classes' balance only. "
                "Lower min_bin_rows, or pass more public rows, or public rows whose features vary.",
                UserWarning,
                stacklevel=4,
            )
            splittable = [0]  # rounds over one bin: intercepts
        self.n_rounds_, self.n_trees_ = self._rounds(len(splittable), mu)
        cycles = [rng.permutation(splittable) for _ in range(-(-self.n_rounds_ // len(splittable)))]
        self.round_features_ = np.concatenate(cycles)[: self.n_rounds_]
        self.sigma_ = binned_sum_sigma(clip, self.n_rounds_ + self.n_trees_, mu)

        # 2. The private rows: one noisy release of clipped gradient sums per round.
        Z_private = _dense(private_matrix(private_features(self.preprocessor_, X_private, Z_public, name), name))
        codes = np.searchsorted(classes, y_private)  # check_classes checked that every label is in classes
        ratio = n_private / n_public  # public hessians stand in for the private rows' (n_private is public)
        F_private, F_public = np.zeros((n_private, classes.size)), np.zeros((n_public, classes.size))
        partitions, values = [], []

        learning_rate, prior_std = float(self.learning_rate), float(self.prior_std)

        def boost(partition):
            cells_private, cells_public = partition.apply(Z_private), partition.apply(Z_public)
            sums = noisy_bin_sums(
                cells_private, codes, softmax(F_private, axis=1), clip, partition.n_cells, self.sigma_, rng
            )
            p = softmax(F_public, axis=1)
            hessians = ratio * np.stack(
                [np.bincount(cells_public, weights=h, minlength=partition.n_cells) for h in (p * (1.0 - p)).T], axis=1
            )
            if self.merge_bins and isinstance(partition, FeatureBins):  # ordered bins: runs of like bins pool
                step = segmented_bin_values(sums, hessians, self.sigma_, learning_rate, prior_std)
            else:
                step = _bin_values(sums, hessians, self.sigma_, learning_rate, prior_std)
            F_private[:] += step[cells_private]
            F_public[:] += step[cells_public]
            partitions.append(partition)
            values.append(step)

        for j in self.round_features_:
            boost(FeatureBins(j, self.bin_edges_[j]))
        # 3. The trees, from the public rows and the released feature rounds (post-processing), one release each.
        self.tree_weights_ = released_spreads(Z_public, partitions, values, splittable) ** 2
        self.trees_ = []
        for _ in range(self.n_trees_):
            tree = grow_public_tree(Z_public, splittable, self.max_depth, max(min_public, 1.0), rng, self.tree_weights_)
            self.trees_.append(tree)
            boost(tree)
        self.model_ = BoostedPartitionsModel(self.preprocessor_, partitions, values, classes)

    def _mechanism(self):
        return (
            f"noisy boosting, {self.n_rounds_ + self.n_trees_} rounds ({self.n_rounds_} over one feature's public "
            f"bins, {self.n_trees_} over a random public tree's leaves) of per-cell clipped gradient sums "
            f"(clip={float(self.clip):g}, sigma={self.sigma_:.4g})"
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self._preprocessor_is("passthrough"):  # a sparse matrix is binned as its dense rows
            tags.input_tags.sparse = True
        return tags


class BoostedPartitionsModel(LogitsModelMixin, PublishedModelMixin, ClassifierMixin, BaseEstimator):
    """A sum of step functions over public partitions: what :class:`NoisyBoostingClassifier` publishes.

    Not fitted by itself: built from the fitted preprocessor (or None) and, per
    round, the partition (a feature's bins or a random tree's leaves, both cut
    from public rows; :mod:`skpate.pool.partitions`) and its cells' noisy
    values. The logits of a row are the sum over rounds of its cell's values.

    Parameters
    ----------
    preprocessor : fitted transformer or None
    partitions : list of FeatureBins or PublicTree
        Per round, the partition: ``apply(Z)`` gives every row's cell.
    values : list of ndarray of shape (n_cells, n_classes)
        Per round, the value of each cell.
    classes : ndarray of shape (n_classes,)
    """

    def __init__(self, preprocessor, partitions, values, classes):
        self.preprocessor = preprocessor
        self.partitions = partitions
        self.values = values
        self.classes = classes

    def logits(self, X):
        """Class scores of the rows, shape ``(n_samples, n_classes)``."""
        Z = _dense(check_array(self._features(X), accept_sparse="csr", dtype=np.float64))
        F = np.zeros((Z.shape[0], self.classes_.size))
        for partition, values in zip(self.partitions, self.values):
            F += values[partition.apply(Z)]
        return F
