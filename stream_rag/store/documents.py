"""The document store: documents with stable ids, numbered versions, chunks, original bytes.

Metadata lives in SQLite (WAL, database.py); bytes live in a content-addressed `BlobStore`. An
upload is staged, extracted and chunked first, its bytes moved into place, and only then are
its rows committed in one transaction, so a crash at any point leaves no visible partial
document. What indexing keeps per version and chunk is in indexing_state.py, the reading side in
reading.py.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    ClientGoneError,
    ExtractionError,
    NotFoundError,
    QueueFullError,
    StreamRagError,
)
from ..ingest.extract import media_type_for
from ..ingest.extract_pool import Extractor, InProcessExtractor, Wanted
from ..ingest.layout import EXTRACTION_VERSION, Place
from ..types import Document, UploadResult
from . import quotas
from .blobs import BlobStore, StagedFile
from .blobs_db import DatabaseBlobStore
from .quotas import Quota
from .reading import ChunkSource, DocumentReader
from .records import (
    chunk_id,
    new_document_id,
    utc_now,
    validate_collection,
    validate_display_name,
    validate_filename,
)
from .sql import Connection

log = logging.getLogger("stream_rag")

__all__ = ["ChunkSource", "DocumentStore", "insert_chunks"]


@dataclass(frozen=True, slots=True)
class _Prepared:
    """An upload read and chunked, ready to be committed."""

    staged: StagedFile
    filename: str
    media_type: str
    text: str
    spans: list[tuple[int, int]]
    places: list[Place]
    dated: str | None = None


class DocumentStore(DocumentReader):
    """Thread-safe store; every method is blocking and meant to run in a worker thread."""

    def __init__(
        self,
        data_dir: Path,
        *,
        chunk_chars: int = 1000,
        chunk_overlap_chars: int = 150,
        extractor: Extractor | None = None,
        max_jobs: int = 10_000,
        database_url: str | None = None,
        pool_size: int = 10,
    ) -> None:
        self.data_dir = data_dir
        # The parsers: worker processes in the server (extract_pool.py); in-process default.
        self.extractor = extractor or InProcessExtractor()
        self.max_jobs = max_jobs
        self.chunk_chars = chunk_chars
        self.chunk_overlap_chars = chunk_overlap_chars
        data_dir.mkdir(parents=True, exist_ok=True)
        # The database: SQLite in the data directory, or PostgreSQL, which then holds the
        # original bytes too (the data directory keeps only staging and a cache).
        super().__init__(database_url or data_dir / "stream_rag.sqlite3", pool_size=pool_size)
        self.blobs: BlobStore = (
            BlobStore(data_dir / "blobs")
            if database_url is None
            else DatabaseBlobStore(data_dir / "blobs", self.backend)
        )
        self.sweep()

    # -- writing --------------------------------------------------------------------------

    def add(
        self,
        staged: StagedFile,
        *,
        filename: str,
        name: str | None = None,
        collection: str = "default",
        quota: Quota | None = None,
        wanted: Wanted | None = None,
    ) -> UploadResult:
        """Store a new document, or return the one that already holds these exact bytes.
        `wanted()` turning False (the uploader left) stops it before anything is stored."""
        filename = validate_filename(filename)
        display = validate_display_name(name) if name else filename
        collection = validate_collection(collection)
        existing = self._find_duplicate(staged.sha256, collection)
        if existing is not None:
            return existing
        prepared = self._prepare(staged, filename, wanted)
        now = utc_now()
        with self._transaction() as db:
            # Checked again under the write lock: a concurrent upload may have won the race.
            existing = self._find_duplicate(staged.sha256, collection, db)
            if existing is not None:
                return existing
            self._check_queue(db)
            self._admit(db, prepared, collection, True, quota, wanted)
            self.blobs.commit(staged)
            doc_id = new_document_id()
            db.execute(
                "INSERT INTO documents (id, collection, name, created_at, updated_at, owner) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (doc_id, collection, display, now, now, quota.owner if quota else None),
            )
            self._insert_version(db, doc_id, 1, prepared, now)
        document = self.get(doc_id)
        return UploadResult(document, document.latest, duplicate=False)

    def add_version(
        self,
        doc_id: str,
        staged: StagedFile,
        *,
        filename: str,
        quota: Quota | None = None,
        wanted: Wanted | None = None,
    ) -> UploadResult:
        """Add a version to `doc_id`; identical bytes to its newest version add nothing."""
        filename = validate_filename(filename)
        current = self.get(doc_id)
        if current.latest.sha256 == staged.sha256:
            return UploadResult(current, current.latest, duplicate=True)
        prepared = self._prepare(staged, filename, wanted)
        now = utc_now()
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
            self._admit(db, prepared, current.collection, False, quota, wanted)
            self.blobs.commit(staged)
            self._insert_version(db, doc_id, number, prepared, now)
            db.execute("UPDATE documents SET updated_at = ? WHERE id = ?", (now, doc_id))
        document = self.get(doc_id)
        return UploadResult(document, document.latest, duplicate=False)

    def outdated_versions(self) -> list[tuple[str, int]]:
        """Versions whose text and chunks an older extraction made (layout.EXTRACTION_VERSION)."""
        rows = self._db().execute(
            "SELECT doc_id, version FROM versions WHERE extraction IS NULL OR extraction < ? "
            "ORDER BY doc_id, version",
            (EXTRACTION_VERSION,),
        )
        return [(row["doc_id"], row["version"]) for row in rows]

    def reextract(self, doc_id: str, version: int) -> tuple[int, int]:
        """Extract and chunk a stored version again from its bytes, replacing its text and
        chunks (ids, version number, hash and bytes unchanged); `(old, new)` chunk counts.
        A version that no longer extracts keeps what it had, marked current all the same."""
        record = self.version(doc_id, version)
        try:
            extracted = self.extractor.extract(
                self.content_path(record),
                record.media_type.split(";")[0].strip(),
                self.chunk_chars,
                self.chunk_overlap_chars,
            )
        except ExtractionError as exc:  # the file's own failure: asking again would repeat it
            log.warning(
                "%s v%d kept its old text: extracting it again failed (%s)", doc_id, version, exc
            )
            with self._transaction() as db:
                db.execute(
                    "UPDATE versions SET extraction = ? WHERE doc_id = ? AND version = ?",
                    (EXTRACTION_VERSION, doc_id, version),
                )
            return record.chunk_count, record.chunk_count
        except (StreamRagError, OSError) as exc:  # not the file's: stopping, not started, gone
            self.version(doc_id, version)  # NotFoundError when deleted meanwhile
            log.warning("%s v%d is extracted again at the next start (%s)", doc_id, version, exc)
            return record.chunk_count, record.chunk_count
        places = extracted.places or [Place()] * len(extracted.spans)
        with self._transaction() as db:
            # Another process (a replica starting too, a user's delete) may have been first.
            now = db.execute(
                "SELECT extraction, chunk_count FROM versions WHERE doc_id = ? AND version = ?",
                (doc_id, version),
            ).fetchone()
            if now is None:
                raise NotFoundError(f"version {version} of {doc_id!r} was deleted")
            if now["extraction"] is not None and now["extraction"] >= EXTRACTION_VERSION:
                return int(now["chunk_count"]), int(now["chunk_count"])
            db.execute("DELETE FROM chunks WHERE doc_id = ? AND version = ?", (doc_id, version))
            insert_chunks(db, doc_id, version, extracted.text, extracted.spans, places)
            db.execute(
                "UPDATE versions SET text = ?, chunk_count = ?, extraction = ?, dated = ? "
                "WHERE doc_id = ? AND version = ?",
                (
                    extracted.text,
                    len(extracted.spans),
                    EXTRACTION_VERSION,
                    extracted.dated,
                    doc_id,
                    version,
                ),
            )
        return record.chunk_count, len(extracted.spans)

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
        super().close()
        self.blobs.close()

    # -- internals ------------------------------------------------------------------------

    def _prepare(self, staged: StagedFile, filename: str, wanted: Wanted | None) -> _Prepared:
        media_type = media_type_for(filename)
        if wanted is not None and not wanted():
            raise ClientGoneError("the client disconnected before its upload was read")
        extracted = self.extractor.extract(
            staged.path, media_type, self.chunk_chars, self.chunk_overlap_chars, wanted=wanted
        )
        return _Prepared(
            staged,
            filename,
            extracted.media_type,
            extracted.text,
            extracted.spans,
            extracted.places or [Place()] * len(extracted.spans),
            extracted.dated,
        )

    def _admit(
        self,
        db: Connection,
        prepared: _Prepared,
        collection: str,
        new_document: bool,
        quota: Quota | None,
        wanted: Wanted | None,
    ) -> None:
        """The last checks before a version is stored, under the write lock."""
        if wanted is not None and not wanted():
            # Nobody would learn the version exists: it is not stored (nor indexed).
            raise ClientGoneError("the client disconnected before its upload was stored")
        if quota is not None:
            quotas.check(
                db,
                quota,
                collection,
                new_document=new_document,
                size=prepared.staged.size,
                chunks=len(prepared.spans),
            )

    def _check_queue(self, db: Connection) -> None:
        queued = int(db.execute("SELECT count(*) FROM jobs").fetchone()[0])
        if queued >= self.max_jobs:
            raise QueueFullError(
                f"{queued} versions are waiting to be indexed (STREAM_RAG_MAX_QUEUED_JOBS); "
                "retry later"
            )

    def _insert_version(
        self, db: Connection, doc_id: str, number: int, prepared: _Prepared, now: str
    ) -> None:
        db.execute(
            "INSERT INTO versions (doc_id, version, sha256, size, media_type, filename, "
            "created_at, chunk_count, status, status_reason, text, extraction, dated) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'indexing', NULL, ?, ?, ?)",
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
                EXTRACTION_VERSION,
                prepared.dated,
            ),
        )
        insert_chunks(db, doc_id, number, prepared.text, prepared.spans, prepared.places)
        # The indexing job is durable from the moment the version exists.
        db.execute(
            "INSERT INTO jobs (doc_id, version, created_at) VALUES (?, ?, ?)", (doc_id, number, now)
        )

    def _find_duplicate(
        self, sha256: str, collection: str, db: Connection | None = None
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


def insert_chunks(
    db: Connection,
    doc_id: str,
    version: int,
    text: str,
    spans: Sequence[tuple[int, int]],
    places: Sequence[Place],
) -> None:
    """Rows for a version's chunks, each with its text and where it came from."""
    db.executemany(
        'INSERT INTO chunks (id, doc_id, version, ordinal, start, "end", text, page_start, '
        "page_end, source_start, source_end, headings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                chunk_id(doc_id, version, i),
                doc_id,
                version,
                i,
                s,
                e,
                text[s:e],
                place.page_start,
                place.page_end,
                place.source_start,
                place.source_end,
                json.dumps(place.headings, ensure_ascii=False) if place.headings else None,
            )
            for i, ((s, e), place) in enumerate(zip(spans, places, strict=True))
        ],
    )
