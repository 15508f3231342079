"""The HTTP API: a Starlette app whose shared resources live in the lifespan state."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TypedDict
from urllib.parse import quote

import anyio.to_thread
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ..access import tenancy
from ..access.guard import Guard, HostCheck
from ..access.principals import Access
from ..answer.conversation import history_of
from ..answer.pipeline import Options
from ..config import Settings
from ..embed.backends import Embedder
from ..errors import InputError, InvalidFieldError, NotFoundError, StreamRagError
from ..events import SentenceOut, to_sse
from ..index.base import Index
from ..index.doctor import startup_check
from ..index.jobs import IndexQueue
from ..ingest.upload import read_upload
from ..model.llm import ChatModel
from ..retrieve.rerank import Reranker
from ..services import Services, open_services
from ..store.documents import DocumentStore
from ..types import Document, Version
from . import health, keys_api, openai_compat, openapi
from .bodytimeout import BodyDeadline
from .lifecycle import Drain, unless_client_leaves
from .limits import check_question, read_json
from .telemetry import PROMETHEUS_TEXT, ObservedApp, Telemetry
from .web import EventIds, absolute_urls, cors_middleware, is_reconnect, not_modified

log = logging.getLogger("stream_rag")

STATIC_DIR = Path(__file__).resolve().parents[2] / "static"
# Uploaded HTML must never run as a page of this origin; these types are safe to show inline.
_INLINE_TYPES = ("text/plain", "text/markdown", "application/pdf")


class State(TypedDict):
    settings: Settings
    store: DocumentStore
    services: Services
    queue: IndexQueue
    access: Access
    startup: health.StartupIndexing


def create_app(
    settings: Settings | None = None,
    *,
    embedder: Embedder | None = None,
    index: Index | None = None,
    reranker: Reranker | None = None,
    model: ChatModel | None = None,
) -> Starlette:
    """Build the app; resources are opened in the lifespan, not at import time. Explicit
    `embedder`, `index` and `reranker` replace the configured backends."""
    settings = settings or Settings.from_env()
    telemetry = Telemetry()
    drain = Drain(settings.drain_s)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[State]:
        access = await Access.open(settings)  # refuses open mode beyond loopback
        services = await anyio.to_thread.run_sync(
            partial(
                open_services,
                settings,
                embedder=embedder,
                index=index,
                reranker=reranker,
                model=model,
                telemetry=telemetry,
            )
        )
        log.info(services.dense_status)
        services.upload_limiter = anyio.CapacityLimiter(settings.extract_workers + 1)
        _bind_gauges(services)
        queue = IndexQueue(
            services.indexer,
            workers=settings.index_workers,
            batch=settings.index_batch,
            max_attempts=settings.index_max_attempts,
        )
        services.answerer.drain = drain
        # SIGTERM: indexing stops after the batch in hand (the rest resumes on restart).
        drain.on_drain(queue.stop)
        try:
            backlog = await anyio.to_thread.run_sync(services.indexer.reconcile)
            backlog += await anyio.to_thread.run_sync(startup_check, services.indexer)
            queue.submit_all(backlog)
            async with anyio.create_task_group() as group:
                group.start_soon(queue.run)
                async with anyio.create_task_group() as watchers:
                    watchers.start_soon(drain.run)
                    yield {
                        "settings": settings,
                        "store": services.store,
                        "services": services,
                        "queue": queue,
                        "access": access,
                        "startup": health.StartupIndexing(backlog),
                    }
                    watchers.cancel_scope.cancel()
                queue.close()
        finally:
            await services.aclose()
            await anyio.to_thread.run_sync(services.close)

    routes: list[BaseRoute] = [
        Route("/", home),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics),
        Route("/openapi.json", openapi_document),
        Route("/v1/documents", upload_document, methods=["POST"]),
        Route("/v1/documents", list_documents, methods=["GET"]),
        Route("/v1/documents/{doc_id}", get_document, methods=["GET"]),
        Route("/v1/documents/{doc_id}", delete_document, methods=["DELETE"]),
        Route("/v1/documents/{doc_id}/content", latest_content, methods=["GET", "HEAD"]),
        Route("/v1/search", search, methods=["POST"]),
        Route("/v1/index/optimize", optimize_index, methods=["POST"]),
        Route("/v1/chat", chat, methods=["GET", "POST"]),
        Route("/v1/answer", answer, methods=["POST"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
        *keys_api.routes(),
        Route("/v1/documents/{doc_id}/versions", add_version, methods=["POST"]),
        Route("/v1/documents/{doc_id}/versions/{n}", get_version, methods=["GET"]),
        Route("/v1/documents/{doc_id}/versions/{n}/chunks", get_chunks, methods=["GET"]),
        Route(
            "/v1/documents/{doc_id}/versions/{n}/content", version_content, methods=["GET", "HEAD"]
        ),
    ]
    if STATIC_DIR.is_dir():
        routes.append(Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"))
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        # Outermost: every request, CORS preflights included, gets an id and is counted.
        middleware=[
            Middleware(ObservedApp, telemetry=telemetry),
            Middleware(
                BodyDeadline, timeout_s=settings.body_timeout_s, min_kb_s=settings.body_min_kb_s
            ),
            Middleware(HostCheck, settings=settings),
            *cors_middleware(settings),
            Middleware(Guard, settings=settings),
        ],
        exception_handlers={
            StreamRagError: stream_rag_error,
            HTTPException: http_error,
            Exception: internal_error,
        },
    )
    app.state.telemetry = telemetry
    app.state.drain = drain  # `stream-rag serve` starts it on SIGTERM
    return app


# -- handlers ---------------------------------------------------------------------------------


async def home(request: Request) -> Response:
    """The page: the chat widget and the Documents panel (static/index.html)."""
    if (STATIC_DIR / "index.html").is_file():
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})
    return JSONResponse({"service": "stream_rag", "docs": "see README.md"})


async def openapi_document(request: Request) -> JSONResponse:
    return JSONResponse(openapi.document())


async def healthz(request: Request) -> JSONResponse:
    """Liveness: the event loop answers. No I/O and no thread hop, so a busy worker pool
    cannot make a live process look dead."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> JSONResponse:
    """Readiness: store, index, embedder and model answer, and the versions queued at start-up
    are indexed; 503 naming what failed."""
    drain: Drain = request.app.state.drain
    queue = _queue(request)
    startup: health.StartupIndexing = request.state.startup
    ready, body = await health.readiness(
        _services(request),
        queue.depth,
        startup_backlog=startup.waiting(queue),
        draining=drain.draining,
    )
    if not tenancy.principal(request).admin:  # counts and versions are not for tenants
        body = {"status": body["status"], "failed": body["failed"]}
    return JSONResponse(body, status_code=200 if ready else 503)


