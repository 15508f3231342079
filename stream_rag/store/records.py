"""The store's records: new ids, checks of the names clients send, and rows read back as the
frozen `Document`, `Version` and `Chunk`."""

from __future__ import annotations

import json
import re
import secrets
import unicodedata
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

from ..errors import InvalidFieldError, InvalidFilenameError
from ..types import Chunk, Document, Version

MAX_FILENAME_CHARS = 255
COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
VERSION_COLUMNS = (
    "doc_id, version, sha256, size, media_type, filename, created_at, chunk_count, status, "
    "status_reason"
)


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
    if not COLLECTION_NAME.fullmatch(collection):
        raise InvalidFieldError(
            "collection must be 1-64 characters of letters, digits, '_', '.', '-'"
        )
    return collection


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def version_of(row: Any) -> Version:
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


def document_of(row: Any, versions: list[Version]) -> Document:
    return Document(
        id=row["id"],
        collection=row["collection"],
        name=row["name"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        versions=tuple(versions),
        live_version=row["live_version"],
    )


def chunk_of(row: Any) -> Chunk:
    return Chunk(
        id=row["id"],
        doc_id=row["doc_id"],
        version=row["version"],
        ordinal=row["ordinal"],
        start=row["start"],
        end=row["end"],
        text=row["text"],
        page_start=row["page_start"],
        page_end=row["page_end"],
        source_start=row["source_start"],
        source_end=row["source_end"],
        headings=tuple(json.loads(row["headings"])) if row["headings"] else (),
    )
