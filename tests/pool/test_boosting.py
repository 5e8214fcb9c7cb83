"""NoisyBoostingClassifier: its noise, a recount of its sensitivity, public-only structure, an audit, accuracy."""

import pickle

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import InvalidParameterError

from skpate import NoisyBoostingClassifier, NoisyGDClassifier, RDPAccountant
from skpate.pool.boosting import (
    MORE_TREES_MU,
    ROUND_FEATURES_CAP,
    BoostedPartitionsModel,
    _bin_values,
    clipped_bin_sums,
    noisy_bin_sums,
    released_spreads,
    segmented_bin_values,
)
from skpate.pool.partitions import FeatureBins, PublicTree, grow_public_tree
from skpate.privacy.calibration import binned_sum_sigma
from skpate.privacy.gdp import gdp_epsilon
from skpate.privacy.sensitivity import binned_sum_sensitivity


def model(**params):
    return NoisyBoostingClassifier(**{"classes": [0, 1], "random_state": 0, **params})


def test_the_noise_is_the_hand_derived_sigma_and_spends_the_budget(binary_split, reference_gdp_mu):
    X, y, X_public, _ = binary_split
    boost = model(epsilon=0.5, clip=0.3).fit(X, y, X_public=X_public)
    # "auto": 3 cycles over the 6 features (every one is continuous: several public bins) and one random tree per
    # feature, T = 24 rounds; rows per cell max(n_private / 64, min(10 sigma / clip, n_private / 4)) with
    # sigma / clip = 2 sqrt(24) / mu: here n_private / 4.
    noise_rows = 10 * 2 * np.sqrt(24) / reference_gdp_mu(0.5, 1e-5)
    assert boost.n_rounds_ == 18 and boost.n_trees_ == 6 and len(boost.trees_) == 6
    assert boost.min_bin_rows_ == pytest.approx(max(1400 / 64, min(noise_rows, 1400 / 4)))
    assert model(epsilon=50.0).fit(X, y, X_public=X_public).min_bin_rows_ == pytest.approx(1400 / 64)  # little noise
    # Hand-derived: one replaced row moves a round's cell sums by at most 2 clip; T rounds at sigma compose to
    # 2 clip sqrt(T) / sigma-GDP, and mu is solved independently of skpate (conftest).
    assert boost.sigma_ == pytest.approx(2 * 0.3 * np.sqrt(24) / reference_gdp_mu(0.5, 1e-5), rel=1e-6)
    assert boost.privacy_spent_ == (0.5, 1e-5) and boost.privacy_report_.guarantee == "budget"
    assert gdp_epsilon(2 * 0.3 * np.sqrt(24) / boost.sigma_, 1e-5) == pytest.approx(0.5, rel=1e-6)
    assert f"sigma={boost.sigma_:.4g}" in boost.privacy_report_.mechanism
    # Public quantities only: other private rows (other labels) get the same noise; set rounds change it as sqrt(T).
    other = model(epsilon=0.5, clip=0.3).fit(X[::-1], 1 - y, X_public=X_public)
    assert other.sigma_ == boost.sigma_
    ten = model(epsilon=0.5, clip=0.3, n_rounds=10, n_trees=3).fit(X, y, X_public=X_public)
    assert (ten.n_rounds_, ten.n_trees_) == (10, 3)
    assert ten.sigma_ == pytest.approx(2 * 0.3 * np.sqrt(13) / reference_gdp_mu(0.5, 1e-5))
    additive = model(epsilon=0.5, clip=0.3, n_rounds=10, n_trees=0).fit(X, y, X_public=X_public)
    assert additive.trees_ == []
    assert additive.sigma_ == pytest.approx(2 * 0.3 * np.sqrt(10) / reference_gdp_mu(0.5, 1e-5))
    assert binned_sum_sensitivity(0.3) == pytest.approx(0.6) and binned_sum_sensitivity(0.3, "add-remove") == 0.3
    assert binned_sum_sigma(0.3, 10, 2.0) == pytest.approx(2 * 0.3 * np.sqrt(10) / 2.0)


