"""The document store: documents with stable ids, numbered versions, chunks, original bytes.

Metadata lives in SQLite (WAL); bytes live in a content-addressed `BlobStore`. An upload is
staged, extracted and chunked first, its bytes moved into place, and only then are its rows
committed in one transaction, so a crash at any point leaves no visible partial document.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import sqlite3
import threading
import unicodedata
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from ..errors import InvalidFieldError, InvalidFilenameError, NotFoundError, QueueFullError
from ..ingest.extract import media_type_for
from ..ingest.extract_pool import Extractor, InProcessExtractor
from ..types import Chunk, Document, UploadResult, Version
from .blobs import BlobStore, StagedFile

MAX_FILENAME_CHARS = 255
_COLLECTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

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
CREATE TABLE IF NOT EXISTS chunk_sentence_vectors (
    chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    spans TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vectors BLOB NOT NULL
);
"""
SCHEMA_VERSION = 2
_VERSION_COLUMNS = (
    "doc_id, version, sha256, size, media_type, filename, created_at, chunk_count, status, "
    "status_reason"
)


@dataclass(frozen=True, slots=True)
class ChunkSource:
    """A chunk with what a citation shows of its document and version."""

    chunk: Chunk
    name: str
    filename: str
    sha256: str


@dataclass(frozen=True, slots=True)
class _Prepared:
    """An upload read and chunked, ready to be committed."""

    staged: StagedFile
    filename: str
    media_type: str
    text: str
    spans: list[tuple[int, int]]


