"""Uploads against a real uvicorn server: limits apply while bytes arrive, and a client that
goes away mid-upload leaves nothing behind."""

from __future__ import annotations

import select
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from stream_rag.config import Settings
from stream_rag.http.app import create_app

from .helpers import HTTP_GUARD_S, content_length, running_server, staged_parts

BOUNDARY = "streamboundary42"
HEAD = (
    f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
    "Content-Type: text/plain\r\n\r\n"
).encode()


def connect(base_url: str) -> socket.socket:
    parts = urlsplit(base_url)
    assert parts.hostname is not None
    assert parts.port is not None
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def offer_chunks(
    sock: socket.socket, piece: bytes, limit: int = 64 * 1024 * 1024
) -> tuple[int, bool]:
    """Send `piece` as HTTP chunks until the server answers (or hangs up) or `limit` bytes are
    sent; return the bytes sent and whether the server answered first."""
    sent = 0
    while sent < limit:
        if select.select([sock], [], [], 0)[0]:
            return sent, True
        try:
            sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            return sent, True
        sent += len(piece)
    return sent, False


def read_response(sock: socket.socket) -> str:
    """Read one HTTP response with a Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = content_length(head)
    while len(body) < length:
        body += sock.recv(65536)
    return (head + b"\r\n\r\n" + body).decode("latin-1")


def request_head(extra: str) -> bytes:
    return (
        "POST /v1/documents HTTP/1.1\r\nHost: test\r\n"
        f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n{extra}\r\n"
    ).encode()


def test_oversized_chunked_upload_is_refused_while_streaming(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", max_upload_mb=1)
    with running_server(create_app(settings)) as base_url, connect(base_url) as sock:
        sock.sendall(request_head("Transfer-Encoding: chunked\r\n"))
        chunk = b"%x\r\n" % len(HEAD) + HEAD + b"\r\n"
        sock.sendall(chunk)
        # Offer up to 64 MB; the server must answer long before it has seen it all.
        sent, answered = offer_chunks(sock, b"x" * 65536)
        assert answered
        response = read_response(sock)
        assert response.startswith("HTTP/1.1 413"), response[:200]
        assert "file_too_large" in response
        assert sent < 16 * 1024 * 1024
        documents = httpx.get(f"{base_url}/v1/documents", timeout=HTTP_GUARD_S).json()["documents"]
        assert documents == []
    assert not list((settings.data_dir / "tmp").iterdir())


def test_declared_oversized_upload_is_refused_before_reading(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", max_upload_mb=1)
    with running_server(create_app(settings)) as base_url, connect(base_url) as sock:
        sock.sendall(request_head(f"Content-Length: {200 * 1024 * 1024}\r\n") + HEAD)
        response = read_response(sock)
        assert response.startswith("HTTP/1.1 413")
        assert "file_too_large" in response


def test_client_gone_mid_upload_leaves_nothing(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    total = 4 * 1024 * 1024
    with running_server(create_app(settings)) as base_url:
        with connect(base_url) as sock:
            sock.sendall(request_head(f"Content-Length: {total}\r\n") + HEAD)
            sock.sendall(b"y" * (total // 2))
            # Wait until the server has started staging the file, then vanish.
            deadline = time.monotonic() + 60  # against a hang only
            while not staged_parts(settings.data_dir):
                assert time.monotonic() < deadline
                time.sleep(0.01)
        deadline = time.monotonic() + 60  # against a hang only
        while staged_parts(settings.data_dir):
            assert time.monotonic() < deadline, "the staged part was not cleaned up"
            time.sleep(0.02)
        assert httpx.get(f"{base_url}/v1/documents", timeout=HTTP_GUARD_S).json()["documents"] == []
        ok = httpx.post(
            f"{base_url}/v1/documents",
            files={"file": ("fine.txt", b"Still works.")},
            timeout=HTTP_GUARD_S,
        )
        assert ok.status_code == 201