def test_auto_trees_grow_with_the_budget(binary_split, reference_gdp_mu):
    """``n_trees="auto"``: one random tree per feature below Gaussian-DP mu 0.367, three from there on; the budget
    is public, so the count and the noise depend on nothing private."""
    X, y, X_public, _ = binary_split
    threshold = gdp_epsilon(MORE_TREES_MU, 1e-5)
    assert threshold == pytest.approx(1.41, abs=0.01)
    below = model(epsilon=0.99 * threshold).fit(X, y, X_public=X_public)
    above = model(epsilon=1.01 * threshold).fit(X, y, X_public=X_public)
    assert (below.n_rounds_, below.n_trees_, len(below.trees_)) == (18, 6, 6)
    assert (above.n_rounds_, above.n_trees_, len(above.trees_)) == (18, 18, 18)
    assert above.sigma_ == pytest.approx(2 * 0.5 * np.sqrt(36) / reference_gdp_mu(1.01 * threshold, 1e-5), rel=1e-6)
    assert f"{above.n_trees_} over a random public tree's leaves" in above.privacy_report_.mechanism
    assert model(epsilon=4.0, n_trees=4).fit(X, y, X_public=X_public).n_trees_ == 4  # a set count is kept
    assert model(epsilon=4.0).fit(X[::-1], 1 - y, X_public=X_public).n_trees_ == above.n_trees_


def test_auto_rounds_stop_growing_past_twenty_features(wide_binary_split, reference_gdp_mu):
    """Past 20 features (public: the columns with two bins or more), "auto" counts 20 features' worth of rounds, and
    every feature still gets one feature round; the noise follows the rounds as ``sqrt(T)``."""
    X, y, X_public = wide_binary_split
    assert ROUND_FEATURES_CAP == 20
    below = model(epsilon=1.0).fit(X, y, X_public=X_public)
    above = model(epsilon=4.0).fit(X, y, X_public=X_public)
    # 45 features: max(45, 3 x 20) = 60 feature rounds (not 135), and 1 or 3 trees per counted feature (20 or 60).
    assert (below.n_rounds_, below.n_trees_) == (60, 20) and (above.n_rounds_, above.n_trees_) == (60, 60)
    assert set(below.round_features_) == set(range(45))  # one full cycle first, then 15 more
    assert np.array_equal(np.sort(below.round_features_[:45]), np.arange(45))
    assert below.sigma_ == pytest.approx(2 * 0.5 * np.sqrt(80) / reference_gdp_mu(1.0, 1e-5), rel=1e-6)
    assert above.sigma_ == pytest.approx(2 * 0.5 * np.sqrt(120) / reference_gdp_mu(4.0, 1e-5), rel=1e-6)
    # 20 features or fewer: unchanged (3 cycles, one or three trees per feature); 70 features: one round each.
    twenty = model(epsilon=1.0).fit(X[:, :20], y, X_public=X_public[:, :20])
    assert (twenty.n_rounds_, twenty.n_trees_) == (60, 20)
    assert model(epsilon=1.0).fit(X[:, :19], y, X_public=X_public[:, :19]).n_trees_ == 19
    wider = np.hstack([X, X[:, :25]]), np.hstack([X_public, X_public[:, :25]])
    assert model(epsilon=1.0).fit(wider[0], y, X_public=wider[1]).n_rounds_ == 70
    # a set count is kept
    assert model(epsilon=1.0, n_rounds=135, n_trees=45).fit(X, y, X_public=X_public).n_rounds_ == 135


def _cell(z, partition):
    """A row's cell, found by hand: how many lower edges it reaches, or the leaf its path through the tree ends in."""
    if isinstance(partition, FeatureBins):
        return sum(1 for edge in partition.edges if z[partition.feature] >= edge)
    node, leaves = 0, np.flatnonzero(partition.feature < 0)
    while partition.feature[node] >= 0:
        below = z[partition.feature[node]] < partition.threshold[node]
        node = partition.left[node] if below else partition.right[node]
    return int(np.searchsorted(leaves, node))


