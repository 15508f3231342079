"""The lean network backend under httpx's connection pool, against real servers on 127.0.0.1:
large bodies both ways, stalls, refusals, reads split by size, and connections the server
closed while idle."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import socket
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import httpcore
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from stream_rag.model.llm import OpenAIChatModel
from stream_rag.model.network import LeanBackend, LeanStream, _Protocol
from stream_rag.model.transport import LeanPool, lean_transport
from tests.helpers import free_port, running_server

BIG = hashlib.sha256(b"seed").digest() * (3 * 1024 * 1024 // 32)  # 3 MB, past the high water


# httpx's own defaults.
LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)


def lean_client(transport: Any = None, **kwargs: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=transport or lean_transport(httpx, LIMITS), **kwargs)


def app() -> Starlette:
    async def download(request: Request) -> Response:
        async def chunks() -> AsyncIterator[bytes]:
            for start in range(0, len(BIG), 100_000):
                yield BIG[start : start + 100_000]

        return StreamingResponse(chunks())

    async def upload(request: Request) -> Response:
        digest = hashlib.sha256()
        async for chunk in request.stream():
            digest.update(chunk)
        return Response(digest.hexdigest())

    return Starlette(
        routes=[
            Route("/download", download),
            Route("/upload", upload, methods=["POST"]),
        ]
    )


@pytest.mark.anyio
async def test_large_bodies_arrive_whole_both_ways() -> None:
    with running_server(app()) as base_url:
        async with lean_client(base_url=base_url) as client:
            async with client.stream("GET", "/download") as response:
                body = b"".join([chunk async for chunk in response.aiter_raw()])
            sent = await client.post("/upload", content=BIG * 3)
    assert body == BIG
    assert sent.text == hashlib.sha256(BIG * 3).hexdigest()


@pytest.mark.anyio
async def test_a_stalled_body_is_a_read_timeout() -> None:
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n"

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.receive()
            await stream.send(head)  # then nothing, until the client goes away
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while True:
                    await stream.receive()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    timeout = httpx.Timeout(10.0, read=0.3)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, serve)
        client = lean_client(base_url=f"http://127.0.0.1:{port}", timeout=timeout)
        async with client, client.stream("GET", "/") as response:
            chunks = response.aiter_raw()
            assert await chunks.__anext__() == b"first"
            with pytest.raises(httpx.ReadTimeout):
                await chunks.__anext__()
        group.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_request_past_the_pool_limit_waits_then_is_a_pool_timeout() -> None:
    # One connection, held by a response still open: the next request waits for it, up to
    # its pool timeout; once the first response closes, a request gets the connection again.
    transport = lean_transport(httpx, httpx.Limits(max_connections=1))
    timeout = httpx.Timeout(10.0, pool=0.2)
    with running_server(app()) as base_url:
        async with lean_client(transport, base_url=base_url, timeout=timeout) as client:
            async with client.stream("GET", "/download") as held:
                with pytest.raises(httpx.PoolTimeout):
                    await client.post("/upload", content=b"x")
                await held.aread()
            sent = await client.post("/upload", content=b"x")
            assert sent.text == hashlib.sha256(b"x").hexdigest()
            assert len(transport.pool.connections) == 1


@pytest.mark.anyio
async def test_nothing_listening_is_a_connect_error() -> None:
    async with lean_client() as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{free_port()}/")


@pytest.mark.anyio
async def test_reads_are_split_to_the_size_asked_and_end_with_empty_bytes() -> None:
    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.send(b"0123456789")

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, serve)
        stream = await LeanBackend(httpcore).connect_tcp("127.0.0.1", port, timeout=10)
        received = [await stream.read(4, timeout=10)]
        while len(b"".join(received)) < 10:
            received.append(await stream.read(100, timeout=10))
        assert received[0] == b"0123"
        assert b"".join(received) == b"0123456789"
        assert await stream.read(100, timeout=10) == b""  # the server closed
        await stream.aclose()
        group.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    # Without noticing the close, the second request would go out on a dead connection and
    # fail; the pool asks the stream whether an idle connection is readable (it is at EOF).
    reply = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    connections = 0

    async def serve(stream: anyio.abc.SocketStream) -> None:
        nonlocal connections
        connections += 1
        async with stream:
            await stream.receive()
            await stream.send(reply)  # keep-alive by HTTP/1.1's default, then closed

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, serve)
        # Kept alive well past the wait below: only the close can expire the connection.
        transport = lean_transport(httpx, httpx.Limits(keepalive_expiry=120))
        async with lean_client(transport, base_url=f"http://127.0.0.1:{port}") as client:
            assert (await client.get("/")).text == "ok"
            [connection] = transport.pool.connections
            with anyio.fail_after(10):
                # Nothing signals when the server's close reaches the client's socket.
                while not connection.has_expired():  # noqa: ASYNC110
                    await anyio.sleep(0.01)
            assert (await client.get("/")).text == "ok"
        group.cancel_scope.cancel()
    assert connections == 2


def test_only_plain_http_models_get_the_lean_transport() -> None:
    # That a plain-HTTP model's replies go through it: test_model_body.py (read past httpx).
    plain = OpenAIChatModel("http://127.0.0.1:9/v1", "m")
    tls = OpenAIChatModel("https://127.0.0.1:9/v1", "m")
    assert plain.transport is not None
    assert isinstance(plain.transport.pool, LeanPool)
    assert tls.transport is None


@pytest.mark.anyio
async def test_a_close_the_event_loop_has_not_read_yet_is_seen_at_the_socket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A busy loop may not have read the server's close when the pool looks at an idle
    # connection: a connection quiet for long enough is then checked at the socket.
    monkeypatch.setattr("stream_rag.model.network._POLL_AFTER_S", 0.0)
    monkeypatch.setattr("stream_rag.model.network._POLL_EVERY_S", 0.0)
    close, closed = threading.Event(), threading.Event()
    accepted = 0

    def serve(listener: socket.socket) -> None:
        nonlocal accepted
        for _ in range(2):
            conn, _ = listener.accept()
            accepted += 1
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                if not closed.is_set():
                    close.wait(10)  # once the client has put the connection back
                    conn.shutdown(socket.SHUT_RDWR)
                    closed.set()
                else:
                    conn.recv(65536)  # until the client closes it

    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        server = threading.Thread(target=serve, args=(listener,), daemon=True)
        server.start()
        async with lean_client(base_url=f"http://127.0.0.1:{port}") as client:
            assert (await client.get("/")).text == "ok"
            close.set()
            # Waited for on the loop's own thread, so the loop cannot read the close first.
            assert closed.wait(10)
            assert (await client.get("/")).text == "ok"
        await anyio.to_thread.run_sync(server.join, 10)
    assert accepted == 2


@pytest.mark.anyio
async def test_writes_go_out_together_and_without_a_read_after_them() -> None:
    # Held writes are sent at the end of the loop's turn even when no read follows.
    received = anyio.Event()
    got = b""

    async def serve(stream: anyio.abc.SocketStream) -> None:
        nonlocal got
        async with stream:
            while len(got) < 10:
                got += await stream.receive()
            received.set()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, serve)
        stream = await LeanBackend(httpcore).connect_tcp("127.0.0.1", port, timeout=10)
        await stream.write(b"01234", timeout=10)
        await stream.write(b"56789", timeout=10)
        with anyio.fail_after(10):
            await received.wait()
        await stream.aclose()
        group.cancel_scope.cancel()
    assert got == b"0123456789"


def port_app() -> Starlette:
    """Answers with the client's port (which connection carried the request), once three
    requests are in at the same time."""
    arrived: list[int] = []
    all_in: list[anyio.Event] = []  # made on the server's event loop

    async def port(request: Request) -> Response:
        if not all_in:
            all_in.append(anyio.Event())
        arrived.append(1)
        if len(arrived) >= 3:
            all_in[0].set()
        await all_in[0].wait()
        assert request.client is not None
        return Response(str(request.client.port))

    return Starlette(routes=[Route("/port", port)])


async def pool_run(
    client: httpx.AsyncClient, pool: LeanPool, requests: int
) -> tuple[int, int, bool]:
    """`requests` at once, then two one after the other: the connections the first used,
    those left in the pool after them, and whether the last two reused one of them."""
    ports: list[str] = []

    async def one() -> None:
        ports.append((await client.get("/port")).text)

    with anyio.fail_after(30):  # a request left waiting for a connection would hang
        async with anyio.create_task_group() as group:
            for _ in range(requests):
                group.start_soon(one)
    left = len(pool.connections)
    later = [(await client.get("/port")).text for _ in range(2)]
    return len(set(ports)), left, set(later) <= set(ports)


@pytest.mark.anyio
async def test_the_lean_pool_assigns_waiting_requests_and_keeps_what_httpx_keeps() -> None:
    # The connections, reuse and limits httpx's own pool gives the same runs.
    # Five requests over three connections: two wait, and get a connection as one is freed.
    transport = lean_transport(httpx, httpx.Limits(max_connections=3, max_keepalive_connections=3))
    with running_server(port_app()) as base_url:
        async with lean_client(transport, base_url=base_url) as client:
            assert await pool_run(client, transport.pool, 5) == (3, 3, True)
    # Three at once, one kept alive: the surplus is closed as the responses close.
    transport = lean_transport(httpx, httpx.Limits(max_connections=3, max_keepalive_connections=1))
    with running_server(port_app()) as base_url:
        async with lean_client(transport, base_url=base_url) as client:
            assert await pool_run(client, transport.pool, 3) == (3, 1, True)


class HeldTransport:
    """A transport that holds what is written; the stream's protocol is fed by hand."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


