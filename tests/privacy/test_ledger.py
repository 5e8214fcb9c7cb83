"""PrivacyLedger: one budget in a database, for every process, copy and day; on SQLite and on PostgreSQL."""

import copy
import json
import os
import pickle
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import unicodedata
import uuid
from contextlib import contextmanager

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.pool import NullPool

import skpate
from skpate import NoisyGDClassifier
from skpate.__main__ import main
from skpate.privacy import BudgetExceededError, Cost, LedgerLockTimeoutError, PrivacyLedger, RDPAccountant, gdp_mu
from skpate.privacy import ledger as ledger_module


@pytest.fixture(scope="module")
def data(three_class_split_small):
    return three_class_split_small


def gd(ledger, epsilon=0.3, **params):
    return NoisyGDClassifier(epsilon=epsilon, classes=[0, 1, 2], n_iter=5, accountant=ledger, **params)


#: The child processes import this skpate, installed or not.
CHILD_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [os.path.dirname(os.path.dirname(skpate.__file__)), os.environ.get("PYTHONPATH", "")]
    ),
}


def fit_cost(epsilon):
    """The cost of a Gaussian fit calibrated to ``epsilon`` at delta 1e-5."""
    return Cost(mu_squared=float(gdp_mu(epsilon, 1e-5)) ** 2)


def sequential_admissions(epsilon_budget, fit_epsilon, attempts):
    """How many fits the in-memory accountant admits, one after the other: what any ledger must admit."""
    accountant, admitted = RDPAccountant(epsilon=epsilon_budget, delta=1e-5), 0
    for _ in range(attempts):
        try:
            accountant.reserve(fit_cost(fit_epsilon))
            admitted += 1
        except BudgetExceededError:
            pass
    return admitted, accountant.spent_epsilon


@contextmanager
def budget_locked(url, dataset):
    """Another process's transaction holding the lock on the budget of ``dataset`` until the block ends.

    Its uncommitted write empties the filters in force: a reader must not see it.
    """
    alive = "UPDATE skpate_budgets SET alive = '[]' WHERE dataset = :dataset"
    if "://" not in url:  # SQLite: the database's write lock, as a reservation's BEGIN IMMEDIATE takes it
        holder = sqlite3.connect(url, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        holder.execute(alive.replace(":dataset", "?"), (dataset,))
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as holder:
            # The server ends this session after 20 s: a ledger without a lock timeout would wait forever.
            holder.exec_driver_sql("SET idle_in_transaction_session_timeout = '20s'")
            lock = "SELECT 1 FROM skpate_budgets WHERE dataset = :dataset FOR UPDATE"
            holder.execute(text(lock), {"dataset": dataset})
            holder.execute(text(alive), {"dataset": dataset})
            yield
            holder.rollback()
    finally:
        engine.dispose()


# ------------------------------------------------------------ the budget is fixed when it is created


def test_the_budget_is_fixed_at_creation_and_cannot_be_raised_by_reopening(ledger_url, dataset_name):
    PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=1.0, delta=1e-5)
    reopened = PrivacyLedger(ledger_url, dataset=dataset_name)
    assert (reopened.epsilon, reopened.delta) == (1.0, 1e-5)
    assert PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=1.0, delta=1e-5).epsilon == 1.0
    # Some of its numbers check it too (epsilon=1.0 alone was refused for a missing delta).
    assert PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=1.0).delta == 1e-5
    assert PrivacyLedger(ledger_url, dataset=dataset_name, delta=1e-5).epsilon == 1.0
    assert PrivacyLedger(ledger_url, dataset=dataset_name, orders=reopened.orders.tolist()).epsilon == 1.0
    for numbers in [
        dict(epsilon=2.0, delta=1e-5),
        dict(epsilon=1.0, delta=1e-3),
        dict(epsilon=1.0, delta=1e-5, orders=[2.0, 8.0]),
        dict(epsilon=2.0),
        dict(delta="1e-5"),
    ]:
        with pytest.raises(ValueError, match="fixed when its ledger was created"):
            PrivacyLedger(ledger_url, dataset=dataset_name, **numbers)
    with pytest.raises(LookupError, match="create it with"):
        PrivacyLedger(ledger_url, dataset=dataset_name + "-never-created")


