"""A request body that stops arriving gets 408 and a closed connection, not a held slot."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from starlette.types import Message, Receive, Scope, Send

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.http.bodytimeout import BodyDeadline

from .helpers import HANG_GUARD_S, running_server, staged_parts

_UPLOAD_HEAD = (
    b"POST /v1/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: multipart/form-data; boundary=b0\r\nContent-Length: 100000\r\n\r\n"
    b'--b0\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\n\r\n'
    b"a few bytes of the file, and then nothing more"
)
_JSON_HEAD = (
    b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b'Content-Type: application/json\r\nContent-Length: 400\r\n\r\n{"query": "refu'
)


def _read_to_close(sock: socket.socket) -> bytes:
    sock.settimeout(HANG_GUARD_S)
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


@pytest.mark.parametrize("request_head", [_UPLOAD_HEAD, _JSON_HEAD], ids=["upload", "json"])
def test_a_body_that_stops_arriving_gets_408_and_the_connection_closes(
    tmp_path: Path, minilm: MiniLMEmbedder, request_head: bytes
) -> None:
    settings = Settings(data_dir=tmp_path / "data", body_timeout_s=0.05)
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        host, port = base_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(request_head)  # part of the body it announced, then silence
            # Reading to the end of the stream also asserts the server closed the connection.
            reply = _read_to_close(sock)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), reply[:200]
    assert b"connection: close" in head.lower()
    assert json.loads(body)["error"]["code"] == "body_timeout"
    assert not staged_parts(settings.data_dir)  # the staged part went too


@pytest.mark.anyio
async def test_time_the_server_spends_between_reads_is_not_charged() -> None:
    """Only waiting for the client counts: a handler that works 3 x 0.4 s between reads of a
    body that is all there already stays within a 0.5 s budget (a wall-clock deadline would
    cut it off at the second read)."""
    received: list[bytes] = []

    async def handler(scope: Scope, receive: Receive, send: Send) -> None:
        more = True
        while more:
            message = await receive()
            received.append(message.get("body", b""))
            more = message.get("more_body", False)
            await anyio.sleep(0.4)  # the server's own slowness, not the client's
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    chunks = [b"a" * 10, b"b" * 10, b"c" * 10]

    async def client() -> Message:
        # The body is all there: each read returns at once (after the checkpoint where a
        # cancelled read would stop).
        await anyio.lowlevel.checkpoint()
        body = chunks.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(chunks)}

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    app = BodyDeadline(handler, timeout_s=0.5, min_kb_s=1000.0)
    await app({"type": "http", "method": "POST", "headers": []}, client, send)
    assert received == [b"a" * 10, b"b" * 10, b"c" * 10]
    assert sent[0]["status"] == 200
