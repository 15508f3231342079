"""A request body that stops arriving gets 408 and a closed connection, not a held slot."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import running_server

HANG_GUARD_S = 120.0  # only against a hang: the server answers as soon as the budget is spent

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
    assert not list((settings.data_dir / "tmp").rglob("*.part"))  # the staged part went too
