"""What the store's modules need of a database: a connection that runs `?`-placeholder SQL and
rows read by column name or position. `sqlite3` meets it as it is; `postgres.py` adapts psycopg.

The SQL the modules write is the common subset of SQLite and PostgreSQL: `INSERT ... ON
CONFLICT`, `coalesce`, `CASE` instead of two-argument `max`/`min`, `"end"` quoted. Everything
dialect-specific (column types, DDL) lives in migrations.py, one text per backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class Cursor(Protocol):
    """The result of one statement."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Result:
    """One statement's rows, read in full (its connection may be closed or go back to a pool
    once the statement is done)."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self._next = 0
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[Any]:
        rest = self._rows[self._next :]
        self._next = len(self._rows)
        return rest

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class Connection(Protocol):
    """One statement at a time; rows answer `row["column"]` and `row[0]`."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Cursor: ...


class Backend(Protocol):
    """A database the store can run on (SQLite file or PostgreSQL server)."""

    dialect: str

    def connection(self) -> Connection:
        """Run statements outside a transaction (inside one on this thread: that one's)."""
        ...

    def snapshot(self) -> AbstractContextManager[Connection]:
        """A read transaction: its statements see one committed state."""
        ...

    def transaction(self) -> AbstractContextManager[Connection]:
        """A write transaction holding the store's one write lock (as SQLite's is)."""
        ...

    def close(self) -> None: ...

    def columns(self, table: str) -> list[str]:
        """The names of `table`'s columns."""
        ...

    def applied(self) -> set[int]:
        """The numbers of the migrations this database has applied."""
        ...


def redact(url: str) -> str:
    """A database URL without its password, for logs and messages."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else url
