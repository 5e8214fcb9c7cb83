"""Data shared by the test files, built once per session.

Each fixture is named after what it holds; the arrays are read-only, so a test
that modifies one in place fails instead of changing the data of the tests that
follow (copy first: ``X = X.copy()``). Every split is the private rows (with
labels), then the public rows; where a fixture also returns held-out labels of
the public rows (or a test set), they are for scoring only and are never given
to a fit.
"""

import os
import uuid

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.stats import norm
from sklearn.datasets import make_classification


def _read_only(*arrays):
    for array in arrays:
        array.setflags(write=False)
    return arrays


@pytest.fixture(scope="session")
def three_class_split():
    """1500 rows, 8 features, 3 classes (labels 0, 1, 2): 1200 private rows, then 300 public ones.

    Returns ``X_private, y_private, X_public, y_public`` (``y_public`` for scoring only).
    """
    X, y = make_classification(n_samples=1500, n_features=8, n_informative=5, n_classes=3, random_state=0)
    return _read_only(X[:1200], y[:1200], X[1200:], y[1200:])


@pytest.fixture(scope="session")
def three_class_split_large():
    """3000 rows, 8 features, 3 classes (labels 0, 1, 2): 2000 private rows, then 1000 public ones.

    Returns ``X_private, y_private, X_public, y_public`` (``y_public`` for scoring only).
    """
    X, y = make_classification(n_samples=3000, n_features=8, n_informative=5, n_classes=3, random_state=0)
    return _read_only(X[:2000], y[:2000], X[2000:], y[2000:])


@pytest.fixture(scope="session")
def wide_binary_split():
    """2000 rows, 45 features, 2 classes (labels 0, 1): 1400 private rows, then 600 public ones.

    Returns ``X_private, y_private, X_public``.
    """
    X, y = make_classification(n_samples=2000, n_features=45, n_informative=10, random_state=0)
    return _read_only(X[:1400], y[:1400], X[1400:])


@pytest.fixture(scope="session")
def three_class_split_small():
    """900 rows, 6 features, 3 classes (labels 0, 1, 2): 600 private rows, then 300 public ones.

    Returns ``X_private, y_private, X_public``.
    """
    X, y = make_classification(n_samples=900, n_features=6, n_informative=4, n_classes=3, random_state=0)
    return _read_only(X[:600], y[:600], X[600:])


@pytest.fixture(scope="session")
def binary_split():
    """2000 rows, 6 features, 2 classes (labels 0, 1): 1400 private rows, then 600 public ones.

    Returns ``X_private, y_private, X_public, y_public`` (``y_public`` for scoring only).
    """
    X, y = make_classification(n_samples=2000, n_features=6, n_informative=4, random_state=0)
    return _read_only(X[:1400], y[:1400], X[1400:], y[1400:])


@pytest.fixture(scope="session")
def binary_string_split():
    """3000 rows, 8 features, 2 string classes ("neg", "pos"): 2000 private, 600 public, 400 test rows.

    Returns ``X_private, y_private, X_public, X_test, y_test``.
    """
    X, y = make_classification(n_samples=3000, n_features=8, n_informative=5, random_state=0)
    labels = np.where(y == 1, "pos", "neg")
    return _read_only(X[:2000], labels[:2000], X[2000:2600], X[2600:], labels[2600:])


@pytest.fixture(scope="session")
def adult():
    """UCI Adult as :func:`skpate.datasets.load_adult` returns it: ``(train, test)`` DataFrames.

    Shared: do not modify them (pandas cannot make them read-only); take copies.
    """
    from skpate.datasets import load_adult

    return load_adult()


@pytest.fixture(scope="session")
def adult_small(adult):
    """3000 Adult training rows (private) and 500 test rows as public rows (``y == -1``), raw features.

    Returns ``X, y, X_eval, y_eval``: ``X`` holds the private rows then the public ones; ``X_eval`` and
    ``y_eval`` are 1000 further test rows.
    """
    train, test = adult
    train = train.sample(3000, random_state=0)
    X = pd.concat([train.drop(columns="income"), test.drop(columns="income").iloc[:500]], ignore_index=True)
    y = np.concatenate([train["income"].to_numpy(), np.full(500, -1, dtype=object)])
    return X, y, test.drop(columns="income").iloc[500:1500], test["income"].to_numpy()[500:1500]


@pytest.fixture(scope="session")
def reference_gdp_mu():
    """``mu(epsilon, delta)``: the mu of the mu-GDP that is exactly (epsilon, delta)-DP ([DRS22] Cor. 2.13).

    Solved with scipy's normal cdf and root finder, independently of :mod:`skpate.privacy.gdp`.
    """

    def solve(epsilon, delta):
        def excess(mu):
            return norm.cdf(-epsilon / mu + mu / 2) - np.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2) - delta

        return brentq(excess, 1e-6, 50.0, xtol=1e-14)

    return solve


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_url(request, tmp_path):
    """A database for a PrivacyLedger: a SQLite file, and the PostgreSQL server ``.ci/run`` starts.

    The server's URL comes from ``SKPATE_TEST_POSTGRESQL_URL`` (``bash .ci/postgres`` prints one); without
    it the PostgreSQL case is skipped with that reason. Each test uses its own dataset names on it.
    """
    if request.param == "sqlite":
        return str(tmp_path / "budget.db")
    url = os.environ.get("SKPATE_TEST_POSTGRESQL_URL")
    if not url:
        pytest.skip("no PostgreSQL server: SKPATE_TEST_POSTGRESQL_URL is not set (.ci/postgres starts one)")
    return url


@pytest.fixture
def dataset_name(request):
    """A dataset name of its own for each test, so that tests sharing one server never share a budget."""
    return f"{request.node.name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def mixed_split():
    """A small mixed-type table: two numbers and a city (strings), labels 0, 1, 2; 600 private rows, then 300 public.

    Returns ``X_private, y_private, X_public`` (DataFrames and an int array). Nothing is planted: a test that plants
    a private value (an unseen category, an extreme number) takes a copy (``X = X.copy()``).
    """
    rng = np.random.default_rng(0)
    n = 900
    X = pd.DataFrame(
        {"age": rng.normal(40, 12, n), "income": rng.lognormal(10, 1, n), "city": rng.choice(["P", "L", "N"], n)}
    )
    score = (X["age"] - 40) / 12 + (X["city"] == "P") - (X["city"] == "N") + rng.normal(0, 0.5, n)
    y = np.digitize(score, [-0.5, 0.5])
    X_private, X_public = X.iloc[:600].reset_index(drop=True), X.iloc[600:].reset_index(drop=True)
    (y_private,) = _read_only(y[:600])
    return X_private, y_private, X_public


@pytest.fixture(scope="session")
def error_text():
    """``error_text(error)``: all a user or a log can see of an exception, as one string.

    Its type and message, its formatted traceback (with the chain Python prints) and the message of every
    exception in its ``__cause__`` and ``__context__`` chains, printed or not (a logger or a debugger can reach
    those).
    """
    import traceback

    def text(error):
        parts, seen, todo = [], set(), [error]
        while todo:
            current = todo.pop()
            if current is None or id(current) in seen:
                continue
            seen.add(id(current))
            parts += [type(current).__name__, str(current), repr(current), *map(str, current.args)]
            todo += [current.__cause__, current.__context__]
        parts += traceback.format_exception(error)
        return "\n".join(parts)

    return text
