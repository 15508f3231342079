"""Frozen records that travel between modules."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, slots=True)
class Version:
    """One stored revision of a document: its exact bytes and how they were read."""

    doc_id: str
    version: int
    sha256: str
    size: int
    media_type: str
    filename: str
    created_at: str
    chunk_count: int
    status: str
    status_reason: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "doc_id": self.doc_id,
            "version": self.version,
            "sha256": self.sha256,
            "size": self.size,
            "media_type": self.media_type,
            "filename": self.filename,
            "created_at": self.created_at,
            "chunk_count": self.chunk_count,
            "status": self.status,
            "status_reason": self.status_reason,
            "url": f"/v1/documents/{self.doc_id}/versions/{self.version}/content",
        }


@dataclass(frozen=True, slots=True)
class Document:
    """A logical file with a stable id; `versions` is ordered oldest first."""

    id: str
    collection: str
    name: str
    created_at: str
    updated_at: str
    versions: tuple[Version, ...]
    live_version: int | None = None

    @property
    def latest(self) -> Version:
        return self.versions[-1]

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "collection": self.collection,
            "name": self.name,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "latest_version": self.latest.version,
            "live_version": self.live_version,
            "versions": [v.to_json() for v in self.versions],
            "url": f"/v1/documents/{self.id}/content",
        }


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span `[start, end)` of a version's extracted text, with that text."""

    id: str
    doc_id: str
    version: int
    ordinal: int
    start: int
    end: int
    text: str
    # The PDF pages it is on (1-based) and where it is in the original (ingest/layout.py):
    # bytes of the stored file (Markdown, HTML, plain text), the body's paragraphs and table
    # rows (DOCX), offsets in its first and last pages' texts (PDF); None where not known.
    page_start: int | None = None
    page_end: int | None = None
    source_start: int | None = None
    source_end: int | None = None
    headings: tuple[str, ...] = ()  # the headings it stands under, outermost first ("## Fees")

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "doc_id": self.doc_id,
            "version": self.version,
            "ordinal": self.ordinal,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "page_start": self.page_start,
            "page_end": self.page_end,
            "source_start": self.source_start,
            "source_end": self.source_end,
            "headings": [line.lstrip("#").strip() for line in self.headings],
        }


@dataclass(frozen=True, slots=True)
class UploadResult:
    """What an upload did: the document, the version it produced or matched, and whether
    the bytes were already stored."""

    document: Document
    version: Version
    duplicate: bool

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> UploadResult:
        document = body["document"]
        versions = tuple(_version_from_json(v) for v in document["versions"])
        return cls(
            Document(
                id=document["id"],
                collection=document["collection"],
                name=document["name"],
                created_at=document["created_at"],
                updated_at=document["updated_at"],
                versions=versions,
                live_version=document.get("live_version"),
            ),
            _version_from_json(body["version"]),
            bool(body["duplicate"]),
        )

    def to_json(self) -> dict[str, object]:
        return {
            "document": self.document.to_json(),
            "version": self.version.to_json(),
            "duplicate": self.duplicate,
        }


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message as a chat model takes it (the prompt is built in answer/prompt.py)."""

    role: str
    content: str

    def to_json(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, slots=True)
class Turn:
    """An earlier question and the verified answer it got ("" if it got none)."""

    question: str
    answer: str = ""

    def to_json(self) -> dict[str, str]:
        return {"question": self.question, "answer": self.answer}


def _version_from_json(body: dict[str, Any]) -> Version:
    return Version(**{f.name: body[f.name] for f in fields(Version)})
