"""Methods over real HTTP, through serve's protocol (httptools) and through h11: a method the
server does not know is a 501 with a JSON body, a known one a route does not take a 405 with
Allow, `OPTIONS *` a 200 with the server's methods; one Host header, of one host."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .helpers import running_server
from .test_http_clients import exchange, header, parse, request, serving
from .test_keys import OPS, write_toml


@pytest.fixture(scope="module", params=["httptools", "h11"])
def port(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    minilm: MiniLMEmbedder,
) -> Iterator[int]:
    root = Path(tmp_path_factory.mktemp("methods"))
    # With keys: the method is judged before the key, whoever sends it.
    settings = Settings(data_dir=root / "data", keys_file=write_toml(root / "keys.toml"))
    if request.param == "httptools":
        with serving(settings, minilm) as bound:
            yield bound
    else:
        with running_server(create_app(settings, embedder=minilm), http="h11") as url:
            yield int(url.rsplit(":", 1)[1])


@pytest.mark.parametrize("method", ["BREW", "PROPFIND", "get"])
@pytest.mark.parametrize("path", ["/v1/chat", "/no/such/route", "*"])
def test_a_method_the_server_does_not_know_is_501(port: int, method: str, path: str) -> None:
    status, headers, body = parse(exchange(port, request(method, path)))
    assert status == 501, body
    assert header(headers, "content-type") == ["application/json"]
    assert json.loads(body)["error"]["code"] == "not_implemented"
    assert header(headers, "allow") == ["GET, HEAD, POST, DELETE, OPTIONS"]


def test_a_known_method_a_route_does_not_take_is_405_with_allow(port: int) -> None:
    extra = f"Authorization: Bearer {OPS}\r\nContent-Length: 0\r\n"
    status, headers, body = parse(exchange(port, request("PUT", "/v1/chat", extra)))
    assert status == 405
    assert header(headers, "allow") == ["GET, POST"]
    assert json.loads(body)["error"]["code"] == "method_not_allowed"


def test_options_asterisk_lists_the_servers_methods(port: int) -> None:
    """RFC 9110 9.3.7: OPTIONS * asks about the server in general (it was a 404, or a 401
    with keys); no key is needed to learn the methods."""
    status, headers, body = parse(exchange(port, request("OPTIONS", "*")))
    assert status == 200
    assert header(headers, "allow") == ["GET, HEAD, POST, DELETE, OPTIONS"]
    assert header(headers, "x-content-type-options") == ["nosniff"]
    assert body == b""


def test_one_host_header_of_one_host(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    """Two Host lines, or two hosts a proxy joined into one line, are a 400 that says so (the
    joined pair was 'not served here'); one Host is served. Through serve's protocol: h11
    refuses two lines itself, before the app."""
    settings = Settings(data_dir=tmp_path / "data", allowed_hosts=("a.example",))
    with serving(settings, minilm) as bound:
        for version, hosts in (
            ("1.1", "Host: a.example\r\nHost: a.example\r\n"),
            ("1.0", "Host: a.example\r\nHost: a.example\r\n"),
            ("1.1", "Host: a.example, a.example\r\n"),
            ("1.1", "Host: a.example, b.example\r\n"),
        ):
            head = f"GET /healthz HTTP/{version}\r\n{hosts}Connection: close\r\n\r\n"
            status, _, body = parse(exchange(bound, head.encode()))
            assert status == 400, hosts
            error = json.loads(body)["error"]
            assert error["code"] == "invalid_host"
            assert error["message"] == "a request names one host, in one Host header"
        head = "GET /healthz HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n"
        assert parse(exchange(bound, head.encode()))[0] == 200