def _recount(Z, y, published, clip):
    """Every round's clipped gradient sums, recounted row by row from the released state before the round."""
    n_classes = published.classes_.size
    tables = [np.zeros((partition.n_cells, n_classes)) for partition in published.partitions]
    for z, label in zip(Z, y):
        logits = np.zeros(n_classes)
        for table, partition, values in zip(tables, published.partitions, published.values):
            b = _cell(z, partition)
            p = np.exp(logits - logits.max())
            gradient = np.eye(n_classes)[label] - p / p.sum()
            norm = np.sqrt(np.sum(gradient**2))
            table[b] += gradient * min(1.0, clip / norm)
            logits = logits + values[b]  # the released values: the same for a row and its neighbour's dataset
    return tables


def _library_sums(Z, y, published, clip):
    """The same sums with the functions the fit calls."""
    F, sums = np.zeros((len(Z), published.classes_.size)), []
    for partition, values in zip(published.partitions, published.values):
        cells = partition.apply(Z)
        p = np.exp(F - F.max(axis=1, keepdims=True))
        sums.append(clipped_bin_sums(cells, y, p / p.sum(axis=1, keepdims=True), clip, partition.n_cells))
        F += values[cells]
    return sums


def test_a_recount_bounds_every_rounds_change_under_replace_one_by_2_clip(three_class_split_small):
    X, y, X_public = three_class_split_small
    X, y, clip = X[:300].copy(), y[:300].copy(), 0.4
    boost = NoisyBoostingClassifier(
        epsilon=4.0,
        classes=[0, 1, 2, 3],
        preprocessor="passthrough",
        n_rounds=8,
        n_trees=3,
        clip=clip,
        random_state=0,
    ).fit(X, y, X_public=X_public)
    published = boost.export_model()
    assert [type(partition) for partition in published.partitions] == [FeatureBins] * 8 + [PublicTree] * 3
    low, high = X_public.min(axis=0), X_public.max(axis=0)
    neighbours = {  # row 0 replaced by an adversarial row
        "outlier": (np.full(X.shape[1], 1e300), y[0]),
        "huge negative": (np.full(X.shape[1], -1e39), (y[0] + 1) % 3),
        "relabelled": (X[0], (y[0] + 1) % 3),
        "to another bin": (np.where(X[0] > (low + high) / 2, low, high), y[0]),
        "a class no row has": (X[0], 3),
    }
    base = _recount(X, y, published, clip)
    for a, b in zip(base, _library_sums(X, y, published, clip)):
        np.testing.assert_allclose(a, b, atol=1e-9)
    worst = 0.0
    for name, (row, label) in neighbours.items():
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = row, label
        recounted = _recount(X2, y2, published, clip)
        for a, b in zip(recounted, _library_sums(X2, y2, published, clip)):
            np.testing.assert_allclose(a, b, atol=1e-9, err_msg=name)
        for t, (a, b) in enumerate(zip(base, recounted)):
            change = np.sqrt(np.sum((a - b) ** 2))
            assert change <= 2 * clip + 1e-9, (name, t, change)
            worst = max(worst, change)
    assert worst > np.sqrt(2) * clip  # the adversarial rows reach past a move between bins, toward the bound


class _PublicRowsOnly(TransformerMixin, BaseEstimator):
    """Passes the public rows it was fitted on and fails on any other rows: the fit's first read of a private row.

    ``on_private`` is called first, there (a failed fit leaves no attribute behind: it records them).
    """

    def __init__(self, on_private=None):
        self.on_private = on_private

    def fit(self, X, y=None):
        self.public_ = np.array(X, dtype=float)
        return self

    def transform(self, X):
        if np.shape(X) != self.public_.shape or not np.array_equal(X, self.public_):
            if self.on_private is not None:
                self.on_private()
            raise ValueError("private rows reached the preprocessor")
        return np.asarray(X, dtype=float)


