"""CellCountClassifier: k-means cells of the public pool, noisy class counts of the private rows in them."""

import pickle

import numpy as np
import pytest

from skpate import CellCountClassifier
from skpate.pool.cells import KMeansCells
from skpate.pool.count_model import noisy_counts


@pytest.fixture(scope="module")
def data(binary_string_split):
    """conftest's split with string labels."""
    return binary_string_split


def test_cell_counts_spend_the_budget_with_the_stated_noise(data, reference_gdp_mu):
    X, y, X_public, X_eval, y_eval = data
    cells = CellCountClassifier(epsilon=0.5, classes=["neg", "pos"], n_cells=30, n_partitions=6, random_state=0)
    cells.fit(X, y, X_public=X_public)
    assert cells.privacy_spent_ == (0.5, 1e-5)
    assert cells.sigma_ == pytest.approx(np.sqrt(2 * 6) / reference_gdp_mu(0.5, 1e-5), rel=1e-6)
    assert cells.score(X_eval, y_eval) > 0.75
    assert set(cells.predict(X_eval)) <= {"neg", "pos"}


def test_cell_counts_under_add_remove_have_the_noise_of_their_sensitivity(data, reference_gdp_mu):
    X, y, X_public, _, _ = data
    params = dict(epsilon=0.5, classes=["neg", "pos"], n_cells=30, n_partitions=6, random_state=0)
    cells = CellCountClassifier(neighboring="add-remove", **params).fit(X, y, X_public=X_public)
    replace = CellCountClassifier(**params).fit(X, y, X_public=X_public)
    assert cells.privacy_spent_ == (0.5, 1e-5) and cells.privacy_report_.neighboring == "add-remove"
    assert cells.sigma_ == pytest.approx(np.sqrt(6) / reference_gdp_mu(0.5, 1e-5), rel=1e-6)
    assert cells.sigma_ == pytest.approx(replace.sigma_ / np.sqrt(2))
    # Adding one row moves each of the 6 tables by one count: sqrt(6), attained.
    codes = (y == "pos").astype(int)
    exact = noisy_counts(cells.model_.partition, X, codes, 2, 0.0, np.random.default_rng(0))
    added = noisy_counts(
        cells.model_.partition, np.vstack([X, X[:1]]), np.r_[codes, codes[:1]], 2, 0.0, np.random.default_rng(0)
    )
    assert np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(exact, added))) == pytest.approx(np.sqrt(6))


def test_cell_partitions_depend_on_public_rows_only(data):
    X, y, X_public, _, _ = data
    params = dict(epsilon=1.0, classes=["neg", "pos"], n_cells=30, n_partitions=3, random_state=0)
    first = CellCountClassifier(**params).fit(X, y, X_public=X_public)
    other = CellCountClassifier(**params).fit(X[::-1] + 1.0, y, X_public=X_public)  # other private rows
    for a, b in zip(first.model_.partition.kmeans_, other.model_.partition.kmeans_):
        np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    # The published model holds centers of public rows and noisy counts, not a private row.
    blob = pickle.dumps(first.model_)
    assert X[0].tobytes() not in blob and X[1].tobytes() not in blob


def test_replacing_one_row_moves_the_cell_tables_by_at_most_the_sensitivity(data):
    X, y, X_public, _, _ = data
    codes = (y == "pos").astype(int)
    cells = KMeansCells(n_cells=25, n_partitions=4, random_state=0).fit(X_public)
    exact = noisy_counts(cells, X, codes, 2, 0.0, np.random.default_rng(0))
    X2, codes2 = X.copy(), codes.copy()
    X2[0], codes2[0] = X_public[0] + 100.0, 1 - codes[0]  # far away: another cell in every partition
    moved = noisy_counts(cells, X2, codes2, 2, 0.0, np.random.default_rng(0))
    assert np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(exact, moved))) == pytest.approx(np.sqrt(2 * 4))
    assert all(table.sum() == len(X) for table in exact)


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(n_cells=1000), "n_cells=1000"),
        (dict(classes=["neg", "maybe"]), "not in classes"),
    ],
)
def test_cell_counts_name_the_problem(data, params, message):
    X, y, X_public, _, _ = data
    with pytest.raises(ValueError, match=message):
        CellCountClassifier(**{"classes": ["neg", "pos"], "n_cells": 30, **params}).fit(X, y, X_public=X_public)
    with pytest.raises(ValueError, match="CellCountClassifier requires y"):
        CellCountClassifier(classes=["neg", "pos"]).fit(X, None, X_public=X_public)