def fed_stream() -> tuple[LeanStream, _Protocol]:
    protocol = _Protocol()
    transport = HeldTransport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    closed_idle = type("ServerClosedIdle", (httpcore.ReadError,), {})
    return LeanStream(transport, protocol, httpcore, closed_idle), protocol  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_read_waits_for_its_own_stall_limit_not_an_earlier_reads() -> None:
    # One stall timer per stream: armed by the first read, it fires while a later read (with
    # a longer limit) waits, and is armed again for that read's own deadline.
    stream, protocol = fed_stream()
    loop = asyncio.get_running_loop()
    loop.call_soon(protocol.data_received, b"first")
    assert await stream.read_buffered(0.05) == b"first"
    waiting = loop.create_task(stream.read_buffered(60.0))
    await anyio.sleep(0.3)  # past the first read's deadline: the later one must not expire
    assert not waiting.done()
    protocol.data_received(b"second")
    assert await waiting == b"second"
    await stream.aclose()


@pytest.mark.anyio
async def test_a_stall_after_reads_that_got_data_is_a_read_timeout() -> None:
    stream, protocol = fed_stream()
    loop = asyncio.get_running_loop()
    for chunk in (b"a", b"b", b"c"):
        loop.call_soon(protocol.data_received, chunk)
        assert await stream.read(100, 0.2) == chunk
    with anyio.fail_after(30), pytest.raises(httpcore.ReadTimeout):
        await stream.read_buffered(0.1)
    # A read after the timeout has a timer of its own again.
    with anyio.fail_after(30), pytest.raises(httpcore.ReadTimeout):
        await stream.read(100, 0.1)


@pytest.mark.anyio
@pytest.mark.parametrize("cut", [1, 20, 30, 40, 50, 1000])
async def test_a_reply_head_is_read_alone_however_it_arrives(cut: int) -> None:
    # The reader of the head (h11) gets no byte of the body: after it, the body is all still
    # in the stream (`at_body`), for model/body.py to read. A 1xx head is followed by another.
    stream, protocol = fed_stream()
    early = b"HTTP/1.1 100 Continue\r\n\r\n"
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    body = b"5\r\nhello\r\n0\r\n\r\n"
    await stream.write(b"POST / HTTP/1.1\r\n\r\n")
    reply = early + head + body
    for start in range(0, len(reply), cut):
        protocol.data_received(reply[start : start + cut])
    heads = b""
    while not stream.at_body:
        heads += await stream.read(65536, timeout=10)
    assert heads == early + head
    assert await stream.read_buffered(10) == body
    assert not stream.at_body
    await stream.aclose()