class DocumentStore:
    """Thread-safe store; every method is blocking and meant to run in a worker thread."""

    def __init__(
        self,
        data_dir: Path,
        *,
        chunk_chars: int = 1000,
        chunk_overlap_chars: int = 150,
        extractor: Extractor | None = None,
        max_jobs: int = 10_000,
    ) -> None:
        self.data_dir = data_dir
        # The parsers: worker processes in the server (extract_pool.py); in-process default.
        self.extractor = extractor or InProcessExtractor()
        self.max_jobs = max_jobs
        self.chunk_chars = chunk_chars
        self.chunk_overlap_chars = chunk_overlap_chars
        data_dir.mkdir(parents=True, exist_ok=True)
        self.blobs = BlobStore(data_dir / "blobs")
        self._db_path = data_dir / "stream_rag.sqlite3"
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._migrate()
        self.sweep()

    # -- reading --------------------------------------------------------------------------

    def list_documents(self, collection: str | None = None) -> list[Document]:
        # One read snapshot: a document deleted between the two queries would otherwise be
        # listed without versions.
        with self._snapshot() as db:
            if collection is None:
                rows = db.execute("SELECT * FROM documents ORDER BY created_at, id").fetchall()
            else:
                rows = db.execute(
                    "SELECT * FROM documents WHERE collection = ? ORDER BY created_at, id",
                    (collection,),
                ).fetchall()
            versions: dict[str, list[Version]] = {}
            wanted = {row["id"] for row in rows}
            for vrow in db.execute(f"SELECT {_VERSION_COLUMNS} FROM versions ORDER BY version"):
                if vrow["doc_id"] not in wanted:
                    continue
                versions.setdefault(vrow["doc_id"], []).append(_version(vrow))
        return [_document(row, versions[row["id"]]) for row in rows if row["id"] in versions]

    def get(self, doc_id: str) -> Document:
        with self._snapshot() as db:
            row = db.execute("SELECT * FROM documents WHERE id = ?", (doc_id,)).fetchone()
            vrows = db.execute(
                f"SELECT {_VERSION_COLUMNS} FROM versions WHERE doc_id = ? ORDER BY version",
                (doc_id,),
            ).fetchall()
        if row is None or not vrows:
            raise NotFoundError(f"no document with id {doc_id!r}")
        return _document(row, [_version(v) for v in vrows])

    def version(self, doc_id: str, version: int | None = None) -> Version:
        """A version record (the newest when `version` is None)."""
        document = self.get(doc_id)
        if version is None:
            return document.latest
        for record in document.versions:
            if record.version == version:
                return record
        raise NotFoundError(f"document {doc_id!r} has no version {version}")

    def content_path(self, record: Version) -> Path:
        path = self.blobs.path_for(record.sha256)
        if not path.is_file():
            raise NotFoundError(f"bytes of {record.doc_id!r} version {record.version} are missing")
        return path

    def text(self, doc_id: str, version: int) -> str:
        row = (
            self._db()
            .execute(
                "SELECT text FROM versions WHERE doc_id = ? AND version = ?", (doc_id, version)
            )
            .fetchone()
        )
        if row is None:
            raise NotFoundError(f"document {doc_id!r} has no version {version}")
        return str(row["text"])

    def chunks(self, doc_id: str, version: int) -> list[Chunk]:
        self.version(doc_id, version)
        rows = (
            self._db()
            .execute(
                "SELECT * FROM chunks WHERE doc_id = ? AND version = ? ORDER BY ordinal",
                (doc_id, version),
            )
            .fetchall()
        )
        return [_chunk(row) for row in rows]

    def chunk_sources(self, chunk_ids: Sequence[str]) -> dict[str, ChunkSource]:
        """Chunks with their document's name and version record, read in one statement so a
        concurrent delete either removes a chunk from the answer or leaves it whole."""
        found: dict[str, ChunkSource] = {}
        ids = list(chunk_ids)
        with self._snapshot() as db:
            for start in range(0, len(ids), 500):
                batch = ids[start : start + 500]
                marks = ",".join("?" * len(batch))
                for row in db.execute(
                    "SELECT c.*, d.name AS doc_name, v.filename AS filename, v.sha256 AS sha256 "
                    "FROM chunks c "
                    "JOIN versions v ON v.doc_id = c.doc_id AND v.version = c.version "
                    f"JOIN documents d ON d.id = c.doc_id WHERE c.id IN ({marks})",
                    batch,
                ):
                    found[row["id"]] = ChunkSource(
                        _chunk(row), row["doc_name"], row["filename"], row["sha256"]
                    )
        return found

    def count(self) -> int:
        return int(self._db().execute("SELECT count(*) FROM documents").fetchone()[0])

    # -- writing --------------------------------------------------------------------------

    def add(
        self,
        staged: StagedFile,
        *,
        filename: str,
        name: str | None = None,
        collection: str = "default",
    ) -> UploadResult:
        """Store a new document, or return the one that already holds these exact bytes."""
        filename = validate_filename(filename)
        display = validate_display_name(name) if name else filename
        collection = validate_collection(collection)
        existing = self._find_duplicate(staged.sha256, collection)
        if existing is not None:
            return existing
        prepared = self._prepare(staged, filename)
        now = _now()
        with self._transaction() as db:
            # Checked again under the write lock: a concurrent upload may have won the race.
            existing = self._find_duplicate(staged.sha256, collection, db)
            if existing is not None:
                return existing
            self._check_queue(db)
            self.blobs.commit(staged)
            doc_id = new_document_id()
            db.execute(
                "INSERT INTO documents (id, collection, name, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (doc_id, collection, display, now, now),
            )
            self._insert_version(db, doc_id, 1, prepared, now)
        document = self.get(doc_id)
        return UploadResult(document, document.latest, duplicate=False)

    def add_version(self, doc_id: str, staged: StagedFile, *, filename: str) -> UploadResult:
        """Add a version to `doc_id`; identical bytes to its newest version add nothing."""
        filename = validate_filename(filename)
        current = self.get(doc_id)
        if current.latest.sha256 == staged.sha256:
            return UploadResult(current, current.latest, duplicate=True)
        prepared = self._prepare(staged, filename)
        now = _now()
        with self._transaction() as db:
            row = db.execute(
                "SELECT version, sha256 FROM versions WHERE doc_id = ? "
                "ORDER BY version DESC LIMIT 1",
                (doc_id,),
            ).fetchone()
            if row is None:
                raise NotFoundError(f"no document with id {doc_id!r}")
            if row["sha256"] == staged.sha256:
                # Checked again under the write lock: a concurrent identical upload won.
                current = self.get(doc_id)
                return UploadResult(current, current.latest, duplicate=True)
            number = int(row["version"]) + 1
            self._check_queue(db)
            self.blobs.commit(staged)
            self._insert_version(db, doc_id, number, prepared, now)
            db.execute("UPDATE documents SET updated_at = ? WHERE id = ?", (now, doc_id))
        document = self.get(doc_id)
        return UploadResult(document, document.latest, duplicate=False)

    def delete(self, doc_id: str) -> Document:
        """Remove a document, all its versions and chunks, and bytes nothing else references."""
        document = self.get(doc_id)
        with self._transaction() as db:
            db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        # A second write transaction: an upload of the same bytes checks for the blob and
        # inserts its rows under the same lock, so a blob it now relies on is never removed.
        with self._transaction() as db:
            for sha in {v.sha256 for v in document.versions}:
                if not db.execute(
                    "SELECT 1 FROM versions WHERE sha256 = ? LIMIT 1", (sha,)
                ).fetchone():
                    self.blobs.remove(sha)
        return document

    # -- indexing state ---------------------------------------------------------------------

    def set_ready(self, doc_id: str, version: int, tokens: int, chunks: int) -> int | None:
        """Mark a version indexed (with its BM25 token count) and make it live if it is the
        newest indexed one. Returns the live version, or None if the document is gone."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT live_version FROM documents WHERE id = ?", (doc_id,)
            ).fetchone()
            exists = db.execute(
                "SELECT 1 FROM versions WHERE doc_id = ? AND version = ?", (doc_id, version)
            ).fetchone()
            if row is None or exists is None:
                return None
            live = max(int(row["live_version"] or 0), version)
            db.execute(
                "UPDATE versions SET status = 'ready', status_reason = NULL, bm25_tokens = ? "
                "WHERE doc_id = ? AND version = ?",
                (tokens, doc_id, version),
            )
            db.execute("UPDATE documents SET live_version = ? WHERE id = ?", (live, doc_id))
            db.execute("DELETE FROM jobs WHERE doc_id = ? AND version = ?", (doc_id, version))
            return live

    def set_failed(self, doc_id: str, version: int, reason: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE versions SET status = 'failed', status_reason = ? "
                "WHERE doc_id = ? AND version = ?",
                (reason, doc_id, version),
            )
            db.execute("DELETE FROM jobs WHERE doc_id = ? AND version = ?", (doc_id, version))

    def set_indexing(self, keys: list[tuple[str, int]]) -> None:
        """Mark versions for (re)indexing and queue their jobs, durably."""
        now = _now()
        with self._transaction() as db:
            db.executemany(
                "UPDATE versions SET status = 'indexing', status_reason = NULL "
                "WHERE doc_id = ? AND version = ?",
                keys,
            )
            db.executemany(
                "INSERT OR IGNORE INTO jobs (doc_id, version, created_at) "
                "SELECT doc_id, version, ? FROM versions WHERE doc_id = ? AND version = ?",
                [(now, d, v) for d, v in keys],
            )

    def pending(self) -> list[tuple[str, int]]:
        """Versions waiting to be indexed, oldest first: the queued jobs, and versions an
        older release left `indexing` without one (`Indexer.reconcile` queues those)."""
        rows = self._db().execute(
            "SELECT doc_id, version, min(created_at) FROM (SELECT doc_id, version, created_at "
            "FROM jobs UNION ALL SELECT doc_id, version, created_at FROM versions "
            "WHERE status = 'indexing') GROUP BY doc_id, version ORDER BY 3, 1, 2"
        )
        return [(r[0], r[1]) for r in rows]

    def chunk_batch(self, doc_id: str, version: int, offset: int, limit: int) -> list[Chunk]:
        """Chunks `offset` .. `offset + limit` of a version (none once it is deleted)."""
        rows = self._db().execute(
            "SELECT * FROM chunks WHERE doc_id = ? AND version = ? AND ordinal >= ? "
            "ORDER BY ordinal LIMIT ?",
            (doc_id, version, offset, limit),
        )
        return [_chunk(row) for row in rows]

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, for modules that keep their own tables (jobs.py)."""
        return self._db()

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A write transaction (`BEGIN IMMEDIATE`), for modules that keep their own tables."""
        return self._transaction()

    def newest_versions(self) -> list[tuple[str, int]]:
        """Every document's newest version: what a full re-index must index."""
        rows = (
            self._db()
            .execute(
                "SELECT doc_id, max(version) AS version FROM versions GROUP BY doc_id "
                "ORDER BY doc_id"
            )
            .fetchall()
        )
        return [(r["doc_id"], r["version"]) for r in rows]

    def live_versions(self, doc_ids: Collection[str]) -> dict[str, int]:
        """The version retrieval may return, per document id (absent: none is live)."""
        if not doc_ids:
            return {}
        ids = list(doc_ids)
        found: dict[str, int] = {}
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            for row in self._db().execute(
                f"SELECT id, live_version FROM documents WHERE id IN ({marks}) "
                "AND live_version IS NOT NULL",
                batch,
            ):
                found[row["id"]] = row["live_version"]
        return found

    def chunks_by_id(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        found: dict[str, Chunk] = {}
        ids = list(chunk_ids)
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            for row in self._db().execute(f"SELECT * FROM chunks WHERE id IN ({marks})", batch):
                found[row["id"]] = _chunk(row)
        return found

    def chunk_features(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """Stored features (`features.ChunkFeatures` as JSON) of the chunks that have them."""
        found: dict[str, str] = {}
        ids = list(chunk_ids)
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            query = f"SELECT chunk_id, data FROM chunk_features WHERE chunk_id IN ({marks})"
            for row in self._db().execute(query, batch):
                found[row["chunk_id"]] = row["data"]
        return found

    def set_chunk_features(self, rows: Sequence[tuple[str, str]]) -> None:
        """Store (chunk id, features JSON) pairs; rows of chunks deleted meanwhile are skipped."""
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO chunk_features (chunk_id, data) "
                "SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?1)",
                rows,
            )

    def save_sentence_vectors(self, rows: Sequence[tuple[str, str, str, int, bytes]]) -> None:
        """Store `(chunk_id, model, spans_json, dim, float16 bytes)` rows (the gate's semantic
        stage; see sentence_vectors.py). Rows of chunks deleted meanwhile are skipped."""
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO chunk_sentence_vectors "
                "(chunk_id, model, spans, dim, vectors) "
                "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?)",
                [(*row, row[0]) for row in rows],
            )

    def sentence_vectors(
        self, chunk_ids: Sequence[str], model: str
    ) -> dict[str, tuple[str, int, bytes]]:
        """chunk id -> `(spans_json, dim, bytes)` of the chunks that have vectors of `model`."""
        found: dict[str, tuple[str, int, bytes]] = {}
        ids = list(chunk_ids)
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            query = (
                "SELECT chunk_id, spans, dim, vectors FROM chunk_sentence_vectors "
                f"WHERE model = ? AND chunk_id IN ({marks})"
            )
            for row in self._db().execute(query, (model, *batch)):
                found[row["chunk_id"]] = (row["spans"], int(row["dim"]), bytes(row["vectors"]))
        return found

    def bm25_average_length(self, extra_tokens: int = 0, extra_chunks: int = 0) -> float:
        """Mean tokens per live chunk, counting a batch about to be indexed. Derived from the
        live versions each time, so deletes and superseded versions never skew it."""
        tokens, chunks = self.bm25_totals()
        tokens, chunks = tokens + extra_tokens, chunks + extra_chunks
        return tokens / chunks if chunks else 1.0

    def bm25_totals(self) -> tuple[int, int]:
        """(tokens, chunks) over live versions whose token count is known."""
        row = (
            self._db()
            .execute(
                "SELECT coalesce(sum(v.bm25_tokens), 0), coalesce(sum(v.chunk_count), 0) "
                "FROM versions v JOIN documents d "
                "ON d.id = v.doc_id AND d.live_version = v.version "
                "WHERE v.bm25_tokens IS NOT NULL"
            )
            .fetchone()
        )
        return int(row[0]), int(row[1])

    def live_chunk_ids(self) -> dict[str, tuple[str, int]]:
        """Every chunk of a live version: chunk id -> (doc_id, version)."""
        rows = self._db().execute(
            "SELECT c.id, c.doc_id, c.version FROM chunks c JOIN documents d "
            "ON d.id = c.doc_id AND d.live_version = c.version"
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def versions_with_status(self, status: str) -> set[tuple[str, int]]:
        rows = self._db().execute(
            "SELECT doc_id, version FROM versions WHERE status = ?", (status,)
        )
        return {(r[0], r[1]) for r in rows}

    def live_without_bm25_tokens(self) -> list[tuple[str, int]]:
        """Live versions indexed before token counts were kept per version."""
        rows = self._db().execute(
            "SELECT v.doc_id, v.version FROM versions v JOIN documents d "
            "ON d.id = v.doc_id AND d.live_version = v.version "
            "WHERE v.bm25_tokens IS NULL ORDER BY v.doc_id"
        )
        return [(r[0], r[1]) for r in rows]

    def set_bm25_tokens(self, doc_id: str, version: int, tokens: int) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE versions SET bm25_tokens = ? WHERE doc_id = ? AND version = ?",
                (tokens, doc_id, version),
            )

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

    def sweep(self) -> int:
        """Remove bytes no committed version references and staging files no live process
        is writing (both left by a crash); return how many files went."""
        removed = self.blobs.sweep_staging()
        # Under the write lock: an upload commits its blob and its rows in one transaction,
        # so no blob seen unreferenced here can be about to gain a reference.
        with self._transaction() as db:
            referenced = {r[0] for r in db.execute("SELECT DISTINCT sha256 FROM versions")}
            removed += self.blobs.sweep(referenced)
        return removed

    def close(self) -> None:
        self.extractor.close()
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()
        self.blobs.close()

    # -- internals ------------------------------------------------------------------------

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

    def _ensure_column(self, table: str, column: str, declaration: str) -> None:
        """Add `column` to `table` unless it is there already (an idempotent migration)."""
        db = self._db()
        columns = {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    def _prepare(self, staged: StagedFile, filename: str) -> _Prepared:
        media_type = media_type_for(filename)
        extracted = self.extractor.extract(
            staged.path, media_type, self.chunk_chars, self.chunk_overlap_chars
        )
        return _Prepared(staged, filename, extracted.media_type, extracted.text, extracted.spans)

    def _check_queue(self, db: sqlite3.Connection) -> None:
        queued = int(db.execute("SELECT count(*) FROM jobs").fetchone()[0])
        if queued >= self.max_jobs:
            raise QueueFullError(
                f"{queued} versions are waiting to be indexed (STREAM_RAG_MAX_QUEUED_JOBS); "
                "retry later"
            )

    def _insert_version(
        self, db: sqlite3.Connection, doc_id: str, number: int, prepared: _Prepared, now: str
    ) -> None:
        db.execute(
            "INSERT INTO versions (doc_id, version, sha256, size, media_type, filename, "
            "created_at, chunk_count, status, status_reason, text) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'indexing', NULL, ?)",
            (
                doc_id,
                number,
                prepared.staged.sha256,
                prepared.staged.size,
                prepared.media_type,
                prepared.filename,
                now,
                len(prepared.spans),
                prepared.text,
            ),
        )
        db.executemany(
            "INSERT INTO chunks (id, doc_id, version, ordinal, start, end, text) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (chunk_id(doc_id, number, i), doc_id, number, i, s, e, prepared.text[s:e])
                for i, (s, e) in enumerate(prepared.spans)
            ],
        )
        # The indexing job is durable from the moment the version exists.
        db.execute(
            "INSERT INTO jobs (doc_id, version, created_at) VALUES (?, ?, ?)", (doc_id, number, now)
        )

    def _find_duplicate(
        self, sha256: str, collection: str, db: sqlite3.Connection | None = None
    ) -> UploadResult | None:
        row = (
            (db or self._db())
            .execute(
                "SELECT v.doc_id, v.version FROM versions v JOIN documents d ON d.id = v.doc_id "
                "WHERE v.sha256 = ? AND d.collection = ? ORDER BY v.version DESC LIMIT 1",
                (sha256, collection),
            )
            .fetchone()
        )
        if row is None:
            return None
        document = self.get(row["doc_id"])
        matched = next(v for v in document.versions if v.version == row["version"])
        return UploadResult(document, matched, duplicate=True)

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
        db.execute("COMMIT")


