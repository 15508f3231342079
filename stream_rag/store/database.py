"""The store's SQLite database: its schema and migrations, one connection per thread (WAL),
read snapshots and write transactions, and the `meta` key-value table.

Later additions are idempotent, so features can add tables and columns without renumbering
`user_version`: new tables go in `_SCHEMA` with IF NOT EXISTS, new columns through
`Database._ensure_column` called from `_migrate`.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    collection TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    live_version INTEGER
);
CREATE INDEX IF NOT EXISTS documents_collection ON documents(collection, created_at);
CREATE TABLE IF NOT EXISTS versions (
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    media_type TEXT NOT NULL,
    filename TEXT NOT NULL,
    created_at TEXT NOT NULL,
    chunk_count INTEGER NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT,
    text TEXT NOT NULL,
    PRIMARY KEY (doc_id, version)
);
CREATE INDEX IF NOT EXISTS versions_sha ON versions(sha256);
CREATE INDEX IF NOT EXISTS versions_status ON versions(status);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    text TEXT NOT NULL,
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS chunks_version ON chunks(doc_id, version, ordinal);
CREATE TABLE IF NOT EXISTS chunk_features (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    PRIMARY KEY (doc_id, version),
    FOREIGN KEY (doc_id, version) REFERENCES versions(doc_id, version) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunk_questions (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    count INTEGER NOT NULL,
    vectors BLOB NOT NULL
);
-- A search asks whether any chunk has a question before looking its candidates up.
CREATE INDEX IF NOT EXISTS chunk_questions_asked ON chunk_questions(model, count);
CREATE TABLE IF NOT EXISTS chunk_readings (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    data TEXT NOT NULL
);
-- The question log (store/questions.py): one row per answer streamed, kept
-- STREAM_RAG_QUESTION_LOG_DAYS, and the visitors' ratings of those answers.
CREATE TABLE IF NOT EXISTS questions (
    id TEXT PRIMARY KEY,
    conversation TEXT,
    collection TEXT NOT NULL,
    key_id TEXT,
    asked_at TEXT NOT NULL,
    question TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT,
    sentences INTEGER NOT NULL,
    dropped INTEGER NOT NULL,
    citations TEXT NOT NULL,
    conflicts TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS questions_asked ON questions(collection, asked_at);
CREATE INDEX IF NOT EXISTS questions_conversation ON questions(conversation);
CREATE TABLE IF NOT EXISTS feedback (
    question_id TEXT PRIMARY KEY REFERENCES questions(id) ON DELETE CASCADE,
    rating INTEGER NOT NULL,
    comment TEXT NOT NULL,
    rated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunk_sentence_vectors (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    spans TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vectors BLOB NOT NULL
);
"""
SCHEMA_VERSION = 2

# Ids per `IN (...)` statement: well under SQLite's limit on host parameters (999 before 3.32).
_IN_BATCH = 500


def in_batches(ids: Iterable[str]) -> Iterator[tuple[list[str], str]]:
    """`ids` in slices of at most `_IN_BATCH`, each with its placeholders `?,?,...`."""
    items = list(ids)
    for start in range(0, len(items), _IN_BATCH):
        batch = items[start : start + _IN_BATCH]
        yield batch, ",".join("?" * len(batch))


class Database:
    """Thread-safe access to one SQLite file; every method blocks (run it in a worker thread)."""

    def __init__(self, db_path: Path) -> None:
        self._db_path = db_path
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        # Bumped after every write transaction commits (under `_generation_lock`): results
        # read from the store are known to be current while it is unchanged.
        self.generation = 0
        self._generation_lock = threading.Lock()
        self._migrate()

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, for modules that keep their own tables (jobs.py)."""
        return self._db()

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A write transaction (`BEGIN IMMEDIATE`), for modules that keep their own tables."""
        return self._transaction()

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
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()

    def _migrate(self) -> None:
        db = self._db()
        current = int(db.execute("PRAGMA user_version").fetchone()[0])
        if current == 1:
            # Version 1 had no index: its documents become live and get indexed again.
            db.execute("ALTER TABLE documents ADD COLUMN live_version INTEGER")
            db.execute(
                "UPDATE documents SET live_version = "
                "(SELECT max(version) FROM versions WHERE doc_id = documents.id)"
            )
        # executescript commits on its own; the schema statements are idempotent.
        db.executescript(_SCHEMA)
        # Later additions are idempotent too, so features can add tables and columns
        # without renumbering user_version: new tables go in `_SCHEMA` with IF NOT EXISTS,
        # new columns through `_ensure_column`.
        if current < SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        # BM25 token count of an indexed version; the average length is derived from these.
        self._ensure_column("versions", "bm25_tokens", "INTEGER")
        # The key that created a document (its quota counts it); NULL: admin, open mode, CLI.
        self._ensure_column("documents", "owner", "TEXT")
        # The gate's stored word-piece states (embed/tokens.py), next to the sentence vectors.
        self._ensure_column("chunk_sentence_vectors", "token_counts", "TEXT")
        self._ensure_column("chunk_sentence_vectors", "token_dims", "INTEGER")
        self._ensure_column("chunk_sentence_vectors", "tokens", "BLOB")

    def _ensure_column(self, table: str, column: str, declaration: str) -> None:
        """Add `column` to `table` unless it is there already (an idempotent migration)."""
        db = self._db()
        columns = {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    def _db(self) -> sqlite3.Connection:
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
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every statement inside sees the same committed state (WAL)."""
        db = self._db()
        if db.in_transaction:
            yield db
            return
        db.execute("BEGIN")
        try:
            yield db
        finally:
            db.execute("COMMIT")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        try:
            db.execute("COMMIT")
        finally:
            with self._generation_lock:
                self.generation += 1
