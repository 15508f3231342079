"""Moving an embedded deployment (SQLite + original bytes on disk) into PostgreSQL: every row
of the store's tables, ids, versions, hashes and keys unchanged, and the bytes into
`blob_parts`. The index is then rebuilt on the target's (cli/database.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice

from ..errors import InputError
from .blobs_db import PART_BYTES
from .database import Database
from .documents import DocumentStore

# In the order foreign keys need; what a deployment owns (not its limits or live streams).
TABLES = (
    "documents",
    "versions",
    "chunks",
    "chunk_features",
    "chunk_questions",
    "chunk_readings",
    "chunk_sentence_vectors",
    "jobs",
    "meta",
    "api_keys",
    "questions",
    "feedback",
    "citation_grants",
)
_BATCH = 500


class TargetNotEmptyError(InputError):
    """The target database already holds documents or keys: nothing is moved into it."""

    code = "target_not_empty"


@dataclass
class Moved:
    rows: dict[str, int] = field(default_factory=dict)
    blobs: int = 0
    bytes: int = 0


def move(source: DocumentStore, target: Database, say: Callable[[str], None]) -> Moved:
    """Copy `source`'s tables and bytes into `target` (migrated, empty) in one transaction: a
    move that fails leaves the target as it was."""
    for table in ("documents", "api_keys"):
        if target.connection().execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():
            raise TargetNotEmptyError(
                f"the target database already has {table}: move into an empty database"
            )
    moved = Moved()
    with source.snapshot() as src, target.transaction() as dst:
        for table in TABLES:
            names = sorted(_columns(target, table) & _columns(source, table))
            quoted = ", ".join(f'"{c}"' for c in names)
            insert = (
                f"INSERT INTO {table} ({quoted}) VALUES ({', '.join('?' * len(names))}) "
                "ON CONFLICT DO NOTHING"
            )
            # A batch at a time: a table of sentence vectors and word-piece states is larger
            # than the memory a move should need.
            rows, count = iter(src.execute(f"SELECT {quoted} FROM {table}")), 0
            while batch := [tuple(row) for row in islice(rows, _BATCH)]:
                dst.executemany(insert, batch)
                count += len(batch)
            moved.rows[table] = count
            say(f"{table}: {count} rows")
        for (sha256,) in src.execute("SELECT DISTINCT sha256 FROM versions ORDER BY 1"):
            path = source.blobs.fetch(sha256)
            if path is None:
                raise InputError(f"the bytes of {sha256} are missing from {source.blobs.root}")
            with path.open("rb") as fh:
                part = 0
                while data := fh.read(PART_BYTES):
                    dst.execute(
                        "INSERT INTO blob_parts (sha256, part, data) VALUES (?, ?, ?)",
                        (sha256, part, data),
                    )
                    part += 1
                    moved.bytes += len(data)
            moved.blobs += 1
        say(f"original bytes: {moved.blobs} files, {moved.bytes} bytes")
    return moved


def _columns(database: Database, table: str) -> set[str]:
    return set(database.backend.columns(table))
