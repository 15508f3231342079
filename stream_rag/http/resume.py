"""Resumable answers: a `/v1/chat` answer's events are recorded as they are emitted (store/
streams.py), and `GET /v1/streams/{id}` or `GET /v1/chat` with `Last-Event-ID: <id>.<n>`, on
any replica, replays what the client missed and follows the rest live. An answer whose process
died ends for the resuming client with `error` `interrupted` within `STALE_S` seconds. An answer
whose asking connection closed goes on for `STREAM_RAG_RESUME_GRACE_S`, and on while a client
follows it (`grace`), so a client whose connection dropped resumes it to its end."""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from ..access import tenancy
from ..errors import NotFoundError
from ..events import Error, to_sse
from ..sse import ServerSentEvent
from ..store.streams import BEAT_S, STALE_S, Recorded, StreamLog
from . import state
from .eventstream import EventStream

# How often a resuming client's stream asks the database for newer events.
FOLLOW_S = 0.2


class LiveStreams:
    """The answers this process is producing: their heartbeats, every `BEAT_S`."""

    def __init__(self, log: StreamLog) -> None:
        self.log = log
        self.ids: set[str] = set()
        # Set when its client asks an answer stopped here (`stop`); other replicas' asks are
        # read from the record.
        self.stops: dict[str, anyio.Event] = {}

    async def beat(self) -> None:
        while True:
            await anyio.sleep(BEAT_S)
            if self.ids:
                await anyio.to_thread.run_sync(self.log.beat, list(self.ids))


def recorder(request: Request) -> tuple[StreamLog | None, LiveStreams]:
    """The stream log (None when STREAM_RAG_STREAM_KEEP_S is 0) and this process's live ones."""
    log: StreamLog | None = getattr(request.state, "streams", None)
    live: LiveStreams = request.state.live_streams
    return log, live


async def grace(log: StreamLog, stream_id: str, grace_s: float, stop: anyio.Event) -> None:
    """Return when an answer whose asking connection closed should stop: once its client asked
    it stopped (`stop` here, or on another replica), or no client has followed it for `grace_s`
    since the drop (`STALE_S` at least once one has: followers mark the record every `BEAT_S`,
    on replicas whose clocks may differ by a second)."""
    left = time.time()
    while not stop.is_set():
        with anyio.move_on_after(min(grace_s, BEAT_S)):
            await stop.wait()
            return
        followed, asked = await anyio.to_thread.run_sync(log.followers, stream_id)
        if asked:
            return
        if followed is None:
            if time.time() - left >= grace_s:
                return
        elif time.time() - max(left, followed) >= max(grace_s, STALE_S):
            return


async def stop(request: Request) -> Response:
    """`DELETE /v1/streams/{id}`: its client wants no more of the answer (the widget's Stop):
    once its asking connection is closed, it stops at once instead of after the grace. 204."""
    stream_id = request.path_params["stream_id"]
    log, live = recorder(request)
    found = None if log is None else await anyio.to_thread.run_sync(log.read, stream_id, 2**62)
    if log is None or found is None or found.owner != tenancy.principal(request).id:
        raise NotFoundError(f"no answer stream {stream_id!r} (unknown, another key's, or expired)")
    if not found.finished:
        if (here := live.stops.get(stream_id)) is not None:
            here.set()
        await anyio.to_thread.run_sync(log.ask_stop, stream_id)
    return Response(status_code=204)


def last_event(value: str | None) -> tuple[str, int] | None:
    """`<stream id>.<n>` from a `Last-Event-ID` header (n as the database can compare it)."""
    stream_id, _, seq = (value or "").strip().rpartition(".")
    if not stream_id or not state.is_ascii_int(seq):
        return None
    return stream_id, int(seq)


async def resumed(request: Request, stream_id: str, after: int) -> Response | None:
    """The rest of a recorded stream for the key that asked it; None if there is none."""
    log: StreamLog | None = getattr(request.state, "streams", None)
    if log is None:
        return None
    first = await anyio.to_thread.run_sync(log.read, stream_id, after)
    if first is None or first.owner != tenancy.principal(request).id:
        return None
    if first.finished and not first.events:
        # The client has it all: 204 also stops an EventSource from reconnecting for good.
        return Response(status_code=204)

    async def events() -> AsyncIterator[ServerSentEvent]:
        record: Recorded | None = first
        seen, marked = after, -math.inf
        while record is not None:
            if not record.finished and anyio.current_time() - marked >= BEAT_S:
                # Its producer goes on while someone follows, though its asker left.
                marked = anyio.current_time()
                await anyio.to_thread.run_sync(log.follow, stream_id)
            for seq, event, data in record.events:
                yield ServerSentEvent(data=data, event=event, id=f"{stream_id}.{seq}")
                seen = seq
            if record.finished:
                return
            if record.stale:
                message = "the server answering this stream stopped; ask again"
                yield to_sse(Error("interrupted", message), id=f"{stream_id}.{seen + 1}")
                return
            await anyio.sleep(FOLLOW_S)
            record = await anyio.to_thread.run_sync(log.read, stream_id, seen)

    return EventStream(
        events(),
        headers={"X-Accel-Buffering": "no"},
        ping=state.settings(request).sse_ping_s,
    )


async def stream(request: Request) -> Response:
    """`GET /v1/streams/{id}` (`Last-Event-ID: <id>.<n>` or `?after=n`): a recorded answer's
    events after the client's last one, then the rest live."""
    stream_id = request.path_params["stream_id"]
    after = 0
    header = (request.headers.get("last-event-id") or "").strip()
    resume = last_event(header)
    if resume is not None and resume[0] == stream_id:
        after = resume[1]
    elif header.startswith(f"{stream_id}."):  # this stream, at a position it never had
        raise NotFoundError(f"no event {header!r} in answer stream {stream_id!r}")
    elif (raw := request.query_params.get("after")) is not None:
        if not state.is_ascii_int(raw):
            raise NotFoundError(f"no answer stream {stream_id!r} after {raw[:20]!r}")
        after = int(raw)
    found = await resumed(request, stream_id, after)
    if found is None:
        raise NotFoundError(f"no answer stream {stream_id!r} (unknown, another key's, or expired)")
    return found
