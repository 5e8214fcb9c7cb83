"""Partitions of the rows cut from the public rows alone: one feature's bins, or the leaves of a random tree.

Each boosting round of :class:`~skpate.pool.NoisyBoostingClassifier` releases noisy per-cell sums over one
partition. Every partition here is a function of the public rows and a random generator only, so it is free and
the same for any two private datasets; each has ``n_cells`` and ``apply(Z)``, the cell of every row.
"""

import numpy as np

__all__ = ["FeatureBins", "PublicTree", "grow_public_tree", "public_bin_edges"]

#: Most bins per feature: every bin holds at least ``n_public / MAX_BINS`` public rows.
MAX_BINS = 256


def public_bin_edges(Z_public, min_rows, max_bins=MAX_BINS):
    """Per column of the public rows, the lower edges of its bins: ``x`` is in bin ``searchsorted(edges, x, "right")``.

    The column's sorted distinct values are grouped from the smallest so that every bin holds at least
    ``min_rows`` public rows (and at least ``n_public / max_bins``, so at most ``max_bins`` bins); a value is never
    split between bins, so a frequent value (a category code, a zero) gets a bin of its own and rare ones are
    merged. Public rows only: free.

    Parameters
    ----------
    Z_public : ndarray of shape (n_public, n_features)
    min_rows : float
    max_bins : int, default=MAX_BINS

    Returns
    -------
    edges : list of ndarray
        One per column; empty where the column's public values fit in one bin.
    """
    min_rows = max(min_rows, Z_public.shape[0] / max_bins, 1.0)
    edges = []
    for column in np.asarray(Z_public, dtype=np.float64).T:
        values, counts = np.unique(column, return_counts=True)
        seen = np.cumsum(counts)  # public rows up to and including each value
        cuts, start = [], 0
        while True:
            last = np.searchsorted(seen, start + min_rows)  # the value at which the bin reaches min_rows
            if last >= values.size - 1 or seen[-1] - seen[last] < min_rows:
                break  # what is left joins this bin
            cuts.append(values[last + 1])
            start = seen[last]
        edges.append(np.asarray(cuts, dtype=np.float64))
    return edges


class FeatureBins:
    """The bins of one feature: cell ``searchsorted(edges, Z[:, feature], "right")``.

    Parameters
    ----------
    feature : int
    edges : ndarray
        The lower edges of the bins but the first (from :func:`public_bin_edges`).
    """

    def __init__(self, feature, edges):
        self.feature = int(feature)
        self.edges = np.asarray(edges, dtype=np.float64)

    @property
    def n_cells(self):
        return self.edges.size + 1

    def apply(self, Z):
        """The cell of every row of ``Z`` (a dense 2-d float array)."""
        return np.searchsorted(self.edges, Z[:, self.feature], side="right")


class PublicTree:
    """A binary tree of axis splits ``Z[:, feature] < threshold`` (left) with numbered leaves.

    Parameters
    ----------
    feature, threshold, left, right : ndarray of shape (n_nodes,)
        Node ``i`` splits on ``feature[i]`` at ``threshold[i]`` into nodes ``left[i]`` and ``right[i]``;
        ``feature[i] == -1`` marks a leaf. Node 0 is the root.
    """

    def __init__(self, feature, threshold, left, right):
        self.feature = np.asarray(feature, dtype=np.intp)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.asarray(left, dtype=np.intp)
        self.right = np.asarray(right, dtype=np.intp)
        is_leaf = self.feature < 0
        self.leaf_ = np.where(is_leaf, np.cumsum(is_leaf) - 1, -1)  # node -> cell

    @property
    def n_cells(self):
        return int((self.feature < 0).sum())

    def apply(self, Z):
        """The leaf (cell) of every row of ``Z`` (a dense 2-d float array)."""
        node = np.zeros(Z.shape[0], dtype=np.intp)
        inner = np.flatnonzero(self.feature[node] >= 0)
        while inner.size:  # one level per pass: at most the tree's depth
            at = node[inner]
            below = Z[inner, self.feature[at]] < self.threshold[at]
            node[inner] = np.where(below, self.left[at], self.right[at])
            inner = inner[self.feature[node[inner]] >= 0]
        return self.leaf_[node]


def _median_cut(column, min_rows):
    """The threshold (a public value) that splits ``column`` closest to half with ``min_rows`` on each side, or None."""
    values, counts = np.unique(column, return_counts=True)
    below = np.cumsum(counts)[:-1]  # rows strictly below values[1:]
    valid = (below >= min_rows) & (column.size - below >= min_rows)
    if not valid.any():
        return None
    best = np.flatnonzero(valid)[np.argmin(np.abs(below[valid] - column.size / 2))]
    return values[best + 1]


def grow_public_tree(Z_public, features, max_depth, min_rows, rng, weights=None):
    """A random tree on the public rows: each node splits a random feature at its public rows' median.

    A node is split while it is above ``max_depth`` and holds at least ``2 min_rows`` public rows: the features are
    tried in a random order (drawn in proportion to ``weights`` without replacement) and the first whose median cut
    leaves ``min_rows`` public rows on each side is taken (a node where none does is a leaf). The leaves hold about
    equal numbers of public rows, ``min_rows`` at least. No label and no private row is read: the tree is a function
    of the public rows, ``weights`` and ``rng``.

    Parameters
    ----------
    Z_public : ndarray of shape (n_public, n_features)
    features : array-like of int
        The features a split may use.
    max_depth : int
    min_rows : float
        Public rows a leaf holds at least.
    rng : numpy.random.Generator
    weights : array-like of shape (len(features),), default=None
        Non-negative; None draws the features uniformly. Each is floored at ``1e-9`` of the largest, so every
        feature can be drawn.

    Returns
    -------
    tree : PublicTree
    """
    Z_public = np.asarray(Z_public, dtype=np.float64)
    features = np.asarray(features, dtype=np.intp)
    if weights is None or not np.max(weights) > 0:
        weights = np.ones(features.size)
    weights = np.maximum(np.asarray(weights, dtype=np.float64), 1e-9 * np.max(weights))
    weights /= weights.sum()
    feature, threshold, left, right = [-1], [0.0], [-1], [-1]
    stack = [(0, np.arange(Z_public.shape[0]), 0)]
    while stack:
        node, rows, depth = stack.pop()
        if depth >= max_depth or rows.size < 2 * min_rows:
            continue
        for j in rng.choice(features, size=features.size, replace=False, p=weights):
            cut = _median_cut(Z_public[rows, j], min_rows)
            if cut is None:
                continue
            below = Z_public[rows, j] < cut
            children = len(feature), len(feature) + 1
            feature[node], threshold[node], left[node], right[node] = j, cut, *children
            for child, part in zip(children, (rows[below], rows[~below])):
                feature.append(-1), threshold.append(0.0), left.append(-1), right.append(-1)
                stack.append((child, part, depth + 1))
            break
    return PublicTree(feature, threshold, left, right)
