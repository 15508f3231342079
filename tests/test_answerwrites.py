"""An answer's head goes out with its first event and its last event with the response's end:
the messages the server gets over real HTTP, and `AnswerWrites` against any order of messages."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.answerwrites import AnswerWrites
from stream_rag.http.app import create_app

from .helpers import HTTP_GUARD_S, running_server
from .test_chat_http import read_events, upload


class Recording:
    """ASGI middleware keeping the messages the app sends for the answer routes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.sent: list[Message] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/chat"):
            await self.app(scope, receive, send)
            return

        async def recorded(message: Message) -> None:
            self.sent.append(message)
            await send(message)

        await self.app(scope, receive, recorded)


def test_the_head_comes_with_sources_and_done_with_the_end(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    app = Recording(create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm))
    with running_server(app) as base_url:
        upload(base_url, "faq.md", b"Support answers email within one business day.")
        with httpx.stream(
            "POST",
            f"{base_url}/v1/chat",
            json={"question": "How fast does support answer?"},
            timeout=HTTP_GUARD_S,
        ) as response:
            names = [name for name, _, _ in read_events(response)]
    assert names[0] == "sources"
    assert names[-1] == "done"
    start, sources = app.sent[:2]
    assert start["type"] == "http.response.start"
    assert b"event: sources" in sources["body"]
    *_, before, end = app.sent
    assert end["type"] == "http.response.body"
    assert end["more_body"] is False
    assert b"event: done" in end["body"]
    assert b"event: done" not in before.get("body", b"")
    # Every event before it went out at once, each in a message of its own.
    assert all(m["more_body"] for m in app.sent[1:-1])


def test_the_openai_stream_ends_in_one_message(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    app = Recording(create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm))
    with running_server(app) as base_url:
        upload(base_url, "faq.md", b"Support answers email within one business day.")
        request = {
            "messages": [{"role": "user", "content": "How fast does support answer?"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        with httpx.stream(
            "POST", f"{base_url}/v1/chat/completions", json=request, timeout=HTTP_GUARD_S
        ) as response:
            lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    assert '"finish_reason": "stop"' in lines[-3]
    start, first = app.sent[:2]
    assert start["type"] == "http.response.start"
    assert b'"sources"' in first["body"]
    end = app.sent[-1]
    # The chunk that finishes, the usage chunk and [DONE] go out with the end.
    assert end["more_body"] is False
    assert end["body"].count(b"data: ") == 3
    assert end["body"].endswith(b"data: [DONE]\n\n")


def body(data: bytes, more: bool = True) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": more}


START: Message = {"type": "http.response.start", "status": 200, "headers": []}
# A step: a body message (bytes), `None` for `next_is_last()`.
steps = st.lists(st.one_of(st.none(), st.binary(min_size=1, max_size=4)), max_size=12)


@settings(deadline=None)
@given(steps, st.booleans())
def test_messages_keep_their_bytes_and_order(script: list[bytes | None], ends: bool) -> None:
    sent: list[Message] = []

    async def server_send(message: Message) -> None:
        sent.append(message)

    async def main() -> None:
        last = AnswerWrites()
        last.send = server_send
        await last(START)
        for step in script:
            if step is None:
                last.next_is_last()
            else:
                await last(body(step))
        if ends:
            await last(body(b"", more=False))
        await last.flush()

    anyio.run(main)
    given_bytes = b"".join(s for s in script if s is not None)
    assert sent[0] == START
    assert b"".join(m["body"] for m in sent[1:]) == given_bytes
    assert all(m["more_body"] for m in sent[1:-1])
    # Body messages before the first `next_is_last()` go out one by one; from it on they are
    # joined into one, with the end when it comes.
    mark = script.index(None) if None in script else len(script)
    before = [s for s in script[:mark] if s is not None]
    after = b"".join(s for s in script[mark:] if s is not None)
    expected = [*before, after] if ends or after else before
    assert [m["body"] for m in sent[1:]] == expected
    if ends:
        assert sent[-1]["more_body"] is False


@pytest.mark.anyio
async def test_the_head_waits_for_an_event_and_the_last_event_for_the_end() -> None:
    sent: list[Message] = []

    async def server_send(message: Message) -> None:
        sent.append(message)

    last = AnswerWrites()
    last.send = server_send
    await last(START)
    assert sent == []  # the head waits for the first event
    await last(body(b"sources"))
    assert sent == [START, body(b"sources")]
    sent.clear()
    last.next_is_last()
    await last(body(b"done"))
    assert sent == []
    await last(body(b"", more=False))
    assert sent == [body(b"done", more=False)]

    sent.clear()
    last.next_is_last()
    await last(body(b"done"))
    await last(body(b"data: [DONE]"))  # held too, in order
    assert sent == []
    await last(body(b"", more=False))
    assert sent == [body(b"donedata: [DONE]", more=False)]

    sent.clear()
    last.next_is_last()
    await last(body(b"error"))
    await last.flush()  # a response cut short: what was held still goes out
    assert sent == [body(b"error")]