async def metrics(request: Request) -> Response:
    """Prometheus text exposition of the service's metrics."""
    body = await anyio.to_thread.run_sync(_services(request).telemetry.render)
    return Response(body, media_type=PROMETHEUS_TEXT)


def _bind_gauges(services: Services) -> None:
    queries = services.retriever.queries
    services.telemetry.bind(
        index_points=services.index.count,
        queue_depth=lambda: len(services.store.pending()),
        cache=None if queries is None else lambda: (queries.hits, queries.misses),
    )


async def upload_document(request: Request) -> JSONResponse:
    settings, store = _settings(request), _store(request)
    form = await read_upload(request, store.blobs, settings.max_upload_bytes)
    try:
        collection = tenancy.collection_for(
            request, form.fields.get("collection"), settings.default_collection
        )
        result = await anyio.to_thread.run_sync(
            partial(
                store.add,
                form.staged,
                filename=form.filename,
                name=form.fields.get("name") or None,
                collection=collection,
            ),
            limiter=_services(request).upload_limiter,
        )
    finally:
        form.discard()
    if not result.duplicate:
        _queue(request).submit(result.document.id, result.version.version)
    return JSONResponse(
        _public(request, result.to_json()), status_code=200 if result.duplicate else 201
    )


async def add_version(request: Request) -> JSONResponse:
    settings, store = _settings(request), _store(request)
    doc_id = request.path_params["doc_id"]
    # 404 before reading the body
    tenancy.visible(request, await anyio.to_thread.run_sync(store.get, doc_id), "write")
    form = await read_upload(request, store.blobs, settings.max_upload_bytes)
    try:
        result = await anyio.to_thread.run_sync(
            partial(store.add_version, doc_id, form.staged, filename=form.filename),
            limiter=_services(request).upload_limiter,
        )
    finally:
        form.discard()
    if not result.duplicate:
        _queue(request).submit(doc_id, result.version.version)
    return JSONResponse(
        _public(request, result.to_json()), status_code=200 if result.duplicate else 201
    )


async def list_documents(request: Request) -> JSONResponse:
    collection = request.query_params.get("collection") or None
    if collection is not None:
        tenancy.collection_for(request, collection, _settings(request).default_collection)
    documents = await anyio.to_thread.run_sync(_store(request).list_documents, collection)
    documents = tenancy.readable(request, documents)
    return JSONResponse(_public(request, {"documents": [d.to_json() for d in documents]}))


async def get_document(request: Request) -> JSONResponse:
    document = await _document(request, "read")
    return JSONResponse(_public(request, document.to_json()))


