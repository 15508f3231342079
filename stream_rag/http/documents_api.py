"""Routes of documents and their versions: upload, list, read, delete, chunks and bytes."""

from __future__ import annotations

import codecs
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from urllib.parse import quote

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from ..access import tenancy
from ..errors import NotFoundError
from ..ingest.extract import DOCX
from ..store.quotas import Quota
from ..types import Chunk, Document, UploadResult, Version
from . import names, state
from .upload import read_upload
from .web import not_modified

MIB = 1024 * 1024
# Uploaded HTML must never run as a page of this origin; these types are safe to show inline.
_INLINE_TYPES = ("text/plain", "text/markdown", "application/pdf")


async def upload_document(request: Request) -> JSONResponse:
    settings, store = state.settings(request), state.store(request)
    form = await read_upload(request, store.blobs, settings.max_upload_bytes)
    try:
        collection = tenancy.collection_for(
            request, form.fields.get("collection"), settings.default_collection
        )
        result = await stored(
            request,
            collection,
            partial(
                store.add,
                form.staged,
                filename=form.filename,
                name=names.display_name(
                    form.fields.get("name") or form.filename,
                    refuse=settings.refuse_confusable_names,
                ),
                collection=collection,
                quota=quota(request, collection),
            ),
        )
    finally:
        form.discard()
    if not result.duplicate:
        state.queue(request).submit(result.document.id, result.version.version, collection)
    return JSONResponse(
        state.public(request, result.to_json()), status_code=200 if result.duplicate else 201
    )


async def add_version(request: Request) -> JSONResponse:
    settings, store = state.settings(request), state.store(request)
    doc_id = request.path_params["doc_id"]
    # 404 before reading the body
    document = await anyio.to_thread.run_sync(store.get, doc_id)
    collection = tenancy.visible(request, document, "write").collection
    form = await read_upload(request, store.blobs, settings.max_upload_bytes)
    try:
        result = await stored(
            request,
            collection,
            partial(
                store.add_version,
                doc_id,
                form.staged,
                filename=form.filename,
                quota=quota(request, collection),
            ),
        )
    finally:
        form.discard()
    if not result.duplicate:
        state.queue(request).submit(doc_id, result.version.version, collection)
    return JSONResponse(
        state.public(request, result.to_json()), status_code=200 if result.duplicate else 201
    )


def quota(request: Request, collection: str) -> Quota:
    """The collection's quota, and the key's unless it is an admin's (or open mode's)."""
    settings, who = state.settings(request), tenancy.principal(request)
    return Quota(
        owner=None if who.admin else who.id,
        key_documents=settings.key_max_documents,
        key_bytes=int(settings.key_max_mb * MIB),
        key_chunks=settings.key_max_chunks,
        collection_documents=settings.collection_max_documents,
        collection_bytes=int(settings.collection_max_mb * MIB),
        collection_chunks=settings.collection_max_chunks,
    )


async def stored(
    request: Request, collection: str, store: Callable[..., UploadResult]
) -> UploadResult:
    """Run `store(wanted=...)` in a worker thread once this tenant's turn for an extraction
    slot comes (ingest/fairness.py). If the client leaves first, nothing is stored: `wanted`
    turns False, which the store and the extraction worker check."""
    gone = threading.Event()
    slots = state.services(request).upload_limiter
    tenant = (tenancy.principal(request).id, collection)
    work = partial(store, wanted=_unless(gone))
    results: list[UploadResult] = []
    failed: list[Exception] = []  # raised after the group, not wrapped in an ExceptionGroup
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            gone.set()

        group.start_soon(watch)
        try:
            if slots is None:
                results.append(await anyio.to_thread.run_sync(work))
            else:
                async with slots.slot(tenant):
                    results.append(await anyio.to_thread.run_sync(work))
        except Exception as exc:
            failed.append(exc)
        finally:
            group.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return results[0]


def _unless(gone: threading.Event) -> Callable[[], bool]:
    return lambda: not gone.is_set()


async def list_documents(request: Request) -> JSONResponse:
    collection = request.query_params.get("collection") or None
    if collection is not None:
        tenancy.collection_for(request, collection, state.settings(request).default_collection)
    documents = await anyio.to_thread.run_sync(state.store(request).list_documents, collection)
    documents = tenancy.readable(request, documents)
    return JSONResponse(state.public(request, {"documents": [d.to_json() for d in documents]}))


async def get_document(request: Request) -> JSONResponse:
    document = await _document(request, "read")
    return JSONResponse(state.public(request, document.to_json()))


async def delete_document(request: Request) -> JSONResponse:
    await _document(request, "write")
    indexer = state.services(request).indexer
    document = await anyio.to_thread.run_sync(indexer.delete, request.path_params["doc_id"])
    body = {"deleted": document.id, "name": document.name, "versions": len(document.versions)}
    return JSONResponse(body)


async def get_version(request: Request) -> JSONResponse:
    await _document(request, "read")
    record = await _version(request, _version_number(request))
    return JSONResponse(state.public(request, record.to_json()))


async def get_chunks(request: Request) -> JSONResponse:
    doc_id, number = request.path_params["doc_id"], _version_number(request)
    await _document(request, "read")
    chunks = await anyio.to_thread.run_sync(state.store(request).chunks, doc_id, number)
    return JSONResponse({"chunks": [c.to_json() for c in chunks]})


async def latest_content(request: Request) -> Response:
    document = await _document(request, "download")
    await tenancy.downloadable(request, document, document.latest.version)
    return await _content(request, await _version(request, None), latest=True)


