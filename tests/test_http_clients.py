"""The API as HTTP clients meet it, over real sockets against uvicorn with the protocol
`stream-rag serve` runs (http/serving.py): methods a route does not take, `Connection`
headers, the server's own 503, HTTP/1.0 without `Host`."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.http.serving import GuardedHttpToolsProtocol

from .helpers import free_port
from .test_lifecycle import HANG_GUARD_S


@contextmanager
def serving(settings: Settings, embedder: MiniLMEmbedder, **config: Any) -> Iterator[int]:
    """The app behind a real uvicorn with serve's protocol; yields the port."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, embedder=embedder),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            http=GuardedHttpToolsProtocol,
            **config,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + HANG_GUARD_S
    while not server.started:
        assert thread.is_alive(), "uvicorn did not start"
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=HANG_GUARD_S)


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEmbedder) -> Iterator[int]:
    settings = Settings(data_dir=Path(tmp_path_factory.mktemp("clients")) / "data")
    with serving(settings, minilm) as bound:
        yield bound


def exchange(port: int, request: bytes) -> bytes:
    """Send `request` on a new connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(HANG_GUARD_S)
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def parse(reply: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, header lines (lower-cased names, in order, repeats kept) and raw body."""
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.append((name.strip().lower(), value.strip()))
    return int(lines[0].split()[1]), headers, body


def header(headers: list[tuple[str, str]], name: str) -> list[str]:
    return [value for n, value in headers if n == name]


def request(method: str, path: str, extra: str = "", version: str = "1.1") -> bytes:
    return (
        f"{method} {path} HTTP/{version}\r\nHost: 127.0.0.1\r\nConnection: close\r\n{extra}\r\n"
    ).encode()


# -- methods a route does not take --------------------------------------------------------------


def test_head_of_the_chat_route_is_405_not_a_bodiless_post(port: int) -> None:
    """HEAD /v1/chat would run (paid) generation as GET does, or read as a POST without a body
    (400 invalid_field); a HEAD there is refused with the methods that are taken."""
    status, headers, body = parse(exchange(port, request("HEAD", "/v1/chat?q=refunds")))
    assert status == 405
    assert header(headers, "allow") == ["GET, POST"]
    assert header(headers, "content-type") == ["application/json"]
    assert body == b""  # a HEAD's answer has no body
    status, headers, body = parse(exchange(port, request("GET", "/v1/chat/completions")))
    assert status == 405
    assert json.loads(body)["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/v1/documents", {"GET", "HEAD", "POST"}),
        ("/v1/documents/doc_x", {"GET", "HEAD", "DELETE"}),
        ("/v1/keys", {"GET", "HEAD", "POST"}),
        ("/v1/chat", {"GET", "POST"}),
        ("/v1/chat/completions", {"POST"}),
        ("/healthz", {"GET", "HEAD"}),
    ],
)
def test_a_405_allows_every_method_of_the_path(port: int, path: str, allowed: set[str]) -> None:
    """RFC 9110 15.5.6: a 405 lists the target's methods, all routes of the path together
    (`/v1/documents` is POST in one route and GET in another)."""
    for method in ("PUT", "PATCH", "OPTIONS"):
        status, headers, body = parse(exchange(port, request(method, path)))
        assert status == 405, (method, path)
        assert {m.strip() for m in header(headers, "allow")[0].split(",")} == allowed
        assert json.loads(body)["error"]["code"] == "method_not_allowed"


# -- Connection ---------------------------------------------------------------------------------


def test_an_sse_answer_to_connection_close_says_close_once(port: int) -> None:
    """sse-starlette sets `Connection: keep-alive`; beside uvicorn's `close` for a client that
    asked for it, the response had two that contradict each other."""
    body = json.dumps({"question": "How do refunds work?"})
    extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    reply = exchange(port, request("POST", "/v1/chat", extra)[:-2])
    status, headers, _ = parse(reply)
    assert status == 200
    assert header(headers, "content-type")[0].startswith("text/event-stream")
    assert header(headers, "connection") == ["close"]


# -- the server's own answers -------------------------------------------------------------------


def test_past_the_connection_limit_the_503_is_json_with_retry_after(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """uvicorn's refusal past `limit_concurrency` (STREAM_RAG_MAX_CONNECTIONS) was text/plain;
    it counts the asking connection itself, so at 1 every request is refused."""
    with serving(Settings(data_dir=tmp_path / "data"), minilm, limit_concurrency=1) as bound:
        status, headers, body = parse(exchange(bound, request("GET", "/healthz")))
    assert status == 503
    assert header(headers, "content-type") == ["application/json"]
    assert header(headers, "retry-after") == ["1"]
    assert header(headers, "connection") == ["close"]
    assert int(header(headers, "content-length")[0]) == len(body)
    assert json.loads(body)["error"]["code"] == "server_busy"


# -- Host ---------------------------------------------------------------------------------------


def test_http_10_needs_no_host(port: int) -> None:
    """HTTP/1.0 has no Host requirement (RFC 9112 3.2 is for HTTP/1.1), and a request without
    one cannot be DNS rebinding's: browsers always send it."""
    for path in ("/healthz", "/v1/documents"):
        status, _, body = parse(exchange(port, f"GET {path} HTTP/1.0\r\n\r\n".encode()))
        assert status == 200, body
    # HTTP/1.1 without Host stays a 400 (RFC 9112 3.2: MUST).
    status, _, body = parse(exchange(port, b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"))
    assert status == 400
    assert json.loads(body)["error"]["code"] == "invalid_host"
    assert "Host" in json.loads(body)["error"]["message"]


def test_http_10_needs_no_host_with_an_allowlist_either(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data", allowed_hosts=("rag.example",))
    with serving(settings, minilm) as bound:
        status, _, body = parse(exchange(bound, b"GET /healthz HTTP/1.0\r\n\r\n"))
        assert status == 200, body
        refused = b"GET /healthz HTTP/1.0\r\nHost: attacker.example\r\n\r\n"
        status, _, body = parse(exchange(bound, refused))
        assert status == 400
        assert json.loads(body)["error"]["code"] == "invalid_host"