def test_postgresql_reservations_are_durable_and_read_committed_whatever_the_session_defaults(dataset_name):
    """Under a server's synchronous_commit=off a reservation was lost in a crash after the fit had drawn its noise;
    under repeatable read or serializable, concurrent reservations failed with bare serialization errors."""
    url = os.environ.get("SKPATE_TEST_POSTGRESQL_URL")
    if not url:
        pytest.skip("no PostgreSQL server: SKPATE_TEST_POSTGRESQL_URL is not set (.ci/postgres starts one)")
    options = "options=-c%20synchronous_commit%3Doff%20-c%20default_transaction_isolation%3Dserializable"
    ledger = PrivacyLedger(f"{url}{'&' if '?' in url else '?'}{options}", dataset=dataset_name, epsilon=1.0, delta=1e-5)
    with ledger._connection().connect() as plain:  # the session's defaults, as the server was told
        assert plain.exec_driver_sql("SHOW synchronous_commit").scalar() == "off"
    with ledger._transaction() as (conn, _):
        assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"
        assert conn.exec_driver_sql("SHOW transaction_isolation").scalar() == "read committed"
        assert conn.exec_driver_sql("SHOW lock_timeout").scalar() == "1min"  # SQLite's timeout: one constant
    with ledger._transaction(write=False) as (conn, _):  # a read: one snapshot of the budget and its charges
        assert conn.exec_driver_sql("SHOW transaction_isolation").scalar() == "repeatable read"
        assert conn.exec_driver_sql("SHOW transaction_read_only").scalar() == "on"
        assert conn.exec_driver_sql("SHOW lock_timeout").scalar() == "1min"
    ledger.settle(ledger.reserve(Cost(mu_squared=0.01)), Cost(mu_squared=0.01))
    assert ledger.n_fits == 1


def test_a_lock_held_too_long_is_a_clear_error_and_charges_nothing(ledger_url, dataset_name, monkeypatch, capsys):
    """A process stopped inside its transaction blocked every other process forever on PostgreSQL; on SQLite
    they failed after a minute with a bare 'database is locked'."""
    monkeypatch.setattr(ledger_module, "LOCK_TIMEOUT", 1.0)
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=1.0, delta=1e-5)
    reservation = ledger.reserve(fit_cost(0.1), label="a fit that died")
    with budget_locked(ledger_url, dataset_name):
        start = time.monotonic()
        with pytest.raises(LedgerLockTimeoutError) as caught:
            ledger.reserve(fit_cost(0.5), label="a fit")
        assert 0.9 < time.monotonic() - start < 10
        # The command line says the same, without a traceback.
        assert main(["ledger", "resolve", ledger_url, "--dataset", dataset_name, "--id", str(reservation)]) == 2
        assert "another process holds the lock" in capsys.readouterr().err
    assert isinstance(caught.value, TimeoutError) and isinstance(caught.value.__cause__, OperationalError)
    message = str(caught.value)
    assert repr(dataset_name) in message and "another process holds the lock" in message
    assert "stopped inside its reservation" in message and "pending()" in message and "retry" in message
    # Rolled back: nothing was charged, nothing was closed.
    (entry,) = ledger.history()
    assert entry["id"] == reservation and entry["status"] == "reserved"
    assert ledger.spent_epsilon == pytest.approx(entry["epsilon"])
    ledger.reserve(fit_cost(0.5))  # the lock released, the next reservation is admitted
    assert ledger.n_fits == 2


def test_a_failure_that_is_no_lock_wait_passes_through_unchanged(ledger_url, dataset_name, tmp_path):
    """A lost connection is an OperationalError too: only the lock timeouts are the ledger's own error."""
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=1.0, delta=1e-5)
    if "://" in ledger_url:
        gone = make_url(ledger_url).set(port=1)  # no server there: connection refused
    else:
        gone = str(tmp_path / "no-such-directory" / "budget.db")  # unable to open database file
    ledger.url, ledger._engine = ledger_module.database_url(gone), None  # the database is gone
    for read in (ledger.reserve, lambda _: ledger.spent_epsilon):
        with pytest.raises(OperationalError) as caught:
            read(fit_cost(0.5))
        assert not isinstance(caught.value, LedgerLockTimeoutError)


# ------------------------------------------------------------ reads take no lock


