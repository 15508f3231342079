"""The fake model's streamed reply, made cheap: it shares the cores with what it load-tests.

Every chunk of an answer is encoded once when the request arrives, into a plan of steps (when
to send, which bytes); pieces due at the same moment go out in one send behind one timer, and
the sends go straight to the server's ASGI `send`, with no response generator, task group or
middleware wrapper per token. The bytes and their schedule are those of the plain generator
this replaced (tests/test_fake_stream.py rebuilds them independently).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any, NamedTuple

from starlette.types import Receive, Send

if TYPE_CHECKING:
    from .fake import FakeConfig, FakeStats

# `json.dumps(text)` is this C function's result (with the default `ensure_ascii`), without the
# encoder object around it: the fake spends that per token.
_json_string = encode_basestring_ascii


class Step(NamedTuple):
    """What is sent `due` seconds after the stream starts: the chunks of `pieces` (recorded in
    the timeline as sent then), and any chunks that follow them at the same moment."""

    due: float
    pieces: tuple[str, ...]
    body: bytes


class Plan(NamedTuple):
    """A whole streamed reply; `breaks`: the stream is cut off after the last step."""

    steps: tuple[Step, ...]
    breaks: bool


def chunk_bytes(fields: dict[str, Any], delta: dict[str, str], finish: str | None = None) -> bytes:
    """One `data:` event of OpenAI's chunk object; `fields`: id, object, created, model."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return f"data: {json.dumps({**fields, 'choices': [choice]})}\n\n".encode()


def plan(
    config: FakeConfig,
    pieces: Sequence[str],
    fields: dict[str, Any],
    usage: dict[str, int] | None,
) -> Plan:
    """The reply's steps: the role chunk at once, a piece every 1/`tokens_per_second` s (the
    stall added before piece `stall_after`), then the stop chunk, `usage` if asked, `[DONE]`."""
    # A token's chunk is the bytes of `chunk_bytes(fields, {"content": piece})`: the piece's
    # JSON (what `json.dumps` makes of a string, by the same C function) spliced into a template.
    head, _, tail = chunk_bytes(fields, {"content": "\0"}).partition(b'"\\u0000"')
    head_text, tail_text = head.decode(), tail.decode()
    delay = 1 / config.tokens_per_second if config.tokens_per_second > 0 else 0.0
    steps: list[Step] = []
    due, sent, data = 0.0, list[str](), [chunk_bytes(fields, {"role": "assistant", "content": ""})]
    breaks = False
    for i, piece in enumerate(pieces):
        if i == config.error_after:
            breaks = True
            break
        step_due = due + delay + (config.stall_s if i == config.stall_after else 0.0)
        if step_due != due:  # a new moment: what was due before goes out in one send
            steps.append(Step(due, tuple(sent), b"".join(data)))
            due, sent, data = step_due, [], []
        sent.append(piece)
        data.append((head_text + _json_string(piece) + tail_text).encode())
    if not breaks:
        data.append(chunk_bytes(fields, {}, "stop"))
        if usage is not None:
            last = {"id": fields["id"], "choices": [], "usage": usage}
            last |= {k: fields[k] for k in ("object", "created", "model")}
            data.append(f"data: {json.dumps(last)}\n\n".encode())
        data.append(b"data: [DONE]\n\n")
    steps.append(Step(due, tuple(sent), b"".join(data)))
    return Plan(tuple(steps), breaks)


HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8")]


async def send_plan(
    reply: Plan, receive: Receive, send: Send, stats: FakeStats, timeline: list[tuple[str, float]]
) -> None:
    """Send `reply` on its schedule, from the moment its headers are sent: a late wake-up (a
    busy event loop) does not push later steps back. A client that leaves cancels it."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    state = {"finished": False, "gone": False}

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        if not state["finished"] and task is not None:
            state["gone"] = True
            task.cancel()

    watcher = loop.create_task(watch())
    try:
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        start = loop.time()
        last = len(reply.steps) - 1
        for i, step in enumerate(reply.steps):
            wait = start + step.due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            sent = time.monotonic()
            timeline.extend((piece, sent) for piece in step.pieces)
            ends = i == last and not reply.breaks
            if ends:  # counted before the client can have read the end
                state["finished"] = True
                stats.completed += 1
                stats.finished_at.append(time.monotonic())
            await send({"type": "http.response.body", "body": step.body, "more_body": not ends})
        if reply.breaks:
            raise ConnectionAbortedError("fake-llm: scripted error mid-stream")
    except asyncio.CancelledError:
        if not state["gone"]:
            raise
        if task is not None:
            task.uncancel()  # the cancel was this stream's own, for its client's leaving
        stats.disconnected += 1
        stats.disconnect_times.append(time.monotonic())
    finally:
        watcher.cancel()
