"""What `stream-rag serve` does with slow and vanishing clients."""

from __future__ import annotations

import logging
import socket
import threading
from pathlib import Path

import httpx
import pytest

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import HANG_GUARD_S, HTTP_GUARD_S, running_server, staged_parts
from .test_lifecycle import hashed_embeddings, serve_process, wait_for


def test_slow_clients_cannot_hold_the_server(tmp_path: Path) -> None:
    """200 connections that never finish their request head are closed after
    STREAM_RAG_HEADER_TIMEOUT_S; the server answers everyone else meanwhile."""
    hold = threading.Event()
    hold.set()
    with (
        running_server(hashed_embeddings(hold)) as embed_url,
        serve_process(
            tmp_path / "data",
            {"STREAM_RAG_EMBED_BASE_URL": f"{embed_url}/v1", "STREAM_RAG_HEADER_TIMEOUT_S": "1"},
        ) as (_, base_url),
    ):
        host, port = base_url.removeprefix("http://").split(":")
        slow = []
        try:
            for _ in range(200):
                sock = socket.create_connection((host, int(port)))
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # and never the rest
                slow.append(sock)
            assert httpx.get(f"{base_url}/healthz", timeout=HTTP_GUARD_S).status_code == 200
            for sock in slow:
                sock.settimeout(HANG_GUARD_S)
                # The server closes the connection: end of stream, without a response.
                assert sock.recv(1024) == b""
        finally:
            for sock in slow:
                sock.close()
        assert httpx.get(f"{base_url}/healthz", timeout=HTTP_GUARD_S).status_code == 200


def test_a_client_leaving_mid_upload_is_not_an_unhandled_error(
    tmp_path: Path, minilm: MiniLMEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings, embedder=minilm)) as base_url:
        host, port = base_url.removeprefix("http://").split(":")
        head = b'--b0\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n'
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(
                b"POST /v1/documents HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: multipart/form-data; boundary=b0\r\n"
                b"Content-Length: 1000000\r\n\r\n" + head + b"refunds " * 20_000
            )
            wait_for(lambda: any(p.is_file() for p in staged_parts(settings.data_dir)), "staging")
        wait_for(
            lambda: not any(p.is_file() for p in staged_parts(settings.data_dir)), "the discard"
        )
        # One more request through the same event loop: the abandoned one has been handled.
        assert httpx.get(f"{base_url}/v1/documents", timeout=HTTP_GUARD_S).json() == {
            "documents": []
        }
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]


def test_a_websocket_handshake_is_answered_as_http(tmp_path: Path) -> None:
    """The API has no WebSocket route; uvicorn, with a WebSocket library installed, took the
    handshake and refused it with an empty 403 (as if a key were missing). Served as the plain
    HTTP request it also is (RFC 9110 7.8: a server may ignore Upgrade)."""
    hold = threading.Event()
    hold.set()
    with (
        running_server(hashed_embeddings(hold)) as embed_url,
        serve_process(tmp_path / "data", {"STREAM_RAG_EMBED_BASE_URL": f"{embed_url}/v1"}) as (
            _,
            base_url,
        ),
    ):
        host, port = base_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(
                b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade, close\r\n"
                b"Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 13\r\n\r\n"
            )
            sock.settimeout(HANG_GUARD_S)
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
    assert reply.startswith(b"HTTP/1.1 200 "), reply[:200]
    assert reply.endswith(b'{"status":"ok"}')
