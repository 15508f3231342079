"""Operational telemetry: Prometheus metrics for `/metrics`, request ids, JSON request logs.

One `Telemetry` per app, with its own registry (no process-global metrics: tests build many
apps). The retrieval-quality measures of `metrics.py` are a different thing and live there.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from contextlib import aclosing
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from prometheus_client import CONTENT_TYPE_LATEST as PROMETHEUS_TEXT
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..access.start import START_HOOKS, StartHook
from ..request_context import REQUEST_ID, new_id

if TYPE_CHECKING:
    from ..events import Event
    from ..model.llm import ChatModel
    from ..types import Message as ChatMessage

__all__ = ["PROMETHEUS_TEXT", "ObservedApp", "ObservedModel", "Telemetry"]

access_log = logging.getLogger("stream_rag.access")
Metric = TypeVar("Metric", Counter, Gauge, Histogram)

# A caller's own id is kept when it is short and plain; anything else is replaced.
_GOOD_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_LATENCY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
_FAST = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
_GAPS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Telemetry:
    """The service's Prometheus metrics; `render()` is the `/metrics` body."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter(
            "stream_rag_http_requests", "HTTP requests", ["route", "method", "status"], registry=r
        )
        self.request_seconds = Histogram(
            "stream_rag_http_request_duration_seconds",
            "HTTP request duration (streams: until the last byte)",
            ["route", "method"],
            buckets=_LATENCY,
            registry=r,
        )
        self.ttfs = Histogram(
            "stream_rag_first_sentence_seconds",
            "Time from the request to the first verified sentence",
            buckets=_LATENCY,
            registry=r,
        )
        self.gap = Histogram(
            "stream_rag_sentence_gap_seconds",
            "Time between two verified sentences of one answer",
            buckets=_GAPS,
            registry=r,
        )
        self.sentences = Counter(
            "stream_rag_sentences_emitted", "Sentences that passed the gate", registry=r
        )
        self.dropped = Counter(
            "stream_rag_sentences_dropped", "Units the gate dropped", ["reason"], registry=r
        )
        self.refusals = Counter("stream_rag_refusals", "Refusals", ["reason"], registry=r)
        self.stream_errors = Counter(
            "stream_rag_stream_errors", "Answer streams that ended in error", ["code"], registry=r
        )
        self.in_flight = Gauge(
            "stream_rag_streams_in_flight", "Answer streams being served", registry=r
        )
        self.upstream = Histogram(
            "stream_rag_upstream_seconds",
            "Chat model latency: to the first piece, and to the end of the stream",
            ["phase"],
            buckets=_LATENCY,
            registry=r,
        )
        self.upstream_errors = Counter(
            "stream_rag_upstream_errors", "Chat model failures", ["code"], registry=r
        )
        self.retrieval = Histogram(
            "stream_rag_retrieval_seconds",
            "Retrieval latency by branch (embed, dense, bm25, fuse, rerank, total)",
            ["branch"],
            buckets=_FAST,
            registry=r,
        )
        self.embed_batch = Histogram(
            "stream_rag_query_embed_batch_size",
            "Questions embedded together in one call",
            buckets=(1, 2, 4, 8, 16, 32, 64),
            registry=r,
        )
        self.cache = Gauge(
            "stream_rag_query_embed_cache",
            "Query embedding cache lookups since start",
            ["result"],
            registry=r,
        )
        self.index_points = Gauge("stream_rag_index_points", "Points in the index", registry=r)
        self.exact_points = Gauge(
            "stream_rag_index_exact_points",
            "Points no HNSW graph holds (every dense search scans them)",
            registry=r,
        )
        self.queue_depth = Gauge(
            "stream_rag_indexing_queue_depth", "Versions waiting for or in indexing", registry=r
        )
        # Children by metric and label values; label values come from a small closed set
        # (routes, methods, statuses, branches, phases, reasons, codes).
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}

    def child(self, metric: Metric, *labels: str) -> Metric:
        """`metric.labels(*labels)`, looked up once: prometheus-client validates and locks on
        every `labels` call, several times per answer."""
        key = (id(metric), labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found

    def bind(
        self,
        *,
        index_points: Callable[[], int],
        queue_depth: Callable[[], int],
        cache: Callable[[], tuple[int, int]] | None = None,
        exact_points: Callable[[], int] | None = None,
    ) -> None:
        """Gauges read at scrape time from the running service."""
        self.index_points.set_function(_unless_closed(index_points))
        if exact_points is not None:
            self.exact_points.set_function(_unless_closed(exact_points))
        self.queue_depth.set_function(_unless_closed(queue_depth))
        if cache is not None:
            self.cache.labels("hit").set_function(lambda: cache()[0])
            self.cache.labels("miss").set_function(lambda: cache()[1])

    def render(self) -> bytes:
        """The Prometheus text exposition (blocking: the gauges query the index and store)."""
        return generate_latest(self.registry)

    def observe_search(self, timings: Mapping[str, float]) -> None:
        for branch, ms in timings.items():
            self.child(self.retrieval, branch).observe(ms / 1000)

    async def watch(self, events: AsyncIterator[Event]) -> AsyncGenerator[Event, None]:
        """Pass an answer's events through, counting sentences, drops, refusals and errors."""
        from ..events import Dropped, Error, Refusal, SentenceOut

        started = time.perf_counter()
        last: float | None = None
        self.in_flight.inc()
        try:
            async with aclosing(events) as stream:  # type: ignore[type-var]
                async for event in stream:
                    if isinstance(event, SentenceOut):
                        now = time.perf_counter()
                        if last is None:
                            self.ttfs.observe(now - started)
                        else:
                            self.gap.observe(now - last)
                        last = now
                        self.sentences.inc()
                    elif isinstance(event, Dropped):
                        self.child(self.dropped, event.reason).inc()
                    elif isinstance(event, Refusal):
                        self.child(self.refusals, event.reason).inc()
                    elif isinstance(event, Error):
                        self.child(self.stream_errors, event.code).inc()
                    yield event
        finally:
            self.in_flight.dec()


def _unless_closed(read: Callable[[], int]) -> Callable[[], float]:
    """A gauge reader that says NaN instead of failing the scrape once the service closed."""

    def value() -> float:
        try:
            return float(read())
        except Exception:
            return math.nan

    return value


class ObservedModel:
    """A chat model wrapper that times the upstream and counts its failures."""

    def __init__(self, model: ChatModel, telemetry: Telemetry) -> None:
        self.model = model
        self.name = model.name
        self.telemetry = telemetry

    async def stream(self, messages: Sequence[ChatMessage]) -> AsyncGenerator[str, None]:
        from ..errors import StreamRagError

        started = time.perf_counter()
        first = True
        telemetry = self.telemetry
        try:
            async with aclosing(self.model.stream(messages)) as pieces:
                async for piece in pieces:
                    if first:
                        elapsed = time.perf_counter() - started
                        telemetry.child(telemetry.upstream, "first_piece").observe(elapsed)
                        first = False
                    yield piece
        except StreamRagError as exc:
            telemetry.child(telemetry.upstream_errors, exc.code).inc()
            raise
        telemetry.child(telemetry.upstream, "total").observe(time.perf_counter() - started)

    async def check(self) -> None:
        """The wrapped model's readiness probe, if it has one (`/readyz`)."""
        probe = getattr(self.model, "check", None)
        if callable(probe):
            await probe()

    async def aclose(self) -> None:
        close = getattr(self.model, "aclose", None)
        if callable(close):
            await close()


class ObservedApp:
    """ASGI middleware: a request id (kept from `X-Request-ID` when plain, else new) in the
    context and the response headers, per-route metrics, and one JSON log line per request."""

    def __init__(self, app: ASGIApp, telemetry: Telemetry) -> None:
        self.app = app
        self.telemetry = telemetry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if _GOOD_ID.fullmatch(given) else f"req_{new_id()}"
        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        status = 500
        # The inner middleware's changes to the response's start (access/start.py): one wrapper of
        # `send` for all of them, not one each that every body message passes through.
        hooks: list[StartHook] = []
        scope[START_HOOKS] = hooks

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": list(message.get("headers", []))}
                for hook in reversed(hooks):  # innermost first, as nested wrappers would
                    hook(message)
                message["headers"].append((b"x-request-id", request_id.encode()))
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - started
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = scope["method"]
            telemetry = self.telemetry
            telemetry.child(telemetry.requests, route, method, str(status)).inc()
            telemetry.child(telemetry.request_seconds, route, method).observe(elapsed)
            if access_log.isEnabledFor(logging.INFO):
                access_log.info(
                    json.dumps(
                        {
                            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
                            "request_id": request_id,
                            "method": method,
                            "path": scope["path"],
                            "route": route,
                            "status": status,
                            "duration_ms": round(elapsed * 1000, 2),
                            "client": (scope.get("client") or ("", 0))[0],
                        }
                    )
                )
            REQUEST_ID.reset(token)
