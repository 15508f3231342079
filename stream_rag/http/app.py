"""The HTTP API: a Starlette app whose shared resources live in the lifespan state.

Here: the app (lifespan, routes, middleware, errors mapped to JSON) and the service routes
(page, health, metrics, OpenAPI). The other routes live by area: documents_api.py,
answers_api.py, search_api.py, keys_api.py.
"""

from __future__ import annotations

import html
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TypedDict

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.staticfiles import StaticFiles

from ..access import tenancy
from ..access.guard import Guard
from ..access.hosts import HostCheck
from ..access.principals import Access
from ..access.shared import SLOT_BEAT_S, SharedAnswerSlots
from ..config import Settings
from ..embed.backends import Embedder
from ..embed.sentences import warm_up
from ..errors import StreamRagError
from ..gate.lexical import GateContext, check_sentence
from ..index.auto_hnsw import AutoHnsw
from ..index.base import Index
from ..index.doctor import startup_check
from ..index.jobs import IndexQueue, Lease
from ..ingest.fairness import FairSlots
from ..lifecycle import Drain
from ..model.llm import ChatModel
from ..retrieve.rerank import Reranker
from ..services import Services, open_services
from ..store.documents import DocumentStore
from ..store.questions import QuestionLog
from ..store.streams import StreamLog
from . import (
    answers_api,
    documents_api,
    health,
    insights_api,
    keys_api,
    openapi,
    resume,
    search_api,
    state,
)
from .bodytimeout import BodyDeadline
from .methods import MethodCheck
from .resume import LiveStreams
from .telemetry import PROMETHEUS_TEXT, ObservedApp, Telemetry
from .web import cors_middleware

log = logging.getLogger("stream_rag")

# The page and the widget ship inside the package (package data), so a wheel serves them as an
# editable install does. StaticFiles needs a directory: both install kinds unpack one.
STATIC_DIR = Path(str(resources.files(__package__) / "static"))


class State(TypedDict):
    settings: Settings
    store: DocumentStore
    services: Services
    queue: IndexQueue
    access: Access
    startup: health.StartupIndexing
    questions: QuestionLog
    streams: StreamLog | None
    live_streams: LiveStreams


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
        services.upload_limiter = FairSlots(settings.extract_workers)
        _bind_gauges(services)
        shared = settings.database_url is not None
        queue = IndexQueue(
            services.indexer,
            # Indexing left to `stream-rag worker`: uploads only queue their durable job.
            workers=settings.index_workers if settings.index_in_process else 0,
            batch=settings.index_batch,
            max_attempts=settings.index_max_attempts,
            lease=Lease(settings.job_lease_s) if shared else None,
        )
        services.answerer.drain = drain
        questions = QuestionLog(services.store, settings.question_log_days)
        streams = StreamLog(services.store, settings.stream_keep_s)
        live_streams = LiveStreams(streams)
        await anyio.to_thread.run_sync(questions.purge)
        # SIGTERM: indexing stops after the batch in hand (the rest resumes on restart).
        drain.on_drain(queue.stop)
        try:
            backlog: list[tuple[str, int]] = []
            if settings.index_in_process:
                backlog = await anyio.to_thread.run_sync(services.indexer.reconcile)
                backlog += await anyio.to_thread.run_sync(startup_check, services.indexer)
            # The embedded index's in-memory dense copy, before the first search needs it.
            warm = getattr(services.index, "warm", None)
            if callable(warm):
                await anyio.to_thread.run_sync(warm)
            # The semantic stage's model, so the first grey-zone sentences pay no first-call
            # costs (tens of milliseconds, once; here, not in every CLI command's services).
            semantic = services.answerer.stages.semantic
            if semantic is not None:
                await anyio.to_thread.run_sync(warm_up, semantic.sentence_encoder)
            await anyio.to_thread.run_sync(_warm_gate)
            queue.submit_all(backlog)
            async with anyio.create_task_group() as group:
                group.start_soon(queue.run)
                if shared and settings.index_in_process:  # other processes' uploads, leftovers
                    group.start_soon(queue.poll, settings.job_poll_s)
                async with anyio.create_task_group() as watchers:
                    watchers.start_soon(drain.run)
                    watchers.start_soon(live_streams.beat)
                    if access.slots is not None:  # this replica's answer slots stay counted
                        watchers.start_soon(_beat_slots, access.slots)
                    # Past `hnsw_auto_points` exactly searched points: graphs, built when idle.
                    auto = AutoHnsw(services.index, settings.hnsw_auto_points)
                    if services.embedder is not None:
                        watchers.start_soon(auto.run, queue)
                    yield {
                        "settings": settings,
                        "store": services.store,
                        "services": services,
                        "queue": queue,
                        "access": access,
                        "startup": health.StartupIndexing(backlog),
                        "questions": questions,
                        "streams": streams if settings.stream_keep_s else None,
                        "live_streams": live_streams,
                    }
                    watchers.cancel_scope.cancel()
                queue.close()
        finally:
            await services.aclose()
            await anyio.to_thread.run_sync(services.close)
            await anyio.to_thread.run_sync(access.close)

    routes: list[BaseRoute] = [
        # The answer routes first: the router tries each route's pattern in turn, and these
        # are most of the traffic (no other route's path matches theirs, so the order is free).
        _without_head(Route("/v1/chat", answers_api.chat, methods=["GET", "POST"])),
        Route("/v1/chat/completions", answers_api.chat_completions, methods=["POST"]),
        Route("/v1/streams/{stream_id}", resume.stream, methods=["GET"]),
        Route("/v1/streams/{stream_id}", resume.stop, methods=["DELETE"]),
        Route("/v1/answer", answers_api.answer, methods=["POST"]),
        Route("/", home),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics),
        Route("/openapi.json", openapi_document),
        Route("/v1/documents", documents_api.upload_document, methods=["POST"]),
        Route("/v1/documents", documents_api.list_documents, methods=["GET"]),
        Route("/v1/documents/{doc_id}", documents_api.get_document, methods=["GET"]),
        Route("/v1/documents/{doc_id}", documents_api.delete_document, methods=["DELETE"]),
        Route(
            "/v1/documents/{doc_id}/content", documents_api.latest_content, methods=["GET", "HEAD"]
        ),
        Route("/v1/search", search_api.search, methods=["POST"]),
        Route("/v1/index/optimize", search_api.optimize_index, methods=["POST"]),
        Route("/v1/models", answers_api.list_models, methods=["GET"]),
        *keys_api.routes(),
        *insights_api.routes(),
        Route("/v1/documents/{doc_id}/versions", documents_api.add_version, methods=["POST"]),
        Route("/v1/documents/{doc_id}/versions/{n}", documents_api.get_version, methods=["GET"]),
        Route(
            "/v1/documents/{doc_id}/versions/{n}/chunks", documents_api.get_chunks, methods=["GET"]
        ),
        Route(
            "/v1/documents/{doc_id}/versions/{n}/text",
            documents_api.version_text,
            methods=["GET", "HEAD"],
        ),
        Route(
            "/v1/documents/{doc_id}/versions/{n}/content",
            documents_api.version_content,
            methods=["GET", "HEAD"],
        ),
    ]
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
            Middleware(MethodCheck, settings=settings),
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
    app.state.optimizing = set()  # non-empty while an optimize runs (search_api.py)
    return app