def test_reads_take_no_lock_and_read_what_is_committed(ledger_url, dataset_name, monkeypatch):
    """Reads took the reservation's lock: they waited behind fits, and a read-only role could not read at all."""
    monkeypatch.setattr(ledger_module, "LOCK_TIMEOUT", 5.0)
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=2.0, delta=1e-5)
    ledger.settle(ledger.reserve(fit_cost(0.5), label="a fit"), fit_cost(0.5))
    spent, filters, history = ledger.spent_epsilon, ledger.filters, ledger.history()
    with budget_locked(ledger_url, dataset_name):  # a reservation in progress, its write not committed
        start = time.monotonic()
        reopened = PrivacyLedger(ledger_url, dataset=dataset_name)
        assert reopened.spent_epsilon == spent and reopened.filters == filters == ledger.filters
        assert reopened.history() == history and reopened.pending() == [] and ledger.n_fits == 1
        assert time.monotonic() - start < 2.5  # at once, not after the lock timeout


def test_a_read_only_sqlite_database_can_be_read(tmp_path, dataset_name, capsys):
    path = tmp_path / "budget.db"
    owner = PrivacyLedger(path, dataset=dataset_name, epsilon=1.0, delta=1e-5)
    owner.settle(owner.reserve(fit_cost(0.3), label="a fit"), fit_cost(0.3))
    content = path.read_bytes()
    url = f"sqlite:///file:{path}?mode=ro&uri=true"
    auditor = PrivacyLedger(url, dataset=dataset_name)
    assert auditor.spent_epsilon == owner.spent_epsilon and auditor.filters == owner.filters
    assert auditor.history() == owner.history() and auditor.pending() == []
    with pytest.raises(OperationalError, match="readonly database"):  # refused by the database, not silently
        auditor.reserve(fit_cost(0.1))
    assert main(["ledger", "show", url]) == 0
    assert f"{dataset_name}: budget epsilon 1 at delta 1e-05; spent" in capsys.readouterr().out
    assert path.read_bytes() == content and owner.n_fits == 1


def test_a_postgresql_role_with_select_only_reads_the_budget(dataset_name, capsys):
    """An auditor's role: SELECT on the ledger's tables and nothing else."""
    url = os.environ.get("SKPATE_TEST_POSTGRESQL_URL")
    if not url:
        pytest.skip("no PostgreSQL server: SKPATE_TEST_POSTGRESQL_URL is not set (.ci/postgres starts one)")
    owner = PrivacyLedger(url, dataset=dataset_name, epsilon=1.0, delta=1e-5)
    owner.settle(owner.reserve(fit_cost(0.3), label="a fit"), fit_cost(0.3))
    role = f"skpate_auditor_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url, poolclass=NullPool)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE ROLE {role} LOGIN")
        conn.exec_driver_sql(f"GRANT SELECT ON skpate_budgets, skpate_charges TO {role}")
    try:
        auditor_url = make_url(url).set(username=role).render_as_string(hide_password=False)
        auditor = PrivacyLedger(auditor_url, dataset=dataset_name)
        assert (auditor.epsilon, auditor.delta) == (1.0, 1e-5)
        assert auditor.spent_epsilon == owner.spent_epsilon and auditor.filters == owner.filters
        assert auditor.history() == owner.history() and auditor.pending() == []
        with pytest.raises(ProgrammingError, match="permission denied"):  # refused by the database, not silently
            auditor.reserve(fit_cost(0.1))
        assert main(["ledger", "show", auditor_url]) == 0
        assert f"{dataset_name}: budget epsilon 1 at delta 1e-05; spent" in capsys.readouterr().out
        assert owner.n_fits == 1
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP OWNED BY {role}")
            conn.exec_driver_sql(f"DROP ROLE {role}")
        admin.dispose()


