"""Quotas: the documents, bytes and chunks one key and one collection may store. Checked under
the store's write lock, so concurrent uploads cannot pass one together. Past one: 507, as
WebDAV's quotas answer (RFC 4331 section 6); docs/decisions/ingest-quotas.md."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from .sql import Connection


class QuotaExceededError(InputError):
    """Storing this would pass a key's or a collection's quota (507)."""

    code = "quota_exceeded"
    status = 507


@dataclass(frozen=True, slots=True)
class Quota:
    """Limits for one upload's owner and collection; 0 means no limit. `owner` is the key
    storing (None: an admin key, open mode or the CLI, which no key quota binds)."""

    owner: str | None = None
    key_documents: int = 0
    key_bytes: int = 0
    key_chunks: int = 0
    collection_documents: int = 0
    collection_bytes: int = 0
    collection_chunks: int = 0


@dataclass(frozen=True, slots=True)
class Usage:
    documents: int
    bytes: int
    chunks: int


_USAGE = (
    "SELECT count(DISTINCT d.id) AS documents, coalesce(sum(v.size), 0) AS bytes, "
    "coalesce(sum(v.chunk_count), 0) AS chunks "
    "FROM documents d JOIN versions v ON v.doc_id = d.id WHERE d.{column} = ?"
)


def usage(db: Connection, column: str, value: str) -> Usage:
    assert column in ("collection", "owner")
    row = db.execute(_USAGE.format(column=column), (value,)).fetchone()
    return Usage(int(row[0]), int(row[1]), int(row[2]))


def check(
    db: Connection,
    quota: Quota,
    collection: str,
    *,
    new_document: bool,
    size: int,
    chunks: int,
) -> None:
    """Raise `QuotaExceededError` if adding a version of `size` bytes and `chunks` chunks (to
    a new document, or not) passes the collection's or the owner's quota."""
    limits = [
        ("collection", collection, "collection", quota.collection_documents,
         quota.collection_bytes, quota.collection_chunks),
    ]  # fmt: skip
    if quota.owner is not None:
        limits.append(
            ("owner", quota.owner, "key", quota.key_documents, quota.key_bytes, quota.key_chunks)
        )
    for column, value, what, documents, size_limit, chunk_limit in limits:
        if not (documents or size_limit or chunk_limit):
            continue
        used = usage(db, column, value)
        for limit, total, unit, setting in (
            (documents, used.documents + new_document, "documents", "DOCUMENTS"),
            (size_limit, used.bytes + size, "bytes", "MB"),
            (chunk_limit, used.chunks + chunks, "chunks", "CHUNKS"),
        ):
            if limit and total > limit:
                name = f"STREAM_RAG_{what.upper()}_MAX_{setting}"
                shown = f"{limit / 1048576:g} MB" if unit == "bytes" else f"{limit:,} {unit}"
                raise QuotaExceededError(
                    f"this would pass the {what}'s quota of {shown} ({name}); delete documents "
                    "or ask an admin to raise it"
                )
