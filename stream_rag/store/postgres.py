"""The store on PostgreSQL (`STREAM_RAG_DATABASE_URL=postgresql://...`): psycopg 3 with a
connection pool, speaking the `?`-placeholder SQL of sql.py.

Write transactions take one advisory lock first, so they run one at a time across every
replica and worker, as SQLite's `BEGIN IMMEDIATE` does in one process: the store's checks
"again under the write lock" (duplicates, quotas, the queue's bound) hold unchanged. Reads run
beside them; a snapshot is a `REPEATABLE READ` read-only transaction.
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from ..errors import StoreUnavailableError
from .migrations import MIGRATIONS, SCHEMA_MIGRATIONS, statements
from .records import utc_now
from .sql import Result, redact

# pg_advisory_xact_lock keys: the store's write lock, and migrations at start.
WRITE_LOCK = 0x5352_0001
MIGRATE_LOCK = 0x5352_0002

_QUOTED = re.compile(r"('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")")


@functools.lru_cache(maxsize=512)
def translate(sql: str) -> str:
    """`?` placeholders to psycopg's `%s` (and a literal `%` doubled), outside quotes."""
    parts = _QUOTED.split(sql)
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("%", "%%").replace("?", "%s")
    return "".join(parts)


class PgRow:
    """A row read by column name or by position, as `sqlite3.Row` is."""

    __slots__ = ("_index", "_values")

    def __init__(self, values: Sequence[Any], index: dict[str, int]) -> None:
        self._values = tuple(values)
        self._index = index

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            return self._values[self._index[key]]
        return self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"PgRow{self._values!r}"

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: psycopg.Cursor[Any]) -> Any:
    description = cursor.description or []
    index = {column.name: i for i, column in enumerate(description)}

    def make(values: Sequence[Any]) -> PgRow:
        return PgRow(values, index)

    return make


class PgConnection:
    """One psycopg connection speaking the store's SQL."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.raw = connection

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Result:
        cursor = self.raw.execute(translate(sql), tuple(parameters) or None)
        rows = cursor.fetchall() if cursor.description is not None else []
        return Result(rows, cursor.rowcount)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Result:
        params = [tuple(p) for p in seq_of_parameters]
        with self.raw.cursor() as cursor:
            if params:
                cursor.executemany(translate(sql), params)
            return Result([], cursor.rowcount)


class PooledConnection:
    """Statements outside a transaction: each borrows a pooled connection (autocommit)."""

    def __init__(self, pool: ConnectionPool[Any]) -> None:
        self._pool = pool

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Result:
        with self._pool.connection() as raw:
            return PgConnection(raw).execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Result:
        with self._pool.connection() as raw:
            return PgConnection(raw).executemany(sql, seq_of_parameters)


class PostgresBackend:
    """A PostgreSQL database through a bounded pool; migrated when opened."""

    dialect = "postgresql"

    def __init__(self, url: str, *, pool_size: int = 10, timeout_s: float = 30.0) -> None:
        self.url = url
        self._local = threading.local()
        try:  # one direct try first: a wrong URL fails at once, with the server's reason
            psycopg.connect(url, connect_timeout=int(timeout_s)).close()
        except psycopg.Error as exc:
            raise StoreUnavailableError(
                f"cannot connect to the database {redact(url)}: {exc}".strip()
            ) from None
        self.pool: ConnectionPool[Any] = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True, "row_factory": _row_factory},
            timeout=timeout_s,
            open=False,
            name="stream_rag",
        )
        try:
            self.pool.open(wait=True, timeout=timeout_s)
        except Exception as exc:
            self.pool.close()
            raise StoreUnavailableError(
                f"cannot connect to the database {redact(url)}: {exc}"
            ) from None
        self._pooled = PooledConnection(self.pool)
        self.migrate()

    def connection(self) -> PgConnection | PooledConnection:
        current: PgConnection | None = getattr(self._local, "current", None)
        return current if current is not None else self._pooled

    @contextmanager
    def snapshot(self) -> Iterator[PgConnection]:
        current: PgConnection | None = getattr(self._local, "current", None)
        if current is not None:
            yield current
            return
        with self._begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") as db:
            yield db

    @contextmanager
    def transaction(self) -> Iterator[PgConnection]:
        with self._begin("BEGIN") as db:
            db.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))
            yield db

    @contextmanager
    def own_transaction(self) -> Iterator[PgConnection]:
        """A transaction without the store's write lock, for tables that serialise their own
        rows (access/shared.py's answer slots take a lock per holder)."""
        with self._begin("BEGIN") as db:
            yield db

    def close(self) -> None:
        self.pool.close()

    def columns(self, table: str) -> list[str]:
        rows = self._pooled.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
            (table,),
        )
        return [str(r[0]) for r in rows]

    def applied(self) -> set[int]:
        rows = self._pooled.execute("SELECT version FROM schema_migrations")
        return {int(r[0]) for r in rows}

    def migrate(self) -> list[int]:
        """Apply the migrations this database lacks, one transaction each, under a lock so
        replicas starting together apply each once. Returns the versions applied."""
        done: list[int] = []
        with self._begin("BEGIN") as db:
            db.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATE_LOCK,))
            for statement in statements(SCHEMA_MIGRATIONS):
                db.execute(statement)
            applied = {int(r[0]) for r in db.execute("SELECT version FROM schema_migrations")}
            for migration in MIGRATIONS:
                if migration.version in applied:
                    continue
                for statement in statements(migration.postgres):
                    db.execute(statement)
                db.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, utc_now()),
                )
                done.append(migration.version)
        return done

    @contextmanager
    def _begin(self, begin: str) -> Iterator[PgConnection]:
        with self.pool.connection() as raw:
            db = PgConnection(raw)
            raw.execute(begin)
            self._local.current = db
            try:
                yield db
            except BaseException:
                self._local.current = None
                with contextlib.suppress(psycopg.Error):  # a broken connection: the pool drops it
                    raw.execute("ROLLBACK")
                raise
            self._local.current = None
            raw.execute("COMMIT")