@pytest.mark.parametrize(
    "url, dataset, numbers, match",
    [
        ("sqlite://", "d", dict(epsilon=1.0, delta=1e-5), "in-memory"),
        ("sqlite:///:memory:", "d", dict(epsilon=1.0, delta=1e-5), "in-memory"),
        ("", "d", dict(epsilon=1.0, delta=1e-5), "url"),
        (None, "d", dict(epsilon=1.0, delta=1e-5), "url"),
        ("FILE", "", dict(epsilon=1.0, delta=1e-5), "dataset"),
        ("FILE", "adult ", dict(epsilon=1.0, delta=1e-5), "dataset must not begin or end with whitespace.*'adult'"),
        ("FILE", "\tadult", dict(epsilon=1.0, delta=1e-5), "dataset must not begin or end with whitespace"),
        ("FILE", "adult\n", dict(epsilon=1.0, delta=1e-5), "dataset must not begin or end with whitespace"),
        ("FILE", "adu\x00lt", dict(epsilon=1.0, delta=1e-5), "control or invisible characters.*'adult'"),
        ("FILE", "adult\u200b", dict(epsilon=1.0, delta=1e-5), "control or invisible characters"),  # zero-width
        ("FILE", "d", dict(epsilon=0.0, delta=1e-5), "epsilon"),
        ("FILE", "d", dict(epsilon=np.inf, delta=1e-5), "epsilon"),
        ("FILE", "d", dict(epsilon=1.0, delta=1.0), "delta"),
    ],
)
def test_bad_ledgers_are_refused_before_anything_is_written(tmp_path, url, dataset, numbers, match):
    path = tmp_path / "budget.db"
    with pytest.raises(ValueError, match=match):
        PrivacyLedger(str(path) if url == "FILE" else url, dataset=dataset, **numbers)
    assert not path.exists()


def test_a_name_that_differs_from_a_budgets_only_in_case_is_refused(ledger_url, dataset_name):
    """'adult' and 'ADULT' made two full budgets for the same private data."""
    name = f"Straße-{dataset_name}"
    PrivacyLedger(ledger_url, dataset=name, epsilon=1.0, delta=1e-5)
    for other in (name.upper(), name.lower(), f"STRASSE-{dataset_name}"):  # casefold: "ß" is "ss"
        with pytest.raises(ValueError, match=f"did you mean {re.escape(repr(name))}.*only for new private data"):
            PrivacyLedger(ledger_url, dataset=other, epsilon=1.0, delta=1e-5)
        with pytest.raises(LookupError, match=f"did you mean {re.escape(repr(name))}"):
            PrivacyLedger(ledger_url, dataset=other)
    names = PrivacyLedger.datasets(ledger_url)
    assert name in names and not {n for n in names if n != name and n.casefold() == name.casefold()}
    assert PrivacyLedger(ledger_url, dataset=name, epsilon=1.0, delta=1e-5).epsilon == 1.0  # the exact name opens
    assert PrivacyLedger(ledger_url, dataset=name + "-2", epsilon=1.0, delta=1e-5).epsilon == 1.0  # a new name
    with pytest.raises(LookupError, match=f"did you mean {re.escape(repr(name))}"):  # whitespace: the same hint
        PrivacyLedger(ledger_url, dataset=f" {name.upper()}\u200b")


def test_names_in_other_unicode_forms_of_the_same_text_are_look_alikes(ledger_url, dataset_name):
    """'café' composed and decomposed (macOS file names are decomposed), fullwidth letters and a no-break space
    made separate budgets: names compare in NFKC, case folded."""
    name = f"café adult-{dataset_name}"
    PrivacyLedger(ledger_url, dataset=name, epsilon=1.0, delta=1e-5)
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "a" <= c <= "z" else c for c in "adult")
    for other in (
        unicodedata.normalize("NFD", name),
        name.replace(" ", "\u00a0"),
        name.replace("adult", fullwidth),
    ):
        assert other != name
        with pytest.raises(ValueError, match=f"did you mean {re.escape(repr(name))}"):
            PrivacyLedger(ledger_url, dataset=other, epsilon=1.0, delta=1e-5)
    assert PrivacyLedger(ledger_url, dataset=name).epsilon == 1.0


def test_a_pickle_of_an_earlier_version_charges_with_this_versions_filters(ledger_url, dataset_name):
    """A ledger pickled by the version before the pure-DP filter held one filter fewer: reserve broke on shapes."""
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=2.0, delta=1e-5)
    state = ledger.__getstate__()
    old = copy.copy(state["_budget"])
    old.limits = old.limits[:-1]  # what the earlier version pickled
    restored = PrivacyLedger.__new__(PrivacyLedger)
    restored.__setstate__({**state, "_budget": old})
    restored.reserve(Cost(pure=((0.5, 1),)), label="fit")
    assert restored.spent_epsilon == ledger.spent_epsilon == 0.5