def test_the_structure_comes_from_the_public_rows_and_the_releases_alone(binary_split):
    X, y, X_public, _ = binary_split
    X_public = X_public[:500]
    rng = np.random.default_rng(5)
    fits = [
        model().fit(X, y, X_public=X_public),
        model().fit(rng.normal(size=X.shape) * 10, rng.integers(0, 2, len(y)), X_public=X_public),  # other rows
    ]
    # When a fit first reads a private row, it has already fixed the bins, the rounds and the noise.
    failing = model()
    at_first_private_row = {}
    failing.set_params(preprocessor=_PublicRowsOnly(lambda: at_first_private_row.update(vars(failing))))
    with pytest.raises(ValueError, match="failed on the private rows"):
        failing.fit(X, y, X_public=X_public)
    reference = model(preprocessor="passthrough").fit(X, y, X_public=X_public)
    for state in [*(vars(boost) for boost in fits), at_first_private_row]:
        np.testing.assert_array_equal(state["round_features_"], reference.round_features_)
        assert state["sigma_"] == reference.sigma_
    for boost in [*fits, reference]:  # the trees: from the public rows and the released feature rounds only
        published = boost.export_model()
        Z_public = X_public if boost.preprocessor_ is None else boost.preprocessor_.transform(X_public)
        features = [j for j, edges in enumerate(boost.bin_edges_) if edges.size]
        spreads = released_spreads(Z_public, published.partitions, published.values, features)
        np.testing.assert_allclose(boost.tree_weights_, spreads**2)
        min_public = boost.min_bin_rows_ * len(X_public) / len(X)
        for tree in boost.trees_:
            assert np.bincount(tree.apply(Z_public)).min() >= min_public
            inner = tree.feature >= 0
            assert all(t in Z_public[:, j] for j, t in zip(tree.feature[inner], tree.threshold[inner]))
    for boost in fits:  # the default preprocessor is fitted on the public rows: its bins are the same for both
        assert all(np.array_equal(a, b) for a, b in zip(boost.bin_edges_, fits[0].bin_edges_))
    for edges, same, column in zip(at_first_private_row["bin_edges_"], reference.bin_edges_, X_public.T):
        np.testing.assert_array_equal(edges, same)
        assert np.isin(edges, column).all()  # every edge is a public value
        public_per_bin = np.bincount(np.searchsorted(edges, column, side="right"), minlength=edges.size + 1)
        assert public_per_bin.min() >= at_first_private_row["min_bin_rows_"] * 500 / 1400 and edges.size < 256
    assert sorted(reference.round_features_[:6]) == list(range(6))  # a cycle visits every feature once


def _segment_log_evidence(sums, hessians, tau2, c):
    """A segment's log marginal likelihood, written out from the Gaussian linear model (independent of skpate)."""
    total = 0.0
    for k in range(sums.shape[1]):
        h, s = hessians[:, k], sums[:, k]
        covariance = tau2 * np.eye(h.size) + (tau2 / c) * np.outer(h, h)  # prior variance prior_std^2 = tau2 / c
        _, logdet = np.linalg.slogdet(covariance)
        total += -0.5 * (logdet + s @ np.linalg.solve(covariance, s) + h.size * np.log(2 * np.pi))
    return total


