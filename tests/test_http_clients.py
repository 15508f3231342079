"""The API as HTTP clients meet it, over real sockets against uvicorn with the protocol
`stream-rag serve` runs (http/serving.py): methods a route does not take, `Connection`
headers, the server's own 503, HTTP/1.0 without `Host`."""

from __future__ import annotations

import gzip
import json
import logging
import socket
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
from stream_rag.model.fake import create_fake_llm
from stream_rag.model.llm import ChatModel, OpenAIChatModel

from .helpers import HANG_GUARD_S, free_port, running_server, serving_thread
from .test_chat_http import POLICY, QUESTION, upload
from .test_lifecycle import SLOW, wait_for


@contextmanager
def serving(
    settings: Settings, embedder: MiniLMEmbedder, model: ChatModel | None = None, **config: Any
) -> Iterator[int]:
    """The app behind a real uvicorn with serve's protocol; yields the port."""
    port = free_port()
    server_config = uvicorn.Config(
        create_app(settings, embedder=embedder, model=model),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        log_config=None,  # uvicorn's loggers propagate: caplog sees them
        http=GuardedHttpToolsProtocol,
        **config,
    )
    with serving_thread(server_config):
        yield port


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
        refused = b"GET /openapi.json HTTP/1.0\r\nHost: attacker.example\r\n\r\n"
        status, _, body = parse(exchange(bound, refused))
        assert status == 400
        assert json.loads(body)["error"]["code"] == "invalid_host"
        # Health answers probes by any name (an IP, a container's name) once hosts are listed.
        probe = b"GET /healthz HTTP/1.0\r\nHost: 10.0.0.7:8000\r\n\r\n"
        assert parse(exchange(bound, probe))[0] == 200


# -- a client that half-closes after its request ------------------------------------------------