def test_a_budget_created_before_the_name_rule_still_opens_by_its_exact_name(ledger_url, dataset_name, monkeypatch):
    """Names with surrounding whitespace were accepted before: their budgets (and ``ledger show``) stay readable."""
    name = f"{dataset_name} "
    monkeypatch.setattr(ledger_module, "_visible", lambda name: name)  # the ledger of an earlier version
    PrivacyLedger(ledger_url, dataset=name, epsilon=1.0, delta=1e-5)
    monkeypatch.undo()
    ledger = PrivacyLedger(ledger_url, dataset=name)
    assert ledger.epsilon == 1.0 and ledger.spent_epsilon == 0.0
    assert main(["ledger", "show", str(ledger_url)]) == 0
    with pytest.raises(ValueError, match="must not begin or end with whitespace"):  # numbers could create it
        PrivacyLedger(ledger_url, dataset=name, epsilon=1.0, delta=1e-5)


# ------------------------------------------------------------ the in-memory accountant's rule


def test_the_ledger_admits_and_reports_exactly_as_the_in_memory_accountant(ledger_url, dataset_name):
    rng = np.random.default_rng(0)
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=2.0, delta=1e-5, orders=[4.0, 16.0])
    memory = RDPAccountant(epsilon=2.0, delta=1e-5, orders=[4.0, 16.0])
    costs = [Cost(mu_squared=m) for m in rng.uniform(0.01, 0.3, size=12)] + [Cost(pure=((0.3, 1),))]
    for cost in costs:
        outcomes = []
        for accountant in (ledger, memory):
            try:
                reservation = accountant.reserve(cost, label="fit")
                accountant.settle(reservation, Cost(mu_squared=cost.mu_squared / 2) if not cost.pure else cost)
                outcomes.append("admitted")
            except BudgetExceededError as error:
                outcomes.append(str(error))
        assert outcomes[0] == outcomes[1]
        assert ledger.spent_epsilon == pytest.approx(memory.spent_epsilon, rel=1e-12, abs=1e-15)
        assert ledger.filters == memory.filters
    assert ledger.n_fits == memory.n_fits and ledger.spent_epsilon <= ledger.epsilon
    assert [e["epsilon"] for e in ledger.history()] == pytest.approx([e["epsilon"] for e in memory.history()])


def test_a_budget_stored_before_the_pure_filter_reads_and_charges_as_before(ledger_url, dataset_name):
    """Its charge vectors and filters are one entry short (no pure filter): they read as charges without a pure part
    and a pure filter out of force, and the next reservation writes the whole vector."""
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=2.0, delta=1e-5, orders=[4.0, 16.0])
    memory = RDPAccountant(epsilon=2.0, delta=1e-5, orders=[4.0, 16.0])
    first = ledger.reserve(Cost(mu_squared=0.05), label="fit")
    ledger.settle(ledger.reserve(Cost(mu_squared=0.1), label="fit"), Cost(mu_squared=0.1))
    memory.reserve(Cost(mu_squared=0.05)), memory.reserve(Cost(mu_squared=0.1))
    before = ledger.spent_epsilon
    engine = create_engine(ledger.url, poolclass=NullPool)
    with engine.begin() as conn:  # what the ledger of an earlier version stored for this dataset
        for table, key, column in (
            ("skpate_charges", "id", "charge"),
            ("skpate_charges", "id", "reserved"),
            ("skpate_budgets", "dataset", "alive"),
        ):
            rows = conn.execute(text(f"SELECT {key}, {column} FROM {table} WHERE dataset = :d"), {"d": dataset_name})
            for value_key, value in rows.all():
                shorter = json.dumps(json.loads(value)[:-1])
                conn.execute(text(f"UPDATE {table} SET {column} = :v WHERE {key} = :k"), {"v": shorter, "k": value_key})
    engine.dispose()
    reopened = PrivacyLedger(ledger_url, dataset=dataset_name)
    assert reopened.spent_epsilon == before and reopened.filters == [f for f in memory.filters if f != "pure"]
    reopened.settle(first, Cost(mu_squared=0.05))  # a reservation stored before closes
    reopened.reserve(Cost(mu_squared=0.05), label="fit")
    memory.reserve(Cost(mu_squared=0.05))
    assert reopened.spent_epsilon == pytest.approx(memory.spent_epsilon, rel=1e-12)
    assert reopened.filters == [f for f in memory.filters if f != "pure"]  # the pure filter stays out of force