async def delete_document(request: Request) -> JSONResponse:
    await _document(request, "write")
    indexer = _services(request).indexer
    document = await anyio.to_thread.run_sync(indexer.delete, request.path_params["doc_id"])
    return JSONResponse({"deleted": document.id, "versions": len(document.versions)})


async def get_version(request: Request) -> JSONResponse:
    await _document(request, "read")
    record = await _version(request, _version_number(request))
    return JSONResponse(_public(request, record.to_json()))


async def get_chunks(request: Request) -> JSONResponse:
    doc_id, number = request.path_params["doc_id"], _version_number(request)
    await _document(request, "read")
    chunks = await anyio.to_thread.run_sync(_store(request).chunks, doc_id, number)
    return JSONResponse({"chunks": [c.to_json() for c in chunks]})


async def latest_content(request: Request) -> Response:
    document = await _document(request, "download")
    tenancy.downloadable(request, document, document.latest.version)
    return await _content(request, await _version(request, None), latest=True)


async def version_content(request: Request) -> Response:
    tenancy.downloadable(request, await _document(request, "download"), _version_number(request))
    return await _content(request, await _version(request, _version_number(request)), latest=False)


async def search(request: Request) -> JSONResponse:
    body = await _json_object(request)
    query = body.get("query")
    if not isinstance(query, str):
        raise InvalidFieldError("'query' must be a string")
    check_question(query, "query")
    collection = body.get("collection")
    top_k = body.get("top_k")
    weights = body.get("weights")
    fusion = body.get("fusion")
    collection = tenancy.collection_for(request, collection, _settings(request).default_collection)
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool)):
        raise InvalidFieldError("'top_k' must be an integer")
    if weights is not None and not (
        isinstance(weights, dict)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in weights.values())
    ):
        raise InvalidFieldError("'weights' must be an object of numbers, e.g. {\"dense\": 0.5}")
    if fusion is not None and not isinstance(fusion, str):
        raise InvalidFieldError("'fusion' must be 'weighted' or 'rrf'")
    result = await _services(request).retriever.search(
        query, collection=collection, top_k=top_k, weights=weights, fusion=fusion
    )
    return JSONResponse(_public(request, result.to_json()))


async def optimize_index(request: Request) -> JSONResponse:
    """Give the embedded index HNSW graphs (a child process builds them on a copy; searches go
    on meanwhile). Admin only, like every route access.py does not list."""
    build = getattr(_services(request).index, "build_hnsw", None)
    if build is None:
        raise InputError("only the embedded index is optimised here; Qdrant builds its own HNSW")
    timings = await anyio.to_thread.run_sync(build)
    return JSONResponse({"optimized": True, **timings})


async def chat(request: Request) -> Response:
    """`POST {"question", "collection"?, "top_k"?, "min_evidence"?, "check_conflicts"?,
    "gate_threshold"?}` or `GET ?q=&collection=&top_k=` (for EventSource): the gated answer as
    Server-Sent Events, each with an `id:`."""
    if request.method == "GET":
        if is_reconnect(request):
            return Response(status_code=204)
        params = request.query_params
        raw_top_k = params.get("top_k")
        if raw_top_k is not None and not _is_ascii_int(raw_top_k):
            raise InvalidFieldError("'top_k' must be an integer")
        body: dict[str, object] = {
            "question": params.get("q") or params.get("question"),
            "collection": params.get("collection"),
            "top_k": int(raw_top_k) if raw_top_k else None,
        }
    else:
        body = await _json_object(request)
    question = question_of(body)
    options = _scoped(request, body, answer_options(body))
    services, base_url, ids = _services(request), _settings(request).public_url, EventIds()
    record = tenancy.citation_recorder(request)

    async def events() -> AsyncIterator[ServerSentEvent]:
        # The answerer ends every stream with `done` or `error` (shutting_down included).
        async for event in services.answerer.stream(question, options):
            if isinstance(event, SentenceOut):
                record(event.citations)
            yield to_sse(event, id=ids.next(), base_url=base_url)

    settings = _settings(request)
    return EventSourceResponse(
        events(),
        ping=settings.sse_ping_s,
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        # sse-starlette cuts streams at once on SIGTERM unless given a grace period; ours
        # end themselves after STREAM_RAG_DRAIN_S with `error: shutting_down`.
        shutdown_event=anyio.Event(),
        shutdown_grace_period=settings.drain_s + 5,
    )


async def answer(request: Request) -> JSONResponse:
    """The non-streaming answer, with its attempts and their verdicts."""
    body = await _json_object(request)
    question = question_of(body)
    options = _scoped(request, body, answer_options(body))
    answerer = _services(request).answerer
    # A client that leaves cancels the answer, which closes the model request.
    result = await unless_client_leaves(
        request.receive, partial(answerer.answer, question, options)
    )
    if result is None:
        return _client_gone()
    record = tenancy.citation_recorder(request)
    for sentence in result.sentences:
        record(sentence.citations)
    return JSONResponse(_public(request, result.to_json()))


