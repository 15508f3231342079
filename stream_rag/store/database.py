"""The store's database: SQLite by default, PostgreSQL when `STREAM_RAG_DATABASE_URL` names one
(postgres.py). `Database` gives the store's modules read snapshots, write transactions under
one write lock, and the `meta` key-value table, whichever backend runs them.

The schema is migrations.py's numbered migrations, applied at every open. SQLite's backend
also keeps the idempotent upgrades of releases before them (`_ensure_column`).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..config_checks import is_postgres_url
from .migrations import MIGRATIONS, SCHEMA_MIGRATIONS, Migration, statements
from .records import utc_now
from .sql import Backend, Connection, Result

SCHEMA_VERSION = 2
# SQLite has no ADD COLUMN IF NOT EXISTS: such a statement is skipped when the column is there.
_ADD_COLUMN = re.compile(
    r"ALTER TABLE (?P<table>\w+) ADD COLUMN (?P<column>\w+) .*", re.IGNORECASE | re.DOTALL
)

# Ids per `IN (...)` statement: well under SQLite's limit on host parameters (999 before 3.32).
_IN_BATCH = 500


def in_batches(ids: Iterable[str]) -> Iterator[tuple[list[str], str]]:
    """`ids` in slices of at most `_IN_BATCH`, each with its placeholders `?,?,...`."""
    items = list(ids)
    for start in range(0, len(items), _IN_BATCH):
        batch = items[start : start + _IN_BATCH]
        yield batch, ",".join("?" * len(batch))


def open_backend(target: Path | str, *, pool_size: int = 10) -> Backend:
    """The backend for a SQLite file path or a `postgresql://` URL, migrated."""
    if is_postgres_url(target):
        from .postgres import PostgresBackend  # psycopg is needed only here

        return PostgresBackend(str(target), pool_size=pool_size)
    return SqliteBackend(Path(target))


class Database:
    """Thread-safe access to the store's database; every method blocks (run it in a worker
    thread). `target` is a SQLite file or a PostgreSQL URL."""

    def __init__(self, target: Path | str, *, pool_size: int = 10) -> None:
        self.backend = open_backend(target, pool_size=pool_size)
        # Bumped after every write transaction commits (under `_generation_lock`): results
        # read from the store are known to be current while it is unchanged.
        self.generation = 0
        self._generation_lock = threading.Lock()

    @property
    def dialect(self) -> str:
        return self.backend.dialect

    def connection(self) -> Connection:
        """Statements outside a transaction, for modules that keep their own tables (jobs.py)."""
        return self._db()

    def transaction(self) -> contextlib.AbstractContextManager[Connection]:
        """A write transaction, for modules that keep their own tables."""
        return self._transaction()

    def snapshot(self) -> contextlib.AbstractContextManager[Connection]:
        """A read transaction (one committed state), for modules that keep their own tables."""
        return self._snapshot()

    def meta_int(self, key: str) -> int:
        value = self.meta(key)
        return int(value) if value else 0

    def meta(self, key: str) -> str | None:
        row = self._db().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row["value"])

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def close(self) -> None:
        self.backend.close()

    def _db(self) -> Connection:
        return self.backend.connection()

    def _snapshot(self) -> contextlib.AbstractContextManager[Connection]:
        return self.backend.snapshot()

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        try:
            with self.backend.transaction() as db:
                yield db
        finally:
            with self._generation_lock:
                self.generation += 1


# How long `SqliteBackend.close` waits for transactions in progress.
CLOSE_WAIT_S = 30.0


class InProgress:
    """The statements and transactions running on a backend's connections, counted: closing a
    connection another thread is using crashes the process (a segfault in sqlite3)."""

    def __init__(self) -> None:
        self.count = 0
        # True while `none_starting` holds (what a test waits on to know `close` has begun).
        self.closing = False
        self._changed = threading.Condition()

    @contextmanager
    def one(self) -> Iterator[None]:
        """Count the block as in progress."""
        with self._changed:
            self.count += 1
        try:
            yield
        finally:
            with self._changed:
                self.count -= 1
                if not self.count:
                    self._changed.notify_all()

    @contextmanager
    def none_starting(self, *, timeout: float) -> Iterator[None]:
        """Enter once none is in progress (or after `timeout`); none starts until the block
        ends, since the condition is held throughout."""
        with self._changed:
            self.closing = True
            self._changed.notify_all()
            self._changed.wait_for(lambda: self.count == 0, timeout=timeout)
            yield
            self.closing = False

    def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Block until `predicate` holds, checked whenever the count or `closing` changes."""
        with self._changed:
            self._changed.wait_for(predicate)