def test_a_fit_the_budget_cannot_cover_is_refused_before_it_touches_the_data(ledger_url, dataset_name, data):
    X, y, X_pub = data
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=0.5, delta=1e-5)
    gd(ledger, epsilon=0.4).fit(X, y, X_public=X_pub)

    class Untouchable(np.ndarray):  # any read of a private row would raise
        def __getitem__(self, key):
            raise AssertionError("the private rows were read")

    with pytest.raises(BudgetExceededError, match="would exceed the budget 0.5"):
        gd(ledger, epsilon=0.4).fit(X.view(Untouchable), y, X_public=X_pub)
    assert ledger.n_fits == 1 and ledger.spent_epsilon <= 0.5


def test_history_records_every_charge_without_private_data(ledger_url, dataset_name, data):
    X, y, X_pub = data
    X = X.copy()
    X[0, 0] = 987654.321  # a marker value in the private rows
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=3.0, delta=1e-5)
    gd(ledger, epsilon=0.5).fit(X, y, X_public=X_pub)
    (entry,) = ledger.history()
    assert entry["status"] == "settled" and entry["label"].startswith("NoisyGDClassifier")
    assert json.loads(entry["params"])["epsilon"] == 0.5 and "accountant" not in json.loads(entry["params"])
    assert 0.5 < entry["epsilon"] < 0.7  # epsilon 0.5 at delta 1e-5, converted at the filters' delta 5e-6
    assert entry["pid"] == os.getpid() and entry["time"].endswith("+00:00")
    assert "987654" not in repr(ledger.history())
    if ledger_url.endswith(".db"):
        with open(ledger_url, "rb") as database:
            assert b"987654" not in database.read()


# ------------------------------------------------------------ copies are handles


def test_pickles_copies_and_clones_are_handles_to_the_same_budget(ledger_url, dataset_name):
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=1.0, delta=1e-5)
    handles = [pickle.loads(pickle.dumps(ledger)), copy.copy(ledger), copy.deepcopy(ledger), clone(ledger)]
    ledger.reserve(fit_cost(0.9))
    for handle in handles:
        assert handle.n_fits == 1 and handle.spent_epsilon == ledger.spent_epsilon
        with pytest.raises(BudgetExceededError):
            handle.reserve(fit_cost(0.9))  # one budget: the review's two 0.9 fits under 1.0 cannot happen
    assert ledger.n_fits == 1


def test_a_parallel_grid_search_charges_each_fit_once(ledger_url, dataset_name, data):
    X, y, X_pub = data
    X_all = np.vstack([X, X_pub])
    y_all = np.concatenate([y, -np.ones(len(X_pub), dtype=int)])
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=50.0, delta=1e-5)
    search = GridSearchCV(gd(ledger), {"epsilon": [0.2, 0.4]}, cv=2, n_jobs=2, error_score="raise")
    search.fit(X_all, y_all)
    history = ledger.history()
    assert len(history) == 2 * 2 + 1 and all(e["status"] == "settled" for e in history)
    assert len({e["pid"] for e in history}) >= 2  # the workers charged the same rows
    expected = RDPAccountant(epsilon=50.0, delta=1e-5)
    for epsilon in [0.2, 0.2, 0.4, 0.4, search.best_params_["epsilon"]]:
        expected.reserve(fit_cost(epsilon))
    assert ledger.spent_epsilon == pytest.approx(expected.spent_epsilon, rel=1e-9)


# ------------------------------------------------------------ many processes, and a killed one