@pytest.mark.parametrize("change_prior", [0.5, 0.2])
def test_the_steps_are_the_posterior_mean_over_every_segmentation(change_prior):
    """Brute force over all 2^(n - 1) segmentations of 7 bins, each weighted by the full Gaussian marginal likelihood
    (constants included) times the prior on the changes, and taking per segment the posterior mean step of its
    pooled model: the weighted mean of the steps is what the forward-backward sums give."""
    rng = np.random.default_rng(3)
    n, sigma, prior_std, learning_rate = 7, 2.0, 0.5, 0.8
    hessians = rng.uniform(0.5, 8.0, (n, 3))
    steps = np.repeat(rng.normal(0, 0.5, (3, 3)), [2, 3, 2], axis=0)  # three true segments
    sums = hessians * steps + rng.normal(0, sigma, (n, 3))
    sums -= sums.mean(axis=1, keepdims=True)
    values = segmented_bin_values(sums, hessians, sigma, learning_rate, prior_std, change_prior)
    tau2 = 2 / 3 * sigma**2
    c = tau2 / prior_std**2
    h = np.maximum(hessians, 1.0)
    log_weights, means = [], []
    for mask in range(2 ** (n - 1)):
        cuts = [0] + [b + 1 for b in range(n - 1) if mask >> b & 1] + [n]
        score = sum(_segment_log_evidence(sums[i:j], h[i:j], tau2, c) for i, j in zip(cuts[:-1], cuts[1:]))
        score += (len(cuts) - 2) * np.log(change_prior) + (n - len(cuts) + 1) * np.log(1 - change_prior)
        mean = np.empty_like(sums)
        for i, j in zip(cuts[:-1], cuts[1:]):
            mean[i:j] = learning_rate * (2 / 3) * (h[i:j] * sums[i:j]).sum(0) / ((h[i:j] ** 2).sum(0) + c)
        log_weights.append(score)
        means.append(mean)
    weights = np.exp(np.array(log_weights) - max(log_weights))
    expected = np.tensordot(weights / weights.sum(), np.array(means), axes=1)
    np.testing.assert_allclose(values, expected, rtol=1e-10, atol=1e-14)
    assert weights.max() < 0.9 * weights.sum()  # the case is not trivial: no segmentation is certain
    np.testing.assert_array_less(1e-6, np.abs(values - means[int(np.argmax(weights))]).max())  # nor is the average it


def test_segments_pool_flat_runs_keep_jumps_and_reduce_to_one_bin_steps():
    # Without a change allowed between bins (change_prior near 1: every boundary kept), the default's steps exactly.
    rng = np.random.default_rng(0)
    sums, hessians = rng.normal(0, 3, (20, 2)), rng.uniform(0.5, 30, (20, 2))
    sums -= sums.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(
        segmented_bin_values(sums, hessians, 3.0, 0.8, 0.5, change_prior=1 - 1e-12),
        _bin_values(sums, hessians, 3.0, 0.8, 0.5),
    )
    # Hand-derived, two bins of hessian 1 and sums 0, c = share sigma^2 / prior_std^2 = 2: per class column, one
    # segment weighs (1 + 2 / c)^(-1/2) = 2^(-1/2) and two weigh (1 + 1 / c)^(-1) = 2/3; every step is 0 either way.
    np.testing.assert_array_equal(segmented_bin_values(np.zeros((2, 2)), np.ones((2, 2)), 1.0, 0.8, 0.5), 0.0)
    # Two bins of hessian 1 and sums (s, -s) in class 0: apart, each bin's step is 0.8 (1/2) s / (1 + 2); merged, 0.
    # The result is the apart steps times the posterior probability of the change, from the same two weights.
    s = 1.5
    sums = np.array([[s, -s], [-s, s]])
    apart = (2 / 3 * np.exp(2 * s**2 / (2 * 0.5 * (1 + 2)))) ** 2  # each bin adds b^2 / (2 tau^2 (a + c)); 2 columns
    together = (2**-0.5) ** 2
    expected = 0.8 * 0.5 * s / 3 * apart / (apart + together)
    np.testing.assert_allclose(segmented_bin_values(sums, np.ones((2, 2)), 1.0, 0.8, 0.5)[:, 0], [expected, -expected])
    # A step function (40 bins of 50 rows' hessians, value +0.5 on the first 15, -0.5 after) under noise 3:
    # the jump at 15 survives, each side is almost flat, and nearer the truth than a bin's own step.
    truth = np.where(np.arange(40) < 15, 0.5, -0.5)
    hessians = np.full((40, 2), 50.0)
    sums = hessians * np.stack([truth, -truth], axis=1) / 0.8 + rng.normal(0, 3, (40, 2))
    sums -= sums.mean(axis=1, keepdims=True)
    merged = segmented_bin_values(sums, hessians, 3.0, 0.8, 0.5)[:, 0]
    alone = _bin_values(sums, hessians, 3.0, 0.8, 0.5)[:, 0]
    assert merged[:15].min() > 0 > merged[15:].max()
    assert max(np.ptp(merged[:15]), np.ptp(merged[15:])) < min(np.ptp(alone[:15]), np.ptp(alone[15:])) / 10
    assert np.abs(merged - truth / 2).mean() < np.abs(alone - truth / 2).mean() / 2  # noise-free: truth / 2


