"""Reused connections to the model that the server closes as idle just as a request goes out
on them: sent again on the next connection, against real servers on 127.0.0.1 that close
exactly when the request arrives (no timing)."""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path

import anyio
import anyio.abc
import httpx
import pytest

from stream_rag.loadtest.raw_proxy import upstream_reply
from stream_rag.model.llm import ModelError, OpenAIChatModel
from stream_rag.model.network import closed_idle
from stream_rag.model.transport import lean_transport
from stream_rag.types import Message
from tests.helpers import TcpModelServer, read_request

from .helpers import HTTP_GUARD_S

FIXTURES = Path(__file__).parent / "fixtures" / "model_streams"
REPLY = (FIXTURES / "openai.sse").read_bytes()
RESPONSE = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
    + b"content-length: %d\r\n\r\n" % len(REPLY)
    + REPLY
)
MESSAGES = [Message("user", "What do refunds and the Pro plan cost?")]
MODELS = (
    b'{"object": "list", "data": [{"id": "m", "object": "model", "created": 0, "owned_by": "t"}]}'
)
MODELS_RESPONSE = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    + b"content-length: %d\r\n\r\n" % len(MODELS)
    + MODELS
)


class OneRequestServer(TcpModelServer):
    """Answers the first request on each connection, and closes the connection without a
    reply when the next request arrives on it (the keep-alive race, made certain). The first
    `hold` connections are answered only once all of them have their request, so that a
    client ends up with that many idle connections in its pool."""

    def __init__(self, hold: int = 1, *, answer: bool = True, response: bytes = RESPONSE) -> None:
        self.hold = hold
        self.answer = answer
        self.response = response
        self.connections = 0
        self.requests = 0
        self._all_in = anyio.Event()

    async def serve(self, stream: anyio.abc.SocketStream) -> None:
        self.connections += 1
        async with stream:
            if not await read_request(stream):
                return
            self.requests += 1
            if self.requests >= self.hold:
                self._all_in.set()
            await self._all_in.wait()
            if not self.answer:
                return  # closed without a reply, on a new connection
            await stream.send(self.response)
            if await read_request(stream):
                self.requests += 1  # then closed without a reply


async def answer(model: OpenAIChatModel) -> str:
    async with aclosing(model.stream(MESSAGES)) as pieces:
        return "".join([piece async for piece in pieces])


@pytest.mark.anyio
async def test_every_idle_connection_closed_on_reuse_is_passed_over() -> None:
    # Three connections go idle together and the server closes each as it is reused (a
    # server's keep-alive timeouts expire together for connections idle since one burst).
    # One more try would land on the second stale connection; each is tried, then a new one.
    server = OneRequestServer(hold=3)
    async with server as base_url:
        model = OpenAIChatModel(base_url, "m")
        try:
            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(answer, model)
            reply = await answer(model)
        finally:
            await model.aclose()
    assert reply.startswith("Refunds are available")
    assert server.connections == 4
    assert server.requests == 3 + 3 + 1  # three answers, three closed on reuse, one answer


@pytest.mark.anyio
async def test_a_new_connection_closed_without_a_reply_is_tried_twice_at_most() -> None:
    # The server may have read that request: not the keep-alive race, so one more try only.
    server = OneRequestServer(answer=False)
    async with server as base_url:
        model = OpenAIChatModel(base_url, "m")
        try:
            with pytest.raises(ModelError, match="request failed"):
                await answer(model)
        finally:
            await model.aclose()
    assert server.connections == 2


@pytest.mark.anyio
async def test_the_readiness_check_passes_over_idle_connections_closed_on_reuse() -> None:
    # `/readyz` asks for the model list on the same pooled connections as the answers.
    server = OneRequestServer(hold=2, response=MODELS_RESPONSE)
    async with server as base_url:
        model = OpenAIChatModel(base_url, "m")
        try:
            async with anyio.create_task_group() as group:
                for _ in range(2):
                    group.start_soon(model.check)
            await model.check()  # both idle connections are closed as it reuses them
        finally:
            await model.aclose()
    assert server.connections == 3
    assert server.requests == 2 + 2 + 1


def lean() -> httpx.AsyncBaseTransport:
    """The lean transport (model/transport.py) with httpx's default limits."""
    made: httpx.AsyncBaseTransport = lean_transport(httpx, httpx.Limits())
    return made


@pytest.mark.anyio
async def test_only_a_reused_connection_ending_before_its_reply_is_closed_idle() -> None:
    first = OneRequestServer(answer=False)
    async with (
        first as base_url,
        httpx.AsyncClient(
            base_url=base_url, timeout=HTTP_GUARD_S, transport=lean_transport(httpx, httpx.Limits())
        ) as client,
    ):
        with pytest.raises(httpx.TransportError) as fresh:
            await client.post("/chat/completions", content=b"{}")
    assert not closed_idle(fresh.value)
    second = OneRequestServer()
    async with (
        second as base_url,
        httpx.AsyncClient(
            base_url=base_url, timeout=HTTP_GUARD_S, transport=lean_transport(httpx, httpx.Limits())
        ) as client,
    ):
        assert (await client.post("/chat/completions", content=b"{}")).content == REPLY
        with pytest.raises(httpx.ReadError) as reused:
            await client.post("/chat/completions", content=b"{}")
    assert closed_idle(reused.value)


@pytest.mark.anyio
async def test_the_raw_proxy_passes_over_idle_connections_closed_on_reuse() -> None:
    # The load test's raw baseline (httpx's own network backend) has the same race.
    server = OneRequestServer(hold=3)

    async def reply(client: httpx.AsyncClient) -> bytes:
        async with upstream_reply(client, {"stream": True}) as response:
            return await response.aread()

    async with (
        server as base_url,
        httpx.AsyncClient(base_url=base_url, timeout=HTTP_GUARD_S) as client,
    ):
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(reply, client)
        assert await reply(client) == REPLY
    assert server.connections == 4