async def version_content(request: Request) -> Response:
    await tenancy.downloadable(
        request, await _document(request, "download"), _version_number(request)
    )
    return await _content(request, await _version(request, _version_number(request)), latest=False)


async def version_text(request: Request) -> JSONResponse:
    """`?chunk=<chunk id>`: what the widget's reader shows of a version, with the cited chunk's
    span `[start, end)` in it (and its PDF page). A Markdown or plain-text file is its stored
    text (the reader renders it; the chunk's source span places the passage); other kinds are
    the extracted text (HTML's text, PDF, DOCX). Who may download the version may read this."""
    number = _version_number(request)
    document = await _document(request, "download")
    await tenancy.downloadable(request, document, number)
    record = await _version(request, number)
    store = state.store(request)
    chunk = None
    wanted = request.query_params.get("chunk")
    if wanted:
        found = await anyio.to_thread.run_sync(store.chunks_by_id, [wanted])
        chunk = found.get(wanted)
        if chunk is None or (chunk.doc_id, chunk.version) != (document.id, number):
            raise NotFoundError(f"version {number} of {document.id!r} has no chunk {wanted!r}")
    media_type = record.media_type.split(";")[0]
    shown = None
    if media_type in _SOURCE_SHOWN and (chunk is None or chunk.source_start is not None):
        path = await anyio.to_thread.run_sync(store.content_path, record)
        shown = await anyio.to_thread.run_sync(partial(_source_text, path, chunk))
    if shown is None:
        text = await anyio.to_thread.run_sync(store.text, document.id, number)
        span = None if chunk is None else (chunk.start, chunk.end)
        shown = (text, span, False)
    text, span, source = shown
    passage: dict[str, object] | None = None
    if chunk is not None and span is not None:
        passage = {"chunk_id": chunk.id, "start": span[0], "end": span[1]}
        if chunk.page_start is not None:
            passage["page"] = chunk.page_start
        passage.update(_original_place(media_type, chunk))
    body = {
        "doc_id": document.id,
        "version": number,
        "name": document.name,
        "filename": record.filename,
        "media_type": media_type,
        "source": source,
        "text": text,
        "passage": passage,
    }
    return JSONResponse(body, headers={"Cache-Control": "private, max-age=3600"})


def _original_place(media_type: str, chunk: Chunk) -> dict[str, object]:
    """Where the passage is in the original file, for a viewer of it: a PDF's offsets in the
    text of its first and last pages, a DOCX's paragraphs and table rows (ingest/layout.py)."""
    if chunk.source_start is None or chunk.source_end is None:
        return {}
    if media_type == "application/pdf" and chunk.page_end is not None:
        return {
            "page_offset": chunk.source_start,
            "end_page": chunk.page_end,
            "end_page_offset": chunk.source_end,
        }
    if media_type == DOCX:
        return {"docx_items": [chunk.source_start, chunk.source_end]}
    return {}


# Kinds whose stored file the reader shows itself (rendered Markdown, plain text).
_SOURCE_SHOWN = ("text/markdown", "text/plain")


def _source_text(
    path: Path, chunk: Chunk | None
) -> tuple[str, tuple[int, int] | None, bool] | None:
    """The stored UTF-8 file's text and the chunk's byte span as characters; None for a file
    this cannot read (UTF-16): the caller shows the extracted text."""
    data = path.read_bytes()
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if chunk is None or chunk.source_start is None or chunk.source_end is None:
        return text, None, True

    def chars(offset: int) -> int:
        prefix = data[len(codecs.BOM_UTF8) if bom else 0 : offset]
        return len(prefix.decode("utf-8", errors="ignore"))

    return text, (chars(chunk.source_start), chars(chunk.source_end)), True


async def _document(request: Request, scope: str) -> Document:
    """The path's document, or 404 (the same as an unknown id) if the key may not see it."""
    store = state.store(request)
    document = await anyio.to_thread.run_sync(store.get, request.path_params["doc_id"])
    return tenancy.visible(request, document, scope)


async def _version(request: Request, number: int | None) -> Version:
    store = state.store(request)
    return await anyio.to_thread.run_sync(store.version, request.path_params["doc_id"], number)


async def _content(request: Request, record: Version, *, latest: bool) -> Response:
    """A version's bytes never change, so `/versions/{n}/content` is immutable; the newest
    version's URL moves when a version is added, so it must revalidate (ETag, 304)."""
    etag = f'"{record.sha256}"'
    caching = {
        "ETag": etag,
        "Cache-Control": "private, no-cache" if latest else "private, max-age=31536000, immutable",
    }
    if not_modified(request, etag):
        return Response(status_code=304, headers=caching)
    path = await anyio.to_thread.run_sync(state.store(request).content_path, record)
    inline = record.media_type.startswith(_INLINE_TYPES)
    return FileResponse(
        path,
        media_type=record.media_type,
        headers={
            "Content-Disposition": content_disposition(record.filename, inline=inline),
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox",
            **caching,
        },
    )


def content_disposition(filename: str, *, inline: bool = False) -> str:
    """RFC 6266: an ASCII fallback plus the exact name in RFC 5987 `filename*`."""
    fallback = "".join(ch if 32 <= ord(ch) < 127 and ch not in '"\\' else "_" for ch in filename)
    kind = "inline" if inline else "attachment"
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def _version_number(request: Request) -> int:
    raw = request.path_params["n"]
    if not state.is_ascii_int(raw) or int(raw) < 1:
        raise NotFoundError(f"version must be a positive integer, got {raw!r}")
    return int(raw)