def test_merged_bins_are_post_processing_the_budget_and_noise_do_not_change(binary_split):
    X, y, X_public, _ = binary_split
    merged, separate = model().fit(X, y, X_public=X_public), model(merge_bins=False).fit(X, y, X_public=X_public)
    assert merged.sigma_ == separate.sigma_ and merged.privacy_spent_ == separate.privacy_spent_
    np.testing.assert_array_equal(merged.round_features_, separate.round_features_)

    def jumps(boost):  # per feature round, the summed change of the step between neighbouring bins
        published = boost.export_model()
        pairs = zip(published.values, published.partitions)
        return np.array([np.abs(np.diff(v[:, 1])).sum() for v, p in pairs if isinstance(p, FeatureBins)])

    np.testing.assert_array_less(jumps(merged), jumps(separate))  # in every feature round, like bins pool their noise


def test_an_audit_of_one_round_stays_below_its_epsilon():
    """One bin's sums under a row relabelled (the worst case: 2 clip), sampled from the release the fit makes.

    With one round, the round's epsilon is the fit's. A Clopper-Pearson lower bound on the privacy loss of the
    event "the statistic that separates the two neighbours is above 3 sigma" must stay below it, and have power.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 2))
    y = (X[:, 0] > 0).astype(int)
    epsilon, delta, clip = 2.0, 1e-4, 0.5
    one_round = model(epsilon=epsilon, delta=delta, n_rounds=1, n_trees=0, clip=clip)
    boost = one_round.fit(X[:3000], y[:3000], X_public=X[3000:])
    sigma = boost.sigma_
    # 20 rows in 4 bins at the first round's state (p = 1/2); the neighbour relabels row 0.
    bins, codes, proba = np.arange(20) % 4, np.arange(20) % 2, np.full((20, 2), 0.5)
    codes_neighbour = codes.copy()
    codes_neighbour[0] = 1 - codes[0]
    n = 200_000
    # n independent releases in one call: n disjoint copies of the 4 bins (noise is independent across entries).
    copies = (bins[None, :] + 4 * np.arange(n)[:, None]).ravel()

    def statistic(labels):
        sums = noisy_bin_sums(copies, np.tile(labels, n), np.tile(proba, (n, 1)), clip, 4 * n, sigma, rng)
        return (sums[0::4, 0] - sums[0::4, 1]) / np.sqrt(2)  # bin 0, along e_0 - e_1

    clean = clipped_bin_sums(bins, codes, proba, clip, 4)
    moved = (clean[0, 0] - clean[0, 1]) / np.sqrt(2)  # the row's side, moved by -2 clip in the neighbour
    threshold = moved - 2 * clip + 3 * sigma
    k, k_neighbour = np.sum(statistic(codes) > threshold), np.sum(statistic(codes_neighbour) > threshold)
    p_low = beta.ppf(0.0005, k, n - k + 1)
    q_high = beta.ppf(0.9995, k_neighbour + 1, n - k_neighbour)
    empirical = np.log((p_low - delta) / q_high)
    assert empirical <= epsilon
    assert empirical > 0.5 * epsilon


def test_it_beats_noisy_gradient_descent_on_a_nonlinear_table():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(10000, 6))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - np.abs(X[:, 2]) + rng.normal(0, 0.3, len(X)) > 0).astype(int)
    split = X[:6000], y[:6000]
    boost = model(epsilon=4.0).fit(*split, X_public=X[6000:8000])
    gd = NoisyGDClassifier(epsilon=4.0, classes=[0, 1], random_state=0).fit(*split, X_public=X[6000:8000])
    boost_accuracy, gd_accuracy = boost.score(X[8000:], y[8000:]), gd.score(X[8000:], y[8000:])
    assert boost_accuracy > 0.85 and boost_accuracy > gd_accuracy + 0.1


def test_random_public_trees_are_median_splits_of_the_public_rows_with_leaves_of_min_rows():
    rng = np.random.default_rng(3)
    Z = np.column_stack([rng.normal(size=2000), rng.integers(0, 3, 2000), np.zeros(2000)])  # a constant column
    tree = grow_public_tree(Z, [0, 1, 2], max_depth=4, min_rows=100, rng=np.random.default_rng(0))
    cells = tree.apply(Z)
    counts = np.bincount(cells, minlength=tree.n_cells)
    assert counts.min() >= 100 and 2 <= tree.n_cells <= 2**4
    inner = tree.feature >= 0
    assert set(tree.feature[inner]) <= {0, 1}  # the constant column cannot be cut
    for j, threshold in zip(tree.feature[inner], tree.threshold[inner]):
        assert threshold in Z[:, j]  # every threshold is a public value
    assert [_cell(z, tree) for z in Z[:50]] == list(cells[:50])  # the vectorised descent is the row-by-row one
    same = grow_public_tree(Z, [0, 1, 2], max_depth=4, min_rows=100, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(same.threshold, tree.threshold)  # public rows and the generator fix it
    assert grow_public_tree(Z, [0], max_depth=3, min_rows=1500, rng=rng).n_cells == 1  # too few rows to split
    # Weights: a feature of weight 0 (floored at 1e-9 of the largest) is tried only where the others cannot split.
    weighted = grow_public_tree(Z, [0, 1, 2], max_depth=3, min_rows=100, rng=rng, weights=[0.0, 1.0, 0.0])
    assert weighted.feature[0] == 1 and set(weighted.feature[weighted.feature >= 0]) <= {0, 1}


def test_the_random_trees_learn_an_interaction_an_additive_model_cannot():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(12000, 4))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)  # no feature alone says anything
    split, public, new = (X[:8000], y[:8000]), X[8000:10000], (X[10000:], y[10000:])
    additive = model(epsilon=4.0, n_trees=0).fit(*split, X_public=public).score(*new)
    trees = model(epsilon=4.0).fit(*split, X_public=public).score(*new)
    assert additive < 0.6 and trees > 0.8


def test_multi_class_and_the_published_model(three_class_split):
    X, y, X_public, y_public = three_class_split
    boost = model(epsilon=4.0, classes=[0, 1, 2]).fit(X, y, X_public=X_public)
    assert boost.score(X_public, y_public) > 0.5  # chance: 1/3
    published = boost.export_model()
    assert isinstance(published, BoostedPartitionsModel)
    np.testing.assert_allclose(published.decision_function(X_public), boost.decision_function(X_public))
    np.testing.assert_allclose(published.predict_proba(X_public).sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(boost.predict_log_proba(X_public)), boost.predict_proba(X_public))
    with pytest.raises(TypeError, match="published model"):
        published.fit(X, y)


def test_mixed_tables_huge_values_missing_values_and_one_class_pass_the_public_preprocessor(mixed_split, error_text):
    X, y, X_public = mixed_split
    X = X.copy()
    marker = 987654.321
    X.loc[0, "age"], X.loc[1, "income"], X.loc[2, "income"] = marker, 1e300, 1e39
    X.loc[3, "age"], X.loc[4, "city"], X.loc[5, "city"] = np.nan, None, "a city the public rows never showed"
    boost = model(classes=[0, 1, 2]).fit(X, y, X_public=X_public)
    assert np.isfinite(boost.predict_proba(X)).all() and set(boost.predict(X)) <= {0, 1, 2}
    assert np.float64(marker).tobytes() not in pickle.dumps(boost.export_model())  # no private value published
    one_class = model(classes=[0, 1, 2]).fit(X, np.zeros_like(y), X_public=X_public)  # a neighbour may differ
    assert one_class.predict_proba(X_public).shape == (len(X_public), 3)
    # Without the public preprocessor a missing private value is refused, quoting none of the private rows.
    numbers = X[["age", "income"]].to_numpy()
    with pytest.raises(ValueError, match="failed on the private rows") as raised:
        model(classes=[0, 1, 2], preprocessor="passthrough").fit(
            numbers, y, X_public=X_public[["age", "income"]].to_numpy()
        )
    assert "987654" not in error_text(raised.value)


def test_parameters_are_validated_before_the_fit(binary_split):
    X, y, X_public, _ = binary_split
    for params in (
        {"preprocessor": "onehot"},
        {"n_rounds": 0},
        {"n_trees": -1},
        {"max_depth": 0},
        {"min_bin_rows": -1},
        {"prior_std": 0.0},
        {"n_rounds": 10_001},  # beyond MAX_ROUNDS: refused before the budget, not a MemoryError after it
        {"n_trees": 10**9},
        {"n_rounds": True},
    ):
        with pytest.raises(InvalidParameterError):
            model(**params).fit(X, y, X_public=X_public)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    boost = model().fit(frame, y, X_public=pd.DataFrame(X_public, columns=frame.columns))
    assert list(boost.feature_names_in_) == list(frame.columns)


def test_rounds_given_as_small_numpy_integers_get_the_noise_of_every_round(binary_split, reference_gdp_mu):
    """250 + 10 rounds are 4 in uint8 arithmetic: the noise would be calibrated for 4 releases, and 260 made."""
    X, y, X_public, _ = binary_split
    X, y = X[:300], y[:300]
    boost = model(n_rounds=np.uint8(250), n_trees=np.uint8(10), clip=0.5).fit(X, y, X_public=X_public)
    assert (boost.n_rounds_, boost.n_trees_, len(boost.model_.partitions)) == (250, 10, 260)
    assert boost.sigma_ == pytest.approx(2 * 0.5 * np.sqrt(260) / reference_gdp_mu(1.0, 1e-5), rel=1e-6)
    three = model(n_rounds=np.uint8(3), n_trees=0).fit(X, y, X_public=X_public)  # -np.uint8(3) is 253
    assert len(three.round_features_) == 3


@pytest.mark.parametrize(
    ("parameter", "edges", "beyond"),
    [
        ("clip", [1e-6, np.sqrt(2.0)], [0.0, 1.5]),
        ("prior_std", [1e-6, 1e6], [1e-7, 1e7]),
        ("learning_rate", [1e3], [1e4]),
    ],
)
@pytest.mark.parametrize("epsilon", [1e-6, 1.0, 1e5])
def test_the_parameters_edges_fit_and_what_lies_beyond_is_refused_before_the_budget(
    binary_split, parameter, edges, beyond, epsilon
):
    X, y, X_public, _ = binary_split
    for value in edges:  # finite steps, no warning (warnings are errors in the suite)
        fitted = model(epsilon=epsilon, **{parameter: value}).fit(X, y, X_public=X_public)
        assert np.isfinite(fitted.predict_proba(X_public)).all()
    accountant = RDPAccountant(epsilon=10.0, delta=1e-5)
    for value in beyond:  # a softmax gradient's norm is at most sqrt(2): a larger clip would only add noise
        with pytest.raises(InvalidParameterError, match=f"'{parameter}' parameter"):
            model(epsilon=1.0, accountant=accountant, **{parameter: value}).fit(X, y, X_public=X_public)
    assert accountant.spent_epsilon == 0.0


def test_public_rows_that_no_feature_splits_warn_that_the_model_learns_the_balance_only(binary_split):
    X, y, X_public, _ = binary_split
    with pytest.warns(UserWarning, match=r"no feature splits the public rows .* Lower min_bin_rows") as caught:
        boost = model().fit(X, y, X_public=np.repeat(X_public[:1], 50, axis=0))  # one public row, fifty times
    assert caught[0].filename == __file__  # it points at the caller
    proba = boost.predict_proba(X)
    np.testing.assert_allclose(proba, np.broadcast_to(proba[0], proba.shape))
    with pytest.warns(UserWarning, match="no feature splits"):  # bins larger than the private rows
        model(min_bin_rows=2 * len(X)).fit(X, y, X_public=X_public)
