"""The bench's lean HTTP client (loadtests/sse_client.py) reads what httpx reads: a real
uvicorn server's chunked and plain bodies, cut by the network wherever it cuts them."""

from __future__ import annotations

import json

import anyio
import anyio.lowlevel
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from loadtests.sse_client import ResponseError, body_chunks, post_json

from .helpers import HTTP_GUARD_S, running_server

PARTS = [b'event: sentence\r\ndata: {"index": 0}\r\n\r\n', b"x" * 70000, "é€😀".encode(), b""]


def app() -> Starlette:
    async def stream(request: Request) -> StreamingResponse:
        asked = await request.json()

        async def parts() -> object:
            for part in PARTS * asked["times"]:
                yield part
                await anyio.lowlevel.checkpoint()

        return StreamingResponse(parts(), media_type="text/event-stream")  # type: ignore[arg-type]

    async def plain(request: Request) -> Response:
        return Response(json.dumps(await request.json()), status_code=422)

    return Starlette(
        routes=[Route("/s", stream, methods=["POST"]), Route("/p", plain, methods=["POST"])]
    )


async def read(host: str, port: int, path: str, payload: object) -> tuple[int, bytes]:
    status, reader, writer, chunked = await post_json(host, port, path, payload)
    try:
        return status, b"".join([data async for data in body_chunks(reader, chunked)])
    finally:
        writer.close()


@pytest.mark.parametrize("http", ["h11", "httptools"])
def test_reads_the_bytes_httpx_reads(http: str) -> None:
    pytest.importorskip(http)
    with running_server(app(), http=http) as base_url:
        url = httpx.URL(base_url)
        host, port = url.host, url.port or 80
        for times in (0, 1, 3):
            expected = httpx.post(
                f"{base_url}/s", json={"times": times}, timeout=HTTP_GUARD_S
            ).content
            assert anyio.run(read, host, port, "/s", {"times": times}) == (200, expected)
            assert expected == b"".join(PARTS) * times
        status, body = anyio.run(read, host, port, "/p", {"a": "é"})
        assert (status, json.loads(body)) == (422, {"a": "é"})


def test_refuses_what_is_not_http() -> None:
    async def main() -> None:
        async def reply(stream: anyio.abc.SocketStream) -> None:
            async with stream:
                await stream.receive()
                await stream.send(b"SSH-2.0-OpenSSH\r\n\r\n")

        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with listener, anyio.create_task_group() as tasks:
            tasks.start_soon(listener.serve, reply)
            with pytest.raises(ResponseError):
                await post_json("127.0.0.1", port, "/", {})
            tasks.cancel_scope.cancel()

    anyio.run(main)
