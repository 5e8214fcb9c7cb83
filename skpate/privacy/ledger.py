"""A privacy budget in a database: one budget per private dataset, shared by processes, jobs and days.

The composition rule is :class:`~skpate.privacy.accountant.BudgetFilters`, the in-memory accountant's;
what this module adds is where its state lives and how concurrent fits take turns. Every reservation
is one transaction that locks the dataset's budget row (``SELECT ... FOR UPDATE`` on a server, ``BEGIN
IMMEDIATE`` on SQLite), reads every charge, and admits the fit only if a filter still has room: fits
that run at once are admitted exactly as if they had come one after the other. Reads take no lock and
write nothing (one read-only snapshot), so an auditor's read-only role or file can read a budget.
"""

import json
import os
import socket
import unicodedata
from contextlib import contextmanager
from urllib.parse import unquote, urlsplit

import numpy as np
from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.pool import NullPool

from .accountant import BudgetAccountant, BudgetFilters, close_charge, now

__all__ = ["LedgerLockTimeoutError", "PrivacyLedger"]

#: Seconds a ledger transaction waits for another process's lock on a budget before it gives up.
LOCK_TIMEOUT = 60.0


class LedgerLockTimeoutError(TimeoutError):
    """Another process held the lock on a dataset's budget longer than ``LOCK_TIMEOUT`` (60 s).

    The transaction that waited was rolled back: nothing was charged, and a reservation it was to close stays
    open, charged in full. Retry; if it lasts, a
    process is stopped inside a ledger transaction (a debugger, ``SIGSTOP``, a hung client).
    """


def _lock_timed_out(exc):
    """Whether ``exc`` is a lock wait that expired, not any other error (a lost connection is one too)."""
    if getattr(exc.orig, "sqlstate", None) == "55P03":  # PostgreSQL: lock_not_available
        return True
    return str(exc.orig).startswith(("database is locked", "database table is locked"))  # SQLite


_metadata = MetaData()

budgets = Table(
    "skpate_budgets",
    _metadata,
    Column("dataset", String(200), primary_key=True),
    Column("epsilon", Float(53), nullable=False),
    Column("delta", Float(53), nullable=False),
    Column("orders", Text, nullable=False),  # JSON list, fixed at creation
    Column("alive", Text, nullable=False),  # JSON list of bool: the filters still in force
    Column("created_at", String(40), nullable=False),
)

charges = Table(
    "skpate_charges",
    _metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dataset", String(200), ForeignKey("skpate_budgets.dataset"), nullable=False, index=True),
    Column("reserved_at", String(40), nullable=False),
    Column("closed_at", String(40)),
    Column("label", Text, nullable=False),
    Column("params", Text, nullable=False),
    # Charge vectors as JSON (Python's float repr round-trips exactly): mu^2, then RDP at each order.
    Column("reserved", Text, nullable=False),
    Column("charge", Text, nullable=False),
    Column("epsilon", Float(53), nullable=False),
    Column("status", String(20), nullable=False),
    Column("host", String(200), nullable=False),
    Column("pid", Integer, nullable=False),
)

#: Charges that count against the budget; ``cancelled`` and ``refunded`` charges are zero vectors.
STATUSES = ("reserved", "settled", "cancelled", "abandoned", "refunded")


def database_url(url):
    """A SQLAlchemy URL from ``url``: a plain file path is a SQLite database (created if missing)."""
    if isinstance(url, URL):
        url = url.render_as_string(hide_password=False)
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str) or not url:
        raise ValueError(f"url must be a file path or a SQLAlchemy URL (e.g. 'sqlite:///budget.db'), got {url!r}.")
    if "://" not in url:
        url = "sqlite:///" + os.path.abspath(os.path.expanduser(url))
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:"):
        raise ValueError(
            "an in-memory SQLite database lives and dies with one connection, so its budget would be lost; give "
            "the ledger a file, e.g. PrivacyLedger('budget.db', ...)."
        )
    return parsed