def half_closed_exchange(port: int, request: bytes) -> bytes:
    """Send `request`, then shut the socket's sending side (as `ncat`, `nc -N` and some health
    checkers do at the end of their input), and read until the server closes."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(HANG_GUARD_S)
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


@pytest.mark.parametrize("path", ["/v1/documents", "/metrics", "/healthz", "/", "/static/app.js"])
def test_a_client_that_half_closes_after_its_request_is_answered(port: int, path: str) -> None:
    """RFC 9112 9.6 lets a client close its sending side; uvicorn closed the connection at the
    EOF, so a route that waited on anything (a thread: the documents list, the metrics) never
    answered; nor a file (Starlette's `FileResponse` watches for the client leaving, and the
    half-close was reported to it as that). Keep-alive (no `Connection: close`): the server
    closes after the answer."""
    for version in ("1.1", "1.0"):
        head = f"GET {path} HTTP/{version}\r\nHost: 127.0.0.1\r\n\r\n".encode()
        status, headers, body = parse(half_closed_exchange(port, head))
        assert status == 200, (path, version)
        assert int(header(headers, "content-length")[0]) == len(body)


def test_a_half_closed_post_with_a_body_is_answered(port: int) -> None:
    body = json.dumps({"query": "refunds"})
    head = (
        "POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n{body}"
    )
    status, _, reply = parse(half_closed_exchange(port, head.encode()))
    assert status == 200, reply
    assert json.loads(reply)["query"] == "refunds"


def test_a_half_closed_pipeline_is_answered_in_order(port: int) -> None:
    heads = b"".join(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        for path in ("/metrics", "/healthz", "/v1/documents")
    )
    reply = half_closed_exchange(port, heads)
    assert reply.count(b"HTTP/1.1 200 OK\r\n") == 3
    assert reply.index(b"# HELP") < reply.index(b'{"status":"ok"}') < reply.index(b'{"documents"')


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat", {"question": QUESTION}),
        ("/v1/answer", {"question": QUESTION}),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": QUESTION}]}),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": QUESTION}], "stream": True},
        ),
    ],
)
def test_an_answer_for_a_half_closed_client_closes_the_model_request(
    tmp_path: Path,
    minilm: MiniLMEmbedder,
    caplog: pytest.LogCaptureFixture,
    path: str,
    body: dict[str, Any],
) -> None:
    """At the EOF the server cannot tell a half-close from a client gone (both send a FIN):
    work that waits for the client to leave (an answer) stops, and its model request closes."""
    fake = create_fake_llm(SLOW)
    stats = fake.state.stats
    with running_server(fake) as llm_url:
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        # No grace for a resume (tests/test_resume.py has it): /v1/chat stops with its client.
        settings = Settings(data_dir=tmp_path / "data", resume_grace_s=0)
        with serving(settings, minilm, model) as bound:
            upload(f"http://127.0.0.1:{bound}", "policy.md", POLICY)
            payload = json.dumps(body)
            head = (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n{payload}"
            )
            with socket.create_connection(("127.0.0.1", bound)) as sock:
                sock.sendall(head.encode())
                wait_for(lambda: stats.requests >= 1, "the model request")
                sock.shutdown(socket.SHUT_WR)
                wait_for(lambda: stats.disconnected >= 1, "the model request to be closed")
                sock.settimeout(HANG_GUARD_S)
                while sock.recv(65536):  # and the server closes the connection
                    pass
            assert stats.completed == 0
    # The server's own (an ASGI app ending without its response); the suite's other servers'
    # threads may log meanwhile.
    errors = [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.ERROR and r.name.startswith("uvicorn")
    ]
    assert errors == []


# -- request bodies -----------------------------------------------------------------------------


def post(
    port: int, path: str, body: bytes, headers: str
) -> tuple[int, list[tuple[str, str]], bytes]:
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{headers}"
    return parse(exchange(port, f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body))


def test_a_compressed_body_is_refused_with_415_not_read_as_it_is(port: int) -> None:
    """The server decodes no content coding: a gzip JSON body was read as its bytes ("not
    UTF-8 (byte 1)"), a gzip upload as a malformed multipart body, and a body labelled `br`
    but sent plain was accepted. RFC 9110 15.5.16: 415, with `Accept-Encoding` (12.5.3)."""
    query = json.dumps({"query": "refunds"}).encode()
    form = (
        b'--bb\r\nContent-Disposition: form-data; name="file"; filename="gz.txt"\r\n\r\n'
        b"Refunds are possible within 30 days.\r\n--bb--\r\n"
    )
    for path, body, media in (
        ("/v1/search", gzip.compress(query), "application/json"),
        ("/v1/search", query, "application/json"),
        ("/v1/documents", gzip.compress(form), "multipart/form-data; boundary=bb"),
        ("/v1/documents", form, "multipart/form-data; boundary=bb"),
    ):
        for coding in ("gzip", "br", "gzip, identity"):
            extra = f"Content-Type: {media}\r\nContent-Encoding: {coding}\r\n"
            status, headers, reply = post(port, path, body, extra)
            assert status == 415, (path, coding, reply)
            assert json.loads(reply)["error"]["code"] == "unsupported_media_type"
            assert header(headers, "accept-encoding") == ["identity"]
    status, _, reply = post(
        port,
        "/v1/search",
        query,
        "Content-Type: application/json\r\nContent-Encoding: identity\r\n",
    )
    assert status == 200, reply


def test_a_transfer_coding_other_than_chunked_is_501(port: int) -> None:
    """httptools de-chunks but decodes nothing else: `Transfer-Encoding: gzip, chunked` was
    read as the bytes of the gzip. RFC 9112 6.1: a transfer coding not understood is a 501."""
    query = gzip.compress(json.dumps({"query": "refunds"}).encode())
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(query), query)
    head = (
        b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
    )
    status, _, reply = parse(exchange(port, head + chunked))
    assert status == 501, reply
    assert json.loads(reply)["error"]["code"] == "not_implemented"


def test_two_host_headers_are_a_400_whichever_comes_first(port: int) -> None:
    """RFC 9112 3.2: more than one Host line is a 400. The check read the first (a proxy may
    route by the last): `localhost` then `attacker.example` passed."""
    for hosts in (("localhost", "attacker.example"), ("localhost", "localhost")):
        head = "".join(f"Host: {h}\r\n" for h in hosts)
        reply = exchange(port, f"GET /healthz HTTP/1.1\r\n{head}Connection: close\r\n\r\n".encode())
        status, _, body = parse(reply)
        assert status == 400, hosts
        assert json.loads(body)["error"]["code"] == "invalid_host"


def test_a_refused_cors_preflight_is_json(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    """Starlette refuses a preflight's method or headers with a text/plain 400."""
    settings = Settings(data_dir=tmp_path / "data", cors_origins=("http://app.example",))
    with serving(settings, minilm) as bound:
        for asked in (
            "Access-Control-Request-Method: PUT\r\n",
            "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: x-evil\r\n",
        ):
            extra = f"Origin: http://app.example\r\n{asked}"
            status, headers, body = parse(exchange(bound, request("OPTIONS", "/v1/chat", extra)))
            assert status == 400
            assert header(headers, "content-type") == ["application/json"]
            assert json.loads(body)["error"]["code"] == "cors_forbidden"
        extra = "Origin: http://app.example\r\nAccess-Control-Request-Method: POST\r\n"
        status, headers, _ = parse(exchange(bound, request("OPTIONS", "/v1/chat", extra)))
        assert status == 200
        assert header(headers, "access-control-allow-origin") == ["http://app.example"]