class SqliteBackend:
    """One SQLite file (WAL), one connection per thread."""

    dialect = "sqlite"

    def __init__(self, db_path: Path) -> None:
        self._db_path = db_path
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self.in_progress = InProgress()
        self._migrate()

    def connection(self) -> TrackedStatements:
        """Statements outside a transaction (inside one on this thread: that one's), each
        counted as in progress, so `close` never closes the connection under one."""
        return TrackedStatements(self)

    @contextmanager
    def using(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection, counted as in progress until the block ends."""
        with self.in_progress.one():
            yield self._raw()

    def _raw(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use (and again after `close`)."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(
                self._db_path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
            connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA foreign_keys=ON")
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every statement inside sees the same committed state (WAL)."""
        with self.using() as db:
            if db.in_transaction:
                yield db
                return
            db.execute("BEGIN")
            try:
                yield db
            finally:
                db.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.using() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        """Close every thread's connection once no statement or transaction is in progress (a
        request's last write can still be running while the server shuts down), or after
        `CLOSE_WAIT_S`. None starts while the connections close: the condition is held
        throughout, so a write that comes later opens a connection of its own."""
        with self.in_progress.none_starting(timeout=CLOSE_WAIT_S):
            with self._lock:
                for connection in self._connections:
                    connection.close()
                self._connections.clear()
            self._local = threading.local()

    def columns(self, table: str) -> list[str]:
        return [str(r["name"]) for r in self.connection().execute(f"PRAGMA table_info({table})")]

    def applied(self) -> set[int]:
        rows = self.connection().execute("SELECT version FROM schema_migrations")
        return {int(r[0]) for r in rows}

    def _migrate(self) -> None:
        db = self._raw()
        current = int(db.execute("PRAGMA user_version").fetchone()[0])
        if current == 1:
            # Version 1 had no index: its documents become live and get indexed again.
            db.execute("ALTER TABLE documents ADD COLUMN live_version INTEGER")
            db.execute(
                "UPDATE documents SET live_version = "
                "(SELECT max(version) FROM versions WHERE doc_id = documents.id)"
            )
        db.executescript(SCHEMA_MIGRATIONS)
        done = self.applied()
        for migration in MIGRATIONS:
            if migration.version not in done:
                self._apply(migration)
        if current < SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        # Columns added before migrations were numbered (idempotent, as they always were).
        # BM25 token count of an indexed version; the average length is derived from these.
        self._ensure_column("versions", "bm25_tokens", "INTEGER")
        # The key that created a document (its quota counts it); NULL: admin, open mode, CLI.
        self._ensure_column("documents", "owner", "TEXT")
        # The gate's stored word-piece states (embed/tokens.py), next to the sentence vectors.
        self._ensure_column("chunk_sentence_vectors", "token_counts", "TEXT")
        self._ensure_column("chunk_sentence_vectors", "token_dims", "INTEGER")
        self._ensure_column("chunk_sentence_vectors", "tokens", "BLOB")

    def _apply(self, migration: Migration) -> None:
        """One transaction (SQLite's DDL is transactional) under the write lock, so another
        process opening the file at once waits and then finds it applied. A column already
        there is not added again: a store a release before this one left part-way (it applied
        each statement on its own) still opens."""
        db = self._raw()
        db.execute("BEGIN IMMEDIATE")
        try:
            if migration.version not in self.applied():
                for statement in statements(migration.sqlite):
                    added = _ADD_COLUMN.fullmatch(statement)
                    if added and added["column"] in self.columns(added["table"]):
                        continue
                    db.execute(statement)
                db.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, utc_now()),
                )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _ensure_column(self, table: str, column: str, declaration: str) -> None:
        """Add `column` to `table` unless it is there already (an idempotent migration)."""
        db = self._raw()
        columns = {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


class TrackedStatements:
    """`SqliteBackend.connection()`: each statement runs on the calling thread's connection
    as one in progress, its rows read in full before `close` may run."""

    def __init__(self, backend: SqliteBackend) -> None:
        self._backend = backend

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Result:
        with self._backend.using() as db:
            cursor = db.execute(sql, parameters)
            return Result(cursor.fetchall(), cursor.rowcount)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Result:
        with self._backend.using() as db:
            cursor = db.executemany(sql, seq_of_parameters)
            return Result(cursor.fetchall(), cursor.rowcount)
