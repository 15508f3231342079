"""The chunked body read past httpx (model/body.py): its framing against h11's, the hand-back
to h11 at any point, and whole replies from raw servers (the head and body in one write,
broken framing, a body cut short), with the connection reused after a complete one."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import h11
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.model import body as model_body
from stream_rag.model import llm
from stream_rag.model.body import ChunkedFraming, FramingError
from stream_rag.model.llm import ModelError, OpenAIChatModel
from stream_rag.types import Message

MESSAGES = [Message("user", "Why does the wing stall?")]


def chunked(parts: list[bytes], *, ext: bool = False, trailers: bool = False) -> bytes:
    """`parts` as a chunked body (each a chunk, empty ones left out, as senders do)."""
    out = b"".join(b"%x%s\r\n%s\r\n" % (len(p), b";name=v" if ext else b"", p) for p in parts if p)
    return out + b"0\r\n" + (b"X-Trailer: 1\r\n" if trailers else b"") + b"\r\n"


def cuts(data: bytes, sizes: list[int]) -> list[bytes]:
    out, i = [], 0
    for size in sizes:
        out.append(data[i : i + size])
        i += size
    return [*out, data[i:]]


parts_st = st.lists(st.binary(min_size=0, max_size=40), max_size=12)


@given(parts_st, st.lists(st.integers(1, 30), max_size=40), st.booleans(), st.booleans())
def test_framing_gives_the_chunks_data_however_the_body_is_cut(
    parts: list[bytes], sizes: list[int], ext: bool, trailers: bool
) -> None:
    body = chunked(parts, ext=ext, trailers=trailers) + b"NEXT"
    framing = ChunkedFraming()
    data = b"".join(framing.feed(piece) for piece in cuts(body, sizes))
    assert data == b"".join(parts)
    assert framing.ended
    assert framing.rest() == b"0\r\n\r\nNEXT"  # what follows the body is kept


def _h11_after_head() -> h11.Connection:
    """An h11 client that has sent a request and read a chunked reply's head."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "x")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
    assert isinstance(conn.next_event(), h11.Response)
    return conn


def _h11_rest(conn: h11.Connection, data: bytes) -> bytes:
    conn.receive_data(data)
    out = []
    while True:
        event = conn.next_event()
        if isinstance(event, h11.Data):
            out.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            return b"".join(out)
        else:
            raise AssertionError(f"h11 stopped at {event!r}")


@given(parts_st, st.integers(0, 400), st.booleans(), st.booleans())
def test_h11_reads_on_from_what_the_framing_gives_back(
    parts: list[bytes], cut: int, ext: bool, trailers: bool
) -> None:
    body = chunked(parts, ext=ext, trailers=trailers)
    cut = min(cut, len(body))
    framing = ChunkedFraming()
    taken = framing.feed(body[:cut])
    rest = framing.rest()
    after = _h11_rest(_h11_after_head(), rest + body[cut:])
    whole = b"".join(parts)
    if rest.startswith(b"1\r\n-"):  # cut inside a chunk's footer: one byte of filler data
        after = after[1:]
    assert taken + after == whole


@pytest.mark.parametrize(
    "body",
    [b"zz\r\nab\r\n", b"2\r\nabXY", b"-1\r\n", b"1" * 70_000, b";\r\n"],
)
def test_broken_framing_is_an_error(body: bytes) -> None:
    with pytest.raises(FramingError):
        ChunkedFraming().feed(body)


def _event(content: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


WORDS = ["The", " wing", " stalls", " [1].", " Lift", " falls", " [2]."]
EVENTS = [_event(w) for w in WORDS]
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


@asynccontextmanager
async def raw_server(reply: Callable[[int], list[bytes]]) -> AsyncIterator[tuple[int, list[int]]]:
    """A keep-alive HTTP/1.1 server on 127.0.0.1 whose n-th reply on a connection is the
    writes `reply(n)`; returns its port and, per connection, how many requests it read."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    requests: list[int] = []

    async def serve(stream: anyio.abc.SocketStream) -> None:
        index = len(requests)
        requests.append(0)
        buffer = b""
        async with stream:
            while True:
                while b"\r\n\r\n" not in buffer:
                    try:
                        buffer += await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        return
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                while len(buffer) < length:
                    buffer += await stream.receive()
                buffer = buffer[length:]
                requests[index] += 1
                for write in reply(requests[index] - 1):
                    await stream.send(write)
                    await anyio.sleep(0.01)

    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, serve)
        yield port, requests
        group.cancel_scope.cancel()


async def _answer(port: int) -> list[str]:
    model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "m", stall_s=5)
    try:
        pieces: list[str] = []
        for _ in range(2):
            async with aclosing(model.stream(MESSAGES)) as stream:
                pieces.extend([piece async for piece in stream])
        return pieces
    finally:
        await model.aclose()


@pytest.fixture
def direct_reads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each reply was read past httpx (`direct_pieces` gave a reader)."""
    used: list[bool] = []
    original = model_body.direct_pieces

    def recording(response: Any) -> AsyncGenerator[str, None] | None:
        reader = original(response)
        used.append(reader is not None)
        return reader

    monkeypatch.setattr(llm, "direct_pieces", recording)
    return used


@pytest.mark.parametrize("done", [True, False])
@pytest.mark.parametrize("together", [True, False])
@pytest.mark.anyio
async def test_replies_read_past_httpx_and_the_connection_reused(
    direct_reads: list[bool], done: bool, together: bool
) -> None:
    # `together`: the head and the whole body in one write, so that h11 reads the body's
    # bytes along with the head; else the head, then each event a chunk and a write.
    end = [b"data: [DONE]\n\n"] if done else []
    body = chunked([*EVENTS, *end])

    def reply(n: int) -> list[bytes]:
        if together:
            return [HEAD + body]
        return [HEAD, *[chunked([e])[: -len(b"0\r\n\r\n")] for e in [*EVENTS, *end]], b"0\r\n\r\n"]

    async with raw_server(reply) as (port, requests):
        pieces = await _answer(port)
    assert pieces == WORDS * 2
    assert requests == [2]  # one connection, reused
    assert direct_reads == [True, True]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (HEAD + chunked(EVENTS[:2])[:-5] + b"zz\r\n", "illegal chunk header"),
        (HEAD + chunked(EVENTS[:2])[:-5] + b"3\r\nabcXY", "malformed chunk footer"),
    ],
)
@pytest.mark.anyio
async def test_broken_framing_is_a_model_error(
    direct_reads: list[bool], body: bytes, message: str
) -> None:
    async with raw_server(lambda n: [body]) as (port, _):
        with pytest.raises(ModelError, match=f"RemoteProtocolError: {message}"):
            await _answer(port)
    assert direct_reads == [True]


@pytest.mark.anyio
async def test_a_body_cut_short_is_a_model_error(direct_reads: list[bool]) -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.receive()
            await stream.send(HEAD)
            await anyio.sleep(0.05)
            await stream.send(chunked(EVENTS[:2])[:-5])  # then the server leaves

    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, serve)
        with pytest.raises(ModelError, match="incomplete chunked read"):
            await _answer(port)
        group.cancel_scope.cancel()
    assert direct_reads == [True]