def new_document_id() -> str:
    """A random id, unrelated to the file's name or bytes."""
    return "doc_" + secrets.token_hex(10)


def chunk_id(doc_id: str, version: int, ordinal: int) -> str:
    return f"{doc_id}:v{version}:{ordinal}"


def validate_filename(filename: str) -> str:
    """Accept a bare file name; reject paths, `..`, control characters and over-long names."""
    if not filename or not filename.strip():
        raise InvalidFilenameError("the file name is empty")
    if "/" in filename or "\\" in filename:
        raise InvalidFilenameError("the file name contains a path separator")
    if filename in {".", ".."} or ".." in filename:
        raise InvalidFilenameError("the file name contains '..'")
    if any(unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp"} for ch in filename):
        raise InvalidFilenameError("the file name contains control characters")
    if len(filename) > MAX_FILENAME_CHARS:
        raise InvalidFilenameError(
            f"the file name is {len(filename)} characters long (at most {MAX_FILENAME_CHARS})"
        )
    if PurePosixPath(filename).name != filename:
        raise InvalidFilenameError("the file name is not a plain name")
    return unicodedata.normalize("NFC", filename)


def validate_display_name(name: str) -> str:
    if any(unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp"} for ch in name):
        raise InvalidFieldError("the display name contains control characters")
    if len(name) > MAX_FILENAME_CHARS or not name.strip():
        raise InvalidFieldError(f"the display name must be 1 to {MAX_FILENAME_CHARS} characters")
    return unicodedata.normalize("NFC", name.strip())


def validate_collection(collection: str) -> str:
    if not _COLLECTION.fullmatch(collection):
        raise InvalidFieldError(
            "collection must be 1-64 characters of letters, digits, '_', '.', '-'"
        )
    return collection


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _version(row: sqlite3.Row) -> Version:
    return Version(
        doc_id=row["doc_id"],
        version=row["version"],
        sha256=row["sha256"],
        size=row["size"],
        media_type=row["media_type"],
        filename=row["filename"],
        created_at=row["created_at"],
        chunk_count=row["chunk_count"],
        status=row["status"],
        status_reason=row["status_reason"],
    )


def _document(row: sqlite3.Row, versions: list[Version]) -> Document:
    return Document(
        id=row["id"],
        collection=row["collection"],
        name=row["name"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        versions=tuple(versions),
        live_version=row["live_version"],
    )


def _chunk(row: sqlite3.Row) -> Chunk:
    return Chunk(
        id=row["id"],
        doc_id=row["doc_id"],
        version=row["version"],
        ordinal=row["ordinal"],
        start=row["start"],
        end=row["end"],
        text=row["text"],
    )
