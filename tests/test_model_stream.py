"""The model stream reader against recorded chunk shapes of OpenAI, vLLM and llama.cpp, served
over real HTTP, and against malformed or failing streams."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from stream_rag.model import stream as stream_module
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import ModelError, ModelTimeoutError, OpenAIChatModel
from stream_rag.model.stream import PieceDecoder, StreamReplyError, content_pieces
from stream_rag.types import Message
from tests.helpers import read_request, running_server

FIXTURES = Path(__file__).parent / "fixtures" / "model_streams"
EXPECTED = (
    "Refunds are available within 30 days [1]. The Pro plan costs $12 per month — café pricing [2]."
)
MESSAGES = [Message("user", "What do refunds and the Pro plan cost?")]


def recorded_server(
    body: str, *, split: int = 7, stall: threading.Event | None = None
) -> Starlette:
    """Serves `body` as the streamed reply, cut into `split`-byte writes (so lines, and UTF-8
    characters, arrive in pieces); with `stall`, stops writing after the first event until
    `stall` is set."""
    raw = body.encode()
    received: list[dict[str, object]] = []

    clients: list[object] = []
    headers: list[set[str]] = []

    async def completions(request: Request) -> Response:
        received.append(await request.json())
        clients.append(request.client)
        headers.append({k.lower() for k in request.headers})

        async def chunks() -> AsyncIterator[bytes]:
            if stall is not None:
                yield raw[: raw.index(b"\n\n") + 2]
                await anyio.to_thread.run_sync(stall.wait)
            for start in range(0, len(raw), split):
                yield raw[start : start + split]

        return StreamingResponse(chunks(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    app.state.received = received
    app.state.clients = clients
    app.state.headers = headers
    return app


async def read_all(base_url: str, *, stall_s: float = 20.0) -> list[str]:
    model = OpenAIChatModel(f"{base_url}/v1", "m", stall_s=stall_s)
    try:
        async with aclosing(model.stream(MESSAGES)) as pieces:
            return [piece async for piece in pieces]
    finally:
        await model.aclose()


@pytest.mark.parametrize("name", ["openai", "vllm", "llamacpp"])
@pytest.mark.anyio
async def test_recorded_server_shapes(name: str) -> None:
    body = (FIXTURES / f"{name}.sse").read_text(encoding="utf-8")
    app = recorded_server(body)
    with running_server(app) as base_url:
        pieces = await read_all(base_url)
    assert "".join(pieces) == EXPECTED
    assert len(pieces) == 23  # one piece per content delta; empty and null ones are skipped
    [request] = app.state.received
    assert request["stream"] is True
    assert request["messages"] == [{"role": "user", "content": MESSAGES[0].content}]
    assert request["model"] == "m"
    assert (request["max_tokens"], request["temperature"]) == (512, 0.0)
    assert request["stream_options"] == {"include_usage": True}
    [headers] = app.state.headers
    assert not {h for h in headers if "idempotency" in h}  # OpenAI's API has no such header


def test_the_client_makes_its_request_without_reading_system_randomness(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The openai client's per-request `uuid4` was a system call on the event loop (llm.py).
    model = OpenAIChatModel("http://127.0.0.1:9/v1", "m")

    def refused(size: int) -> bytes:
        raise AssertionError("read the system's randomness")

    monkeypatch.setattr(os, "urandom", refused)
    keys = {model._client._idempotency_key() for _ in range(100)}
    assert len(keys) == 100


async def _answer_three_times(base_url: str) -> None:
    """Three answers in a row from one model (one connection pool), each read whole."""
    model = OpenAIChatModel(base_url, "m")
    try:
        for _ in range(3):
            async with aclosing(model.stream(MESSAGES)) as pieces:
                assert "".join([piece async for piece in pieces]) == EXPECTED
    finally:
        await model.aclose()


@pytest.mark.anyio
async def test_answers_in_a_row_share_one_connection() -> None:
    # The body's end after `[DONE]` is read, so the connection goes back to the pool.
    body = (FIXTURES / "openai.sse").read_text(encoding="utf-8")
    app = recorded_server(body)
    with running_server(app) as base_url:
        await _answer_three_times(f"{base_url}/v1")
    first, *others = app.state.clients
    assert first is not None
    assert others == [first, first]  # the same client address and port: one connection


@pytest.mark.anyio
async def test_a_connection_closed_as_it_is_reused_is_retried_on_a_new_one() -> None:
    # A keep-alive server closes an idle connection just as the next request goes out on it:
    # here, every connection answers one request and closes on the next without a reply.
    reply = (FIXTURES / "openai.sse").read_bytes()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
    response = head + b"content-length: %d\r\n\r\n" % len(reply) + reply
    connections = 0

    async def serve(stream: anyio.abc.SocketStream) -> None:
        nonlocal connections
        connections += 1
        async with stream:
            if await read_request(stream):
                await stream.send(response)
                await read_request(stream)  # then close without answering

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, serve)
        await _answer_three_times(f"http://127.0.0.1:{port}/v1")
        group.cancel_scope.cancel()
    assert connections == 3


@pytest.mark.anyio
async def test_crlf_comments_and_no_space_after_data() -> None:
    body = (FIXTURES / "vllm.sse").read_text(encoding="utf-8")
    body = body.replace("data: ", "data:").replace("\n\n", "\r\n: keep-alive\r\n\r\n")
    with running_server(recorded_server(body, split=5)) as base_url:
        pieces = await read_all(base_url)
    assert "".join(pieces) == EXPECTED


@pytest.mark.anyio
async def test_error_object_mid_stream_is_a_model_error() -> None:
    body = (FIXTURES / "openai.sse").read_text(encoding="utf-8")
    events = body.split("\n\n")
    events.insert(5, 'data: {"error": {"message": "overloaded", "type": "server_error"}}')
    app = recorded_server("\n\n".join(events))
    with running_server(app) as base_url, pytest.raises(ModelError, match="overloaded"):
        await read_all(base_url)


@pytest.mark.anyio
async def test_stall_after_the_first_event_times_out() -> None:
    body = (FIXTURES / "llamacpp.sse").read_text(encoding="utf-8")
    release = threading.Event()
    app = recorded_server(body, stall=release)
    with running_server(app) as base_url:
        try:
            with pytest.raises(ModelTimeoutError):
                await read_all(base_url, stall_s=0.3)
        finally:
            # The stalled reply ends before the server stops (it waited out the test
            # helper's hang guard, two minutes).
            release.set()


@pytest.mark.anyio
async def test_http_error_status_is_a_model_error() -> None:
    async def failing(request: Request) -> Response:
        return JSONResponse({"error": {"message": "no such model"}}, status_code=404)

    app = Starlette(routes=[Route("/v1/chat/completions", failing, methods=["POST"])])
    with (
        running_server(app) as base_url,
        pytest.raises(ModelError, match="request failed") as caught,
    ):
        await read_all(base_url)
    assert not isinstance(caught.value, ModelTimeoutError)


async def _chunks(body: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


async def _collect(*lines: str, ends: str = "\n") -> list[str]:
    """The pieces of `lines` joined with `ends`, read whole and cut at every possible size
    (all must agree: lines, CRLFs and UTF-8 characters are cut across chunks)."""
    body = ends.join(lines).encode()
    whole = [piece async for piece in content_pieces(_chunks(body, max(1, len(body))))]
    for size in range(1, 12):
        assert [piece async for piece in content_pieces(_chunks(body, size))] == whole
    return whole


@pytest.mark.anyio
async def test_parser_edge_cases() -> None:
    chunk = '{"choices": [{"delta": {"content": "%s"}}]}'
    # Nothing after [DONE] is read; a final event without its blank line still counts.
    assert await _collect(
        "data: " + chunk % "a", "", "data: [DONE]", "", "data: " + chunk % "b"
    ) == ["a"]
    assert await _collect("data: " + chunk % "a", "", "data: " + chunk % "z") == ["a", "z"]
    # Multi-line data joins with a newline (still valid JSON here), event/id fields are ignored.
    assert await _collect(
        "event: message",
        "id: 7",
        'data: {"choices":',
        "data: " + '[{"delta": {"content": "m"}}]}',
        "",
    ) == ["m"]
    # Usage-only chunks and non-object payloads carry no text.
    assert (
        await _collect('data: {"choices": [], "usage": {"total_tokens": 3}}', "", "data: 5", "")
        == []
    )
    with pytest.raises(StreamReplyError, match="not JSON"):
        await _collect("data: {truncated", "")


@pytest.mark.parametrize("ends", ["\n", "\r\n", "\r"])
@pytest.mark.anyio
async def test_every_line_end_and_chunking_gives_the_same_pieces(ends: str) -> None:
    chunk = '{"choices": [{"delta": {"content": "%s"}}]}'
    lines = [": keep-alive", "data:" + chunk % "café", "", "data: " + chunk % " [2]", ""]
    assert await _collect(*lines, "data: [DONE]", "", ends=ends) == ["café", " [2]"]
    # The last event without its blank line, its line end the body's last bytes or not at all.
    assert await _collect(*lines[:2], ends=ends) == ["café"]
    assert await _collect(*lines[:2], "", ends=ends) == ["café"]


def test_decoder_holds_a_trailing_cr_until_it_knows_whether_an_lf_follows() -> None:
    decoder = PieceDecoder()
    assert decoder.feed(b'data: {"choices": [{"delta": {"content": "a"}}]}\r') == []
    # CR then LF across two chunks is one line end, then the blank line ends the event.
    assert decoder.feed(b"\n\r") == []
    assert decoder.feed(b"\ndata: [DONE]\r\n\r\n") == ["a"]
    assert decoder.done


@pytest.mark.anyio
async def test_a_server_refusing_stream_options_is_asked_again_without_it() -> None:
    """Strict OpenAI-compatible servers answer unknown fields with 400: when the refusal names
    `stream_options`, the model retries once without it and never sends it there again."""
    fake = create_fake_llm(FakeConfig(reject_fields=("stream_options",)))
    with running_server(fake) as base_url:
        model = OpenAIChatModel(f"{base_url}/v1", "m")
        try:
            for _ in range(2):
                async with aclosing(model.stream(MESSAGES)) as pieces:
                    assert [piece async for piece in pieces]
        finally:
            await model.aclose()
    # The first answer: refused, then asked again; the second went without the field at once.
    assert fake.state.stats.requests == 3
    assert model.include_usage is False


@pytest.mark.anyio
async def test_a_400_about_another_field_is_a_model_error_without_a_retry() -> None:
    fake = create_fake_llm(FakeConfig(reject_fields=("max_tokens",)))
    with running_server(fake) as base_url:
        model = OpenAIChatModel(f"{base_url}/v1", "m")
        try:
            with pytest.raises(ModelError, match="max_tokens"):
                async with aclosing(model.stream(MESSAGES)) as pieces:
                    [piece async for piece in pieces]
        finally:
            await model.aclose()
    assert fake.state.stats.requests == 1  # dropping stream_options would not cure it
    assert model.include_usage is True  # the field was not the trouble: usage still asked for


def _fed(decoder: PieceDecoder, chunks: list[bytes]) -> list[str] | str:
    """The pieces `chunks` give, or the name of the error they raise."""
    try:
        return [piece for chunk in chunks for piece in decoder.feed(chunk)]
    except StreamReplyError as exc:
        return type(exc).__name__ + str(exc)


_event_st = st.one_of(
    st.text(max_size=12).map(
        lambda text: (
            b"data: "
            + json.dumps({"choices": [{"delta": {"content": text}}]}, ensure_ascii=False).encode()
            + b"\n\n"
        )
    ),
    st.sampled_from(
        [
            b"data: [DONE]\n\n",
            b'data: {"error": {"message": "overloaded"}}\n\n',
            b"data: {truncated\n\n",
            b"data: 5\n\n",
            b'data:{"choices": [{"delta": {"content": "x"}}]}\n\n',
            b'data: {"choices": [{"delta": {"content": "y"}}]}\r\n\r\n',
            b": keep-alive\n\n",
            b'data: {"choices":\ndata: [{"delta": {"content": "m"}}]}\n\n',
        ]
    ),
)


@given(st.lists(_event_st, max_size=8))
def test_whole_events_give_what_the_bytes_one_by_one_give(events: list[bytes]) -> None:
    # A chunk of one whole event takes a shorter path than one that cuts or joins events.
    body = b"".join(events)
    one_by_one = _fed(PieceDecoder(), [body[i : i + 1] for i in range(len(body))])
    assert _fed(PieceDecoder(), events) == one_by_one


@given(st.binary(max_size=24) | st.text(max_size=12).map(lambda t: json.dumps(t).encode()))
def test_payloads_parse_as_json_loads_parses_them(payload: bytes) -> None:
    # A whole object followed by whitespace, more data or nothing; one cut anywhere.
    after = (b'{"a": 1}' + payload, b'{"b": [2]} \r\n\t' + payload)
    for candidate in (payload, b"{" + payload, b'{"a": ' + payload + b"}", *after):
        try:
            expected = ("ok", json.loads(candidate))
        except ValueError:
            expected = ("error", None)
        try:
            got = ("ok", stream_module._loads(candidate))
        except ValueError:
            got = ("error", None)
        assert got == expected
