"""How `stream-rag serve` runs uvicorn: connection limits, timeouts, and the SIGTERM drain.

uvicorn alone never times out a connection that is still sending its request headers, so a
few hundred slow clients could hold every connection slot; `GuardedHttpToolsProtocol` closes them
after `STREAM_RAG_HEADER_TIMEOUT_S`. On SIGTERM uvicorn stops accepting connections and waits
for the open ones; `DrainingServer` also starts the app's `Drain`, which ends answers still
running after `STREAM_RAG_DRAIN_S` with `error: shutting_down`.
"""

from __future__ import annotations

import gc
import socket
import sys
from types import FrameType
from typing import Any

import uvicorn
from starlette.applications import Starlette

from ..config import Settings
from ..lifecycle import Drain
from .budget import ConnectionBudget
from .collector import IdleCollector
from .protocol import MAX_HEAD_BYTES, GuardedHttpToolsProtocol, HeadWithBody
from .scheduling import request_slice

__all__ = [
    "MAX_HEAD_BYTES",
    "DrainingServer",
    "GuardedHttpToolsProtocol",
    "HeadWithBody",
    "build_server",
    "freeze_startup_objects",
    "protocol_for",
    "server_config",
]


class DrainingServer(uvicorn.Server):
    """A uvicorn server whose exit signal also starts the app's drain."""

    def __init__(
        self,
        config: uvicorn.Config,
        drain: Drain,
        *,
        gc_freeze: bool = False,
        collector: IdleCollector | None = None,
    ) -> None:
        super().__init__(config)
        self.drain = drain
        self.freeze_after_startup = gc_freeze
        self.collector = collector

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.drain.request()
        super().handle_exit(sig, frame)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.freeze_after_startup:
            freeze_startup_objects()
        if self.collector is not None:
            self.collector.install()

    async def on_tick(self, counter: int) -> bool:
        # uvicorn calls this every 0.1 s; its set of tasks is the requests in progress.
        if self.collector is not None:
            self.collector.tick(busy=bool(self.server_state.tasks))
        return await super().on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().shutdown(sockets=sockets)
        finally:
            if self.collector is not None:
                self.collector.uninstall()


def build_server(app: Starlette, settings: Settings) -> DrainingServer:
    # Process-wide, so set here for the server and not by the app, which others may embed.
    sys.setswitchinterval(settings.gil_switch_ms / 1000)
    request_slice(settings.sched_slice_us)
    config = server_config(app, settings)
    drain: Drain = app.state.drain
    collector = IdleCollector() if settings.gc_idle else None
    return DrainingServer(config, drain, gc_freeze=settings.gc_freeze, collector=collector)


def server_config(app: Starlette, settings: Settings, **overrides: Any) -> uvicorn.Config:
    """uvicorn's configuration for `stream-rag serve` (`overrides`: tests' host and port)."""
    options: dict[str, Any] = dict(
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        # With STREAM_RAG_ACCESS_LOG the app writes JSON request lines instead.
        access_log=not settings.access_log,
        http=protocol_for(settings),
        # No route takes a WebSocket: a handshake is served as the HTTP request it also is
        # (with a WebSocket library installed uvicorn took it and refused it, an empty 403).
        ws="none",
        # No uvicorn limit: the connection budget keeps at most MAX_CONNECTIONS plus the
        # reserve open, making room by closing idle ones (budget.py).
        limit_concurrency=None,
        # X-Forwarded-For is believed from the listed proxies only, never by default.
        proxy_headers=bool(settings.trusted_proxies),
        forwarded_allow_ips=list(settings.trusted_proxies) or None,
        timeout_keep_alive=max(1, round(settings.keep_alive_s)),
        # A backstop after the drain: whatever still runs then is cancelled.
        timeout_graceful_shutdown=int(settings.drain_s) + 5,
    )
    return uvicorn.Config(app, **{**options, **overrides})


def protocol_for(settings: Settings) -> type[GuardedHttpToolsProtocol]:
    """The protocol class for one server: its head timeout and its connection budget."""
    return type(
        "GuardedHttpToolsProtocol",
        (GuardedHttpToolsProtocol,),
        {"header_timeout_s": settings.header_timeout_s, "budget": ConnectionBudget(settings)},
    )


def freeze_startup_objects() -> int:
    """Collect start-up's garbage, then move every object still alive into the GC's permanent
    generation, where no collection scans it; returns how many were moved."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