def question_of(body: dict[str, object]) -> str:
    question = body.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InvalidFieldError("'question' must be a non-empty string")
    return check_question(question)


def answer_options(body: dict[str, object]) -> Options:
    """Per-request overrides, checked: collection, top_k, min_evidence, check_conflicts,
    gate_threshold, and the conversation's earlier turns (`history`)."""
    collection, top_k = body.get("collection"), body.get("top_k")
    if collection is not None and not isinstance(collection, str):
        raise InvalidFieldError("'collection' must be a string")
    if top_k is not None and (
        not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= 100
    ):
        raise InvalidFieldError("'top_k' must be an integer between 1 and 100")
    floats: dict[str, float | None] = {}
    for name in ("min_evidence", "gate_threshold"):
        value = body.get(name)
        if value is not None and (
            not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1
        ):
            raise InvalidFieldError(f"'{name}' must be a number between 0 and 1")
        floats[name] = None if value is None else float(value)
    check = body.get("check_conflicts")
    if check is not None and not isinstance(check, bool):
        raise InvalidFieldError("'check_conflicts' must be true or false")
    return Options(
        collection=collection,
        top_k=top_k,
        min_evidence=floats["min_evidence"],
        check_conflicts=check,
        gate_threshold=floats["gate_threshold"],
        history=history_of(body.get("history")),
    )


async def chat_completions(request: Request) -> Response:
    body = await _json_object(request)
    tenancy.check_overrides(request, body)
    body["collection"] = tenancy.collection_for(
        request, body.get("collection"), _settings(request).default_collection
    )
    endpoint = openai_compat.CompletionsEndpoint(
        _services(request).answerer,
        reference_links=_settings(request).openai_reference_links,
        on_cited=tenancy.citation_recorder(request),
    )
    response = await unless_client_leaves(request.receive, partial(endpoint.handle, body))
    return _client_gone() if response is None else response


async def list_models(request: Request) -> Response:
    return openai_compat.models()


# -- helpers ----------------------------------------------------------------------------------


def _scoped(request: Request, body: dict[str, object], options: Options) -> Options:
    """Options inside the key's collections, with safety overrides only for admins."""
    tenancy.check_overrides(request, body)
    default = _settings(request).default_collection
    return replace(options, collection=tenancy.collection_for(request, options.collection, default))


async def _document(request: Request, scope: str) -> Document:
    """The path's document, or 404 (the same as an unknown id) if the key may not see it."""
    store = _store(request)
    document = await anyio.to_thread.run_sync(store.get, request.path_params["doc_id"])
    return tenancy.visible(request, document, scope)


async def _version(request: Request, number: int | None) -> Version:
    store = _store(request)
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
    path = await anyio.to_thread.run_sync(_store(request).content_path, record)
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
    if not _is_ascii_int(raw) or int(raw) < 1:
        raise NotFoundError(f"version must be a positive integer, got {raw!r}")
    return int(raw)


def _client_gone() -> JSONResponse:
    # Nobody reads it; nginx's 499 names the case in access logs.
    body = {"error": {"code": "client_closed_request", "message": "the client left"}}
    return JSONResponse(body, status_code=499)


def _is_ascii_int(raw: str) -> bool:
    # str.isdigit() accepts "²" and other digits that int() refuses.
    return raw.isascii() and raw.isdigit() and len(raw) <= 9


async def _json_object(request: Request) -> dict[str, object]:
    body = await read_json(request, _settings(request).max_json_bytes)
    if not isinstance(body, dict):
        raise InputError("the request body must be a JSON object")
    return body


def _public(request: Request, data: dict[str, object]) -> dict[str, object]:
    """Download URLs made absolute when STREAM_RAG_PUBLIC_URL is set."""
    return absolute_urls(data, _settings(request).public_url)


def _services(request: Request) -> Services:
    services: Services = request.state.services
    return services


def _queue(request: Request) -> IndexQueue:
    queue: IndexQueue = request.state.queue
    return queue


def _store(request: Request) -> DocumentStore:
    store: DocumentStore = request.state.store
    return store


def _settings(request: Request) -> Settings:
    settings: Settings = request.state.settings
    return settings


async def stream_rag_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StreamRagError)
    return JSONResponse(exc.to_json(), status_code=exc.status)


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return JSONResponse(
        {"error": {"code": code, "message": str(exc.detail)}},
        status_code=exc.status_code,
        headers=exc.headers,
    )


async def internal_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(
        {"error": {"code": "internal_error", "message": "internal server error"}},
        status_code=500,
    )