def _sqlite_serialized(engine):
    """Make every SQLite transaction ``BEGIN IMMEDIATE``: it takes the write lock before its first read.

    pysqlite's own transaction handling begins lazily, at the first write, so two processes could
    both read the same charges before either writes; SQLAlchemy's documented recipe takes over. A
    read (execution option ``skpate_read``) is a deferred ``BEGIN``: one consistent snapshot, no write lock.
    """

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # no implicit BEGIN from the driver

    @event.listens_for(engine, "begin")
    def _begin(connection):
        read = connection.get_execution_options().get("skpate_read")
        connection.exec_driver_sql("BEGIN" if read else "BEGIN IMMEDIATE")


def _vector(text):
    return np.asarray(json.loads(text), dtype=float)


def _text(vector):
    return json.dumps([float(x) for x in vector])


def _visible(name):
    """``name`` without control or invisible characters (Unicode Cc, Cf) and surrounding whitespace."""
    return "".join(c for c in name if unicodedata.category(c) not in ("Cc", "Cf")).strip()


def _name_key(name):
    """What two names that look alike share: visible characters, Unicode compatibility forms (NFKC: composed accents,
    fullwidth letters, a no-break space), case folded. Letters of other scripts that look alike are not matched."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", _visible(name)).casefold())


def _filters(row):
    return BudgetFilters(row.epsilon, row.delta, _vector(row.orders), owner="PrivacyLedger")


class PrivacyLedger(BudgetAccountant):
    """A privacy budget kept in a database: the same budget for every process, job and colleague.

    Use it wherever ``accountant=`` is taken. The budget of ``dataset`` is
    fixed when the ledger is created (the first ``PrivacyLedger(url,
    dataset, epsilon=..., delta=...)``); later handles open it with the same
    numbers or none, and other numbers are refused. Each fit reserves its
    a-priori cost in one transaction before it reads a private row, and
    settles it after. Concurrent fits, in any processes sharing the database,
    are admitted as if they had come one after the other, by the in-memory
    :class:`~skpate.privacy.RDPAccountant`'s exact rule
    (:class:`~skpate.privacy.accountant.BudgetFilters`).

    A fit that dies between reserve and settle (a killed process, a lost
    machine) leaves its reservation charged: fail closed. :meth:`pending`
    lists such reservations and :meth:`resolve` closes them explicitly;
    nothing is refunded silently. A pickled, copied or cloned ledger is a
    handle to the same rows, never a second budget.

    Parameters
    ----------
    url : str or path-like
        A file path (a SQLite database, created if missing: no server), or any
        SQLAlchemy URL, e.g. ``"sqlite:///budget.db"`` or
        ``"postgresql+psycopg://user@host/db"`` for a team. A password in the
        URL is never printed, but a pickle of the ledger (or of an estimator
        holding it, as joblib workers receive) keeps the URL to reconnect:
        give the password to the driver instead (``PGPASSWORD`` or a
        ``.pgpass`` file for PostgreSQL) to keep it out of both.
    dataset : str
        The name of the private dataset the budget protects.
    epsilon, delta : float, optional
        The budget. Required to create it; any of them (and ``orders``) given
        for an existing budget must be its numbers.
    orders : array-like of float > 1, optional
        Orders of the Renyi filters, fixed at creation (default: the budget's
        :func:`~skpate.privacy.accountant.default_order`).

    Attributes
    ----------
    epsilon, delta : float
        The budget, as created.
    orders : ndarray
        The Renyi filters' orders, as created.

    See Also
    --------
    skpate.privacy.RDPAccountant : the same budget in one process's memory.

    Examples
    --------
    >>> import os, tempfile
    >>> from skpate.privacy import PrivacyLedger
    >>> path = os.path.join(tempfile.mkdtemp(), "budget.db")
    >>> ledger = PrivacyLedger(path, dataset="patients", epsilon=3.0, delta=1e-5)
    >>> PrivacyLedger(path, dataset="patients").spent_epsilon  # tomorrow, in another process
    0.0
    """

    def __init__(self, url, dataset, epsilon=None, delta=None, orders=None):
        self.url = database_url(url)
        if not isinstance(dataset, str) or not dataset or len(dataset) > 200:
            raise ValueError(f"dataset must be a non-empty name of at most 200 characters, got {dataset!r}.")
        clean = _visible(dataset)
        # A name that looks like another must not create a second budget; one made before this rule still opens
        # by its exact name (without numbers: they could create it).
        if clean != dataset and epsilon is not None and delta is not None:
            raise ValueError(
                f"dataset must not begin or end with whitespace nor hold control or invisible characters, got "
                f"{dataset!r}: a name that looks the same would be another budget. Give dataset={clean!r}."
            )
        self.dataset = dataset
        self._engine, self._engine_pid = None, None
        self._open(epsilon, delta, orders)

    # ---------------------------------------------------------- the database

    def _connection(self):
        """This process's engine: engines are not shared across processes (a fork gets its own)."""
        if self._engine is None or self._engine_pid != os.getpid():
            sqlite = self.url.get_backend_name() == "sqlite"
            # SQLite: wait up to a minute for another process's transaction instead of failing at once.
            # No pool: a fit opens a few short transactions, and a handle dropped never leaves a connection open.
            # PostgreSQL: the row lock is the whole design; under repeatable read or serializable (a server's
            # default may be either) concurrent reservations failed with bare serialization errors.
            options = {"isolation_level": "READ COMMITTED"} if self._postgresql else {}
            connect = {"timeout": LOCK_TIMEOUT} if sqlite else {}
            engine = create_engine(self.url, connect_args=connect, poolclass=NullPool, **options)
            if sqlite:
                _sqlite_serialized(engine)
            self._engine, self._engine_pid = engine, os.getpid()
        return self._engine

    @property
    def _postgresql(self):
        return self.url.get_backend_name() == "postgresql"

    @contextmanager
    def _lock_timeouts(self):
        """Turn an expired lock wait into :class:`LedgerLockTimeoutError`; every other error passes unchanged."""
        try:
            yield
        except OperationalError as exc:
            if not _lock_timed_out(exc):
                raise
            raise LedgerLockTimeoutError(
                f"dataset {self.dataset!r}: another process holds the lock on its budget in the ledger {self} and "
                f"kept it for {LOCK_TIMEOUT:g} s (a fit reserving or settling, or a process stopped inside its "
                "reservation); this transaction changed nothing (a reservation was not made; a reservation being "
                "settled or resolved stays open, charged in full). Please retry; if it lasts, find that process: by "
                "the host and pid of ledger.pending() or history() (stopped while settling), or on PostgreSQL in "
                "pg_stat_activity "
                "(a session 'idle in transaction')."
            ) from exc

    @contextmanager
    def _begin(self, write=True):
        """A ledger transaction; yields its connection.

        ``write=False``: a read-only snapshot that takes no lock (REPEATABLE READ on PostgreSQL, a deferred
        ``BEGIN`` on SQLite), so that a read neither waits behind fits nor needs more than SELECT.
        """
        engine = self._connection() if write else self._connection().execution_options(skpate_read=True)
        with self._lock_timeouts(), engine.begin() as conn:
            if self._postgresql:
                if write:  # durable at commit whatever the server's setting: noise follows a reservation
                    conn.exec_driver_sql("SET LOCAL synchronous_commit = on")
                else:  # before any query: the budget row and its charges in one snapshot
                    conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                # Wait for a lock as long as SQLite does, not forever behind a stopped process.
                conn.exec_driver_sql(f"SET LOCAL lock_timeout = {round(LOCK_TIMEOUT * 1000)}")
            yield conn

    @contextmanager
    def _transaction(self, write=True):
        """A transaction on this dataset's budget row; yields (connection, budget row).

        ``write=True`` holds the row's lock until commit (reservations); ``write=False`` reads a snapshot.
        """
        with self._begin(write) as conn:
            query = select(budgets).where(budgets.c.dataset == self.dataset)
            row = conn.execute(query.with_for_update() if write else query).one_or_none()
            if row is None:
                raise LookupError(f"the ledger {self} holds no budget for dataset {self.dataset!r} any more.")
            yield conn, row

    def _create_tables(self):
        with self._begin(write=False) as conn:  # a read-only role opens a ledger whose tables exist
            inspector = inspect(conn)
            if all(inspector.has_table(table.name) for table in _metadata.sorted_tables):
                return
        try:
            _metadata.create_all(self._connection(), checkfirst=True)
        except (IntegrityError, OperationalError, ProgrammingError):
            # Another process created them at the same moment (a server checks, then creates); they exist now.
            _metadata.create_all(self._connection(), checkfirst=True)

    def _open(self, epsilon, delta, orders):
        """Create the budget of ``dataset`` with these numbers, or open it and check that they are its numbers."""
        given = epsilon is not None or delta is not None or orders is not None
        complete = epsilon is not None and delta is not None  # enough to create it; some numbers check an old one
        budget = BudgetFilters(epsilon, delta, orders, owner="PrivacyLedger") if complete else None  # before any I/O
        with self._lock_timeouts():
            self._create_tables()
        stored = self._stored()  # an existing budget is read without a lock, and nothing is written
        if stored is None:
            try:
                stored = self._create_or_read(budget, complete)
            except IntegrityError:  # another process created it between our read and our insert: read it
                stored = self._create_or_read(None, False)
        if given and not self._same_budget(stored, epsilon, delta, orders):
            raise ValueError(
                f"the budget of dataset {self.dataset!r} was fixed when its ledger was created: epsilon="
                f"{stored.epsilon:g}, delta={stored.delta:g}, orders={stored.orders.tolist()}; a ledger cannot be "
                "reopened with other numbers. Open it with PrivacyLedger(url, dataset) alone; a new budget is only "
                "for new private data (a new dataset name)."
            )
        self._budget = stored
        self.epsilon, self.delta, self.orders = stored.epsilon, stored.delta, stored.orders

    def _stored(self):
        """The budget of ``dataset`` as stored, read without a lock; None if it has none."""
        with self._begin(write=False) as conn:
            row = conn.execute(select(budgets).where(budgets.c.dataset == self.dataset)).one_or_none()
        return None if row is None else _filters(row)

    def _create_or_read(self, budget, create):
        with self._begin() as conn:
            row = conn.execute(select(budgets).where(budgets.c.dataset == self.dataset)).one_or_none()
            if row is not None:
                return _filters(row)
            if create and self._postgresql:  # no other process creates a name between the check and the insert
                conn.exec_driver_sql("LOCK TABLE skpate_budgets IN SHARE ROW EXCLUSIVE MODE")
            # "Adult" for "adult" would be a fresh full budget for the same private data.
            names = conn.execute(select(budgets.c.dataset)).scalars()
            key = _name_key(self.dataset)
            similar = [name for name in names if _name_key(name) == key]
            if similar:
                raise (ValueError if create else LookupError)(
                    f"the ledger {self} has no budget for dataset {self.dataset!r} but one for {similar[0]!r}: did "
                    f"you mean {similar[0]!r}? a new budget is only for new private data (a new dataset name)."
                )
            if not create:
                raise LookupError(
                    f"the ledger {self} has no budget for dataset {self.dataset!r}; create it with "
                    f"PrivacyLedger(url, dataset={self.dataset!r}, epsilon=..., delta=...)."
                )
            conn.execute(
                insert(budgets).values(
                    dataset=self.dataset,
                    epsilon=budget.epsilon,
                    delta=budget.delta,
                    orders=_text(budget.orders),
                    alive=json.dumps([True] * budget.size),
                    created_at=now(),
                )
            )
            return budget

    @staticmethod
    def _same_budget(stored, epsilon, delta, orders):
        """Whether the numbers given (None: not given) are those of the ``stored`` budget."""

        def same(given, kept):
            if given is None:
                return True
            values = np.asarray(given)  # numbers only: "1e-5" is not a delta
            return values.dtype.kind in "iuf" and np.array_equal(values.astype(float), kept)

        return same(epsilon, stored.epsilon) and same(delta, stored.delta) and same(orders, stored.orders)

    @staticmethod
    def datasets(url):
        """The names of the datasets that have a budget in the database at ``url`` (none if it has no ledger)."""
        parsed = database_url(url)
        path = parsed.database
        if path and path.startswith("file:") and "uri" in parsed.query:  # e.g. a read-only file:/path?mode=ro
            path = unquote(urlsplit(path).path)
        if parsed.get_backend_name() == "sqlite" and not os.path.exists(path):
            return []  # reading must not create a database file
        engine = create_engine(parsed, poolclass=NullPool)
        try:
            with engine.connect() as conn:
                if not inspect(conn).has_table(budgets.name):
                    return []
                return [row.dataset for row in conn.execute(select(budgets.c.dataset).order_by(budgets.c.dataset))]
        finally:
            engine.dispose()

    # --------------------------------------------------------------- copies

    def __getstate__(self):
        # A handle: the rows stay in the database; a copy reconnects on first use.
        return {"url": self.url, "dataset": self.dataset, "_budget": self._budget}

    def __setstate__(self, state):
        self.__dict__.update(state)
        # The filters from the budget's numbers: a pickle of an earlier version holds fewer filters than this one.
        kept = self._budget
        self._budget = BudgetFilters(kept.epsilon, kept.delta, kept.orders, owner="PrivacyLedger")
        self.epsilon, self.delta, self.orders = self._budget.epsilon, self._budget.delta, self._budget.orders
        self._engine, self._engine_pid = None, None

    def __repr__(self):
        where = self.url.render_as_string(hide_password=True)
        return f"PrivacyLedger({where!r}, dataset={self.dataset!r}; epsilon={self.epsilon:g}, delta={self.delta:g})"

    def __str__(self):
        return self.url.render_as_string(hide_password=True)

    # -------------------------------------------------------------- reading

    def _state(self, conn, row):
        rows = conn.execute(select(charges.c.charge).where(charges.c.dataset == self.dataset)).all()
        stored = self._budget.stored  # a budget stored before the pure-DP filter: its charges have no pure part
        spent = (
            np.sum([stored(_vector(r.charge), np.inf) for r in rows], axis=0) if rows else np.zeros(self._budget.size)
        )
        return spent, self._alive(row), len(rows)

    def _alive(self, row):
        """The filters in force; in a budget stored before the pure-DP filter, that filter is not."""
        return self._budget.stored(json.loads(row.alive), False).astype(bool)

    @property
    def spent_epsilon(self):
        """Epsilon of everything charged (reservations still open count in full), by the best filter in force."""
        with self._transaction(write=False) as (conn, row):
            spent, alive, _ = self._state(conn, row)
        return self._budget.epsilon_of(spent, alive)

    @property
    def filters(self):
        """The filters still in force (``"gdp"``, ``"rdp(order)"``)."""
        with self._transaction(write=False) as (_, row):
            alive = self._alive(row)
        return [name for name, keep in zip(self._budget.names, alive) if keep]

    def history(self):
        """Every charge to this dataset's budget, oldest first: a list of dicts, no private data.

        Keys: ``id``, ``time`` (UTC, when it was reserved), ``closed_at``,
        ``label`` (the estimator and its mechanism), ``params`` (the
        estimator's parameters, JSON), ``epsilon`` (that charge alone, at the
        filters' delta), ``status`` (``"reserved"`` while the fit runs or if
        it died, ``"settled"``, ``"cancelled"``, ``"abandoned"``,
        ``"refunded"``), ``host`` and ``pid`` of the process that reserved it.
        """
        query = select(charges).where(charges.c.dataset == self.dataset).order_by(charges.c.id)
        with self._begin(write=False) as conn:
            rows = conn.execute(query).all()
        return [
            {
                "id": r.id,
                "time": r.reserved_at,
                "closed_at": r.closed_at,
                "label": r.label,
                "params": r.params,
                "epsilon": r.epsilon,
                "status": r.status,
                "host": r.host,
                "pid": r.pid,
            }
            for r in rows
        ]

    def pending(self):
        """The reservations not closed: fits running now, or that died between reserve and settle."""
        return [entry for entry in self.history() if entry["status"] == "reserved"]

    # ------------------------------------------------------------- charging

    def reserve(self, cost, label="", *, delta=None, params="{}"):
        """Charge ``cost`` in one transaction if a filter still in force has room (:meth:`BudgetAccountant.reserve`).

        Returns the reservation's id (see :meth:`history`).
        """
        charge = self._budget.charge(cost)
        with self._transaction() as (conn, row):
            spent, alive, n_fits = self._state(conn, row)
            room = self._budget.admit(spent, alive, charge)
            if not room.any():
                raise self._budget.refusal(charge, label, self._budget.epsilon_of(spent, alive), n_fits, delta)
            alive = json.dumps(room.tolist())
            conn.execute(update(budgets).where(budgets.c.dataset == self.dataset).values(alive=alive))
            result = conn.execute(
                insert(charges).values(
                    dataset=self.dataset,
                    reserved_at=now(),
                    label=label,
                    params=params,
                    reserved=_text(charge),
                    charge=_text(charge),
                    epsilon=self._budget.epsilon_of(charge),
                    status="reserved",
                    host=socket.gethostname(),
                    pid=os.getpid(),
                )
            )
            return int(result.inserted_primary_key[0])

    def settle(self, reservation, cost):
        """Replace the reservation by what the fit charged, ``cost`` (at most the reservation)."""
        self._close(reservation, self._budget.charge(cost), "settled")

    def cancel(self, reservation):
        """Void the reservation of a fit that failed before it read a private row (called by that fit)."""
        self._close(reservation, np.zeros(self._budget.size), "cancelled")

    def resolve(self, reservation, refund=False):
        """Close a reservation left open by a fit that died (see :meth:`pending`).

        Parameters
        ----------
        reservation : int
            Its ``id``.
        refund : bool, default=False
            False: the reservation stays charged in full (status
            ``"abandoned"``), the safe choice, since a dead fit may have
            released something. True (status ``"refunded"``) only if you know
            that the fit released nothing: no model, no labels, no log.
        """
        if not isinstance(refund, bool):
            raise ValueError(f"refund must be True or False, got {refund!r}.")
        self._close(reservation, np.zeros(self._budget.size) if refund else None, "refunded" if refund else "abandoned")

    def _open_charge(self, conn, reservation):
        if isinstance(reservation, bool) or not isinstance(reservation, (int, np.integer)):
            raise IndexError(f"a reservation is an integer id (see history()), got {reservation!r}.")
        row = conn.execute(
            select(charges).where(charges.c.id == int(reservation), charges.c.dataset == self.dataset)
        ).one_or_none()
        if row is None:
            raise IndexError(f"no reservation {reservation!r} for dataset {self.dataset!r} in the ledger {self}.")
        if row.status != "reserved":
            raise ValueError(f"reservation {reservation} is already {row.status}; a charge is closed once.")
        return self._budget.stored(_vector(row.reserved), np.inf)

    def _close(self, reservation, charge, status):
        """Close an open reservation at ``charge`` (None: at the reservation itself), in one transaction."""
        with self._transaction() as (conn, _):
            reserved = self._open_charge(conn, reservation)
            closed = reserved if charge is None else close_charge(reserved, charge)
            conn.execute(
                update(charges)
                .where(charges.c.id == int(reservation))
                .values(charge=_text(closed), epsilon=self._budget.epsilon_of(closed), status=status, closed_at=now())
            )