# -- service routes ---------------------------------------------------------------------------


async def home(request: Request) -> Response:
    """The page: the chat widget and the Documents panel (http/static/index.html), in the server's
    default collection (the file says "default": with another, it listed and asked an empty one)."""
    page = anyio.Path(STATIC_DIR / "index.html")
    collection = html.escape(state.settings(request).default_collection, quote=True)
    text = (await page.read_text(encoding="utf-8")).replace(
        'data-collection="default"', f'data-collection="{collection}"'
    )
    text = text.replace('value="default"', f'value="{collection}"')
    return HTMLResponse(text, headers={"Cache-Control": "no-cache"})


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
    queue = state.queue(request)
    startup: health.StartupIndexing = request.state.startup
    ready, body = await health.readiness(
        state.services(request),
        queue.depth,
        startup_backlog=startup.waiting(queue),
        draining=drain.draining,
    )
    if not tenancy.principal(request).admin:  # counts and versions are not for tenants
        body = {"status": body["status"], "failed": body["failed"]}
    return JSONResponse(body, status_code=200 if ready else 503)


async def metrics(request: Request) -> Response:
    """Prometheus text exposition of the service's metrics."""
    body = await anyio.to_thread.run_sync(state.services(request).telemetry.render)
    return Response(body, media_type=PROMETHEUS_TEXT)


def _warm_gate() -> None:
    """One reworded sentence through the claim checks, so WordNet's table and lemminflect's
    dictionaries (~5 s of CPU, once) load here, not in the first answers' worker threads."""
    context = GateContext(("The printed passes are sold at the desk.",))
    check_sentence("The paper passes are sold at the desk. [1]", context)


async def _beat_slots(slots: SharedAnswerSlots) -> None:
    """This replica's answer slots, marked alive every `SLOT_BEAT_S` (a replica that stops
    beating, killed, has its slots lapse on the others after `SLOT_STALE_S`)."""
    while True:
        await anyio.sleep(SLOT_BEAT_S)
        try:
            await anyio.to_thread.run_sync(slots.beat)
        except Exception:  # the database away a moment: the next beat tries again
            log.exception("beating this replica's answer slots failed")


def _bind_gauges(services: Services) -> None:
    queries = services.retriever.queries
    services.telemetry.bind(
        index_points=services.index.count,
        queue_depth=lambda: len(services.store.pending()),
        cache=None if queries is None else lambda: (queries.hits, queries.misses),
        exact_points=getattr(services.index, "exact_points", None),
    )


# -- errors -----------------------------------------------------------------------------------


async def stream_rag_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StreamRagError)
    return JSONResponse(exc.to_json(), status_code=exc.status, headers=exc.headers)


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    headers = exc.headers
    if exc.status_code == 405:
        # Starlette's Allow names the methods of the first route whose path matched; a path
        # served by several routes (`/v1/documents`: POST in one, GET in another) takes them
        # all, and a 405 must list the target's methods (RFC 9110 15.5.6).
        headers = {**(headers or {}), "Allow": ", ".join(allowed_methods(request))}
    return JSONResponse(
        {"error": {"code": code, "message": str(exc.detail)}},
        status_code=exc.status_code,
        headers=headers,
    )


def allowed_methods(request: Request) -> list[str]:
    """The methods of every route whose path matches the request's."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        if isinstance(route, Route) and route.methods:
            match, _ = route.matches(request.scope)
            if match is not Match.NONE:
                methods |= route.methods
    return sorted(methods)


def _without_head(route: Route) -> Route:
    """Starlette adds HEAD to a GET route; GET /v1/chat runs (paid) generation, which a HEAD,
    having no body to send, should not, and the handler would read it as a POST (405 instead)."""
    if route.methods is not None:
        route.methods.discard("HEAD")
    return route


async def internal_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(
        {"error": {"code": "internal_error", "message": "internal server error"}},
        status_code=500,
    )
