"""The reading side of the document store: documents, versions, texts and chunks as stored
(`DocumentStore` in documents.py adds and removes them)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import NotFoundError
from ..types import Chunk, Document, Version
from .blobs import BlobStore
from .database import in_batches
from .indexing_state import IndexingState
from .records import VERSION_COLUMNS, chunk_of, document_of, version_of


@dataclass(frozen=True, slots=True)
class ChunkSource:
    """A chunk with what a citation shows of its document and version."""

    chunk: Chunk
    name: str
    filename: str
    sha256: str
    dated: str | None = None  # when the version says it was last updated (ingest/dates.py)


class DocumentReader(IndexingState):
    """Reads of `DocumentStore`; every method is blocking and meant to run in a worker thread."""

    blobs: BlobStore

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
            for vrow in db.execute(f"SELECT {VERSION_COLUMNS} FROM versions ORDER BY version"):
                if vrow["doc_id"] not in wanted:
                    continue
                versions.setdefault(vrow["doc_id"], []).append(version_of(vrow))
        return [document_of(row, versions[row["id"]]) for row in rows if row["id"] in versions]

    def get(self, doc_id: str) -> Document:
        with self._snapshot() as db:
            row = db.execute("SELECT * FROM documents WHERE id = ?", (doc_id,)).fetchone()
            vrows = db.execute(
                f"SELECT {VERSION_COLUMNS} FROM versions WHERE doc_id = ? ORDER BY version",
                (doc_id,),
            ).fetchall()
        if row is None or not vrows:
            raise NotFoundError(f"no document with id {doc_id!r}")
        return document_of(row, [version_of(v) for v in vrows])

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
        path = self.blobs.fetch(record.sha256)
        if path is None:
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
        return [chunk_of(row) for row in rows]

    def chunk_sources(self, chunk_ids: Sequence[str]) -> dict[str, ChunkSource]:
        """Chunks with their document's name and version record, read in one statement so a
        concurrent delete either removes a chunk from the answer or leaves it whole."""
        found: dict[str, ChunkSource] = {}
        with self._snapshot() as db:
            for batch, marks in in_batches(chunk_ids):
                for row in db.execute(
                    "SELECT c.*, d.name AS doc_name, v.filename AS filename, v.sha256 AS sha256, "
                    "v.dated AS dated "
                    "FROM chunks c "
                    "JOIN versions v ON v.doc_id = c.doc_id AND v.version = c.version "
                    f"JOIN documents d ON d.id = c.doc_id WHERE c.id IN ({marks})",
                    batch,
                ):
                    found[row["id"]] = ChunkSource(
                        chunk_of(row), row["doc_name"], row["filename"], row["sha256"], row["dated"]
                    )
        return found

    def count(self) -> int:
        return int(self._db().execute("SELECT count(*) FROM documents").fetchone()[0])

    def live_versions(self, doc_ids: Collection[str]) -> dict[str, int]:
        """The version retrieval may return, per document id (absent: none is live)."""
        if not doc_ids:
            return {}
        found: dict[str, int] = {}
        for batch, marks in in_batches(doc_ids):
            for row in self._db().execute(
                f"SELECT id, live_version FROM documents WHERE id IN ({marks}) "
                "AND live_version IS NOT NULL",
                batch,
            ):
                found[row["id"]] = row["live_version"]
        return found

    def chunks_by_id(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        found: dict[str, Chunk] = {}
        for batch, marks in in_batches(chunk_ids):
            for row in self._db().execute(f"SELECT * FROM chunks WHERE id IN ({marks})", batch):
                found[row["id"]] = chunk_of(row)
        return found