WORKER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from sklearn.datasets import make_classification
    from skpate import NoisyGDClassifier
    from skpate.privacy import BudgetExceededError, PrivacyLedger

    url, dataset, start, attempts = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    X, y = make_classification(n_samples=400, n_features=5, random_state=0)
    ledger = PrivacyLedger(url, dataset=dataset)
    time.sleep(max(start - time.time(), 0))  # every process starts fitting at the same moment
    admitted = 0
    for _ in range(attempts):
        try:
            NoisyGDClassifier(epsilon=0.3, classes=[0, 1], n_iter=3, accountant=ledger).fit(
                X[:300], y[:300], X_public=X[300:])
            admitted += 1
        except BudgetExceededError:
            pass
    print(admitted)
    """
)


def test_concurrent_processes_admit_what_a_sequential_run_admits(ledger_url, dataset_name, tmp_path):
    n_processes, attempts = 8, 4
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=2.0, delta=1e-5)
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    start = time.time() + 8.0  # after every interpreter has imported skpate
    workers = [
        subprocess.Popen(
            [sys.executable, str(script), ledger_url, dataset_name, str(start), str(attempts)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=CHILD_ENV,
        )
        for _ in range(n_processes)
    ]
    outputs = [worker.communicate(timeout=300) for worker in workers]
    assert all(worker.returncode == 0 for worker in workers), [err[-2000:] for _, err in outputs]
    admitted = sum(int(out.split()[-1]) for out, _ in outputs)
    expected, expected_spent = sequential_admissions(2.0, 0.3, n_processes * attempts)
    assert 0 < expected < n_processes * attempts  # the budget runs out during the test
    assert admitted == expected == ledger.n_fits
    assert ledger.spent_epsilon == pytest.approx(expected_spent, rel=1e-9) and ledger.spent_epsilon <= 2.0
    assert len({entry["pid"] for entry in ledger.history()}) > 1


KILLED = textwrap.dedent(
    """
    import sys, time
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.datasets import make_classification
    from skpate import PATEClassifier, GNMax
    from skpate.privacy import PrivacyLedger

    class Sleeper(ClassifierMixin, BaseEstimator):  # a teacher that never finishes: the fit is mid-way
        def fit(self, X, y):
            time.sleep(600)

        def predict(self, X):
            raise NotImplementedError

    X, y = make_classification(n_samples=600, n_features=5, random_state=0)
    ledger = PrivacyLedger(sys.argv[1], dataset=sys.argv[2])
    PATEClassifier(Sleeper(), n_teachers=5, aggregator=GNMax(sigma=20.0), max_queries=10, epsilon=None,
                   classes=[0, 1], accountant=ledger).fit(X[:500], y[:500], X_public=X[500:])
    """
)


def test_a_process_killed_mid_fit_leaves_its_reservation_charged(ledger_url, dataset_name, tmp_path):
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=5.0, delta=1e-5)
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    command = [sys.executable, str(script), ledger_url, dataset_name]
    worker = subprocess.Popen(command, stderr=subprocess.PIPE, env=CHILD_ENV)
    deadline = time.time() + 120
    while not ledger.pending() and time.time() < deadline and worker.poll() is None:
        time.sleep(0.2)
    assert ledger.pending(), worker.stderr.read().decode()[-2000:] if worker.poll() is not None else "timeout"
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    worker.stderr.close()
    # Fail closed: the dead fit's reservation stays charged, visible, and is not refunded by anyone's reads.
    (pending,) = ledger.pending()
    assert pending["pid"] == worker.pid and pending["label"].startswith("PATEClassifier")
    charged = ledger.spent_epsilon
    assert charged == pytest.approx(pending["epsilon"]) and charged > 0
    reopened = PrivacyLedger(ledger_url, dataset=dataset_name)
    assert reopened.pending() == [pending] and reopened.spent_epsilon == charged
    # Resolved explicitly: kept in full by default ...
    reopened.resolve(pending["id"])
    assert ledger.pending() == [] and ledger.history()[0]["status"] == "abandoned"
    assert ledger.spent_epsilon == charged
    with pytest.raises(ValueError, match="already abandoned"):
        ledger.resolve(pending["id"], refund=True)


def test_a_refund_is_an_explicit_statement_of_the_owner(ledger_url, dataset_name):
    ledger = PrivacyLedger(ledger_url, dataset=dataset_name, epsilon=5.0, delta=1e-5)
    reservation = ledger.reserve(fit_cost(1.0), label="a fit that died before releasing anything")
    with pytest.raises(ValueError, match="refund must be True or False"):
        ledger.resolve(reservation, refund="yes")
    ledger.resolve(reservation, refund=True)
    assert ledger.spent_epsilon == 0.0 and ledger.history()[0]["status"] == "refunded"
    with pytest.raises(IndexError, match="no reservation"):
        ledger.resolve(reservation + 1000)
