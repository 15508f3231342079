"""Limits and browser defences (issue 11): body size while reading, JSON type, question and
conversation lengths, Origin and Host checks, rate limits, security headers."""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import httpx
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import STATIC_DIR, create_app
from stream_rag.model.fake import FakeConfig, create_fake_llm

from .helpers import HTTP_GUARD_S, running_server
from .test_upload_streaming import connect, offer_chunks, read_response

QUESTION = "Which plans can be refunded?"


def test_json_body_is_refused_while_it_arrives(tmp_path: Path) -> None:
    # The finding: a 500 MB JSON body to /v1/chat was accepted (and parsed on the loop).
    settings = Settings(data_dir=tmp_path / "data")
    with running_server(create_app(settings)) as base_url, connect(base_url) as sock:
        sock.sendall(
            b"POST /v1/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        piece = b'{"question": "' + b"x" * 65536
        sent, answered = offer_chunks(sock, piece)
        assert answered
        response = read_response(sock)
        assert response.startswith("HTTP/1.1 413"), response[:200]
        assert "body_too_large" in response
        assert sent < 16 * 1024 * 1024
    # A declared length over the limit is refused before any body byte is read.
    with running_server(create_app(settings)) as base_url, connect(base_url) as sock:
        sock.sendall(
            b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 524288000\r\n\r\n"
        )
        assert read_response(sock).startswith("HTTP/1.1 413")


def test_json_routes_take_only_json(client: TestClient) -> None:
    body = json.dumps({"query": "refunds"})
    for path in ("/v1/search", "/v1/chat", "/v1/answer", "/v1/chat/completions"):
        for media in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
            response = client.post(path, content=body, headers={"Content-Type": media})
            assert response.status_code == 415, (path, media)
            assert response.json()["error"]["code"] == "unsupported_media_type"
    ok = client.post(
        "/v1/search", content=body, headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert ok.status_code == 200
    deep = client.post(
        "/v1/search", content="[" * 60000, headers={"Content-Type": "application/json"}
    )
    assert deep.status_code == 400


def test_json_bodies_are_utf8_and_a_leading_bom_is_skipped(client: TestClient) -> None:
    # The finding: a body declared `charset=utf-16` was read as UTF-8 (a 400 about a byte
    # of the body), and a UTF-8 body with a byte order mark (as PowerShell's and some
    # Windows tools' writers send) was a 400 "must be JSON".
    body = json.dumps({"query": "refunds"})
    for charset in ("utf-16", "UTF-16LE", "iso-8859-1", '"utf-32"'):
        declared = f"application/json; charset={charset}"
        encoded = body.encode("utf-16" if "16" in charset else "latin-1")
        refused = client.post("/v1/search", content=encoded, headers={"Content-Type": declared})
        assert refused.status_code == 415, charset
        error = refused.json()["error"]
        assert error["code"] == "unsupported_media_type"
        assert "UTF-8" in error["message"]
    for declared in (
        "application/json",
        'application/json; charset="UTF-8"',
        "application/json; charset=US-ASCII",  # ASCII text is UTF-8
    ):
        bom = client.post(
            "/v1/search",
            content=b"\xef\xbb\xbf" + body.encode(),
            headers={"Content-Type": declared},
        )
        assert bom.status_code == 200, bom.text
        assert bom.json()["query"] == "refunds"
    # Only one mark is skipped: a second one is not JSON.
    twice = client.post(
        "/v1/search",
        content=b"\xef\xbb\xbf\xef\xbb\xbf" + body.encode(),
        headers={"Content-Type": "application/json"},
    )
    assert twice.status_code == 400


def test_question_limits_on_every_endpoint(client: TestClient) -> None:
    # The finding: /v1/chat/completions skipped the 4,000-character question limit.
    long = "refund " * 700
    messages = [{"role": "user", "content": long}]
    completions = client.post("/v1/chat/completions", json={"messages": messages})
    assert completions.status_code == 400
    assert "4000" in completions.json()["error"]["message"]
    for path in ("/v1/chat", "/v1/answer"):
        assert client.post(path, json={"question": long}).status_code == 400
    assert client.get("/v1/chat", params={"q": long}).status_code == 400
    assert client.post("/v1/search", json={"query": long}).status_code == 400
    turns = [{"role": "user", "content": "refund " * 500}] * 6
    total = client.post("/v1/chat/completions", json={"messages": turns})
    assert total.status_code == 400
    assert "in total" in total.json()["error"]["message"]


def test_cross_site_requests_are_refused(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    # The finding: a web page could plant or delete documents on a server on localhost.
    settings = Settings(data_dir=tmp_path / "data", cors_origins=("https://shop.example",))
    with TestClient(create_app(settings, embedder=minilm)) as client:
        evil = {"Origin": "https://evil.example"}
        upload = client.post("/v1/documents", files={"file": ("a.txt", b"planted")}, headers=evil)
        assert upload.status_code == 403
        assert upload.json()["error"]["code"] == "forbidden_origin"
        assert client.get("/v1/documents").json()["documents"] == []
        assert client.post("/v1/search", json={"query": "x"}, headers=evil).status_code == 403
        assert client.get("/v1/chat", params={"q": QUESTION}, headers=evil).status_code == 403
        sandboxed = {"Origin": "null"}  # sandboxed iframes and file:// pages
        assert client.post("/v1/search", json={"query": "x"}, headers=sandboxed).status_code == 403
        for origin in ("https://shop.example", "http://testserver"):  # listed, same origin
            response = client.post("/v1/search", json={"query": "x"}, headers={"Origin": origin})
            assert response.status_code == 200, origin
        assert client.get("/v1/documents", headers=evil).status_code == 200  # unreadable to it
        preflight = client.options(
            "/v1/chat",
            headers={
                "Origin": "https://shop.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200


def test_host_header_is_checked(tmp_path: Path) -> None:
    # DNS rebinding: attacker.example resolving to 127.0.0.1 must not reach the API.
    with TestClient(create_app(Settings(data_dir=tmp_path / "a"))) as client:
        for host, status in (
            ("attacker.example", 400),
            ("attacker.example:8000", 400),
            ("localhost:8000", 200),
            ("127.0.0.1:8000", 200),
            ("[::1]:8000", 200),
        ):
            response = client.get("/v1/documents", headers={"Host": host})
            assert response.status_code == status, host
        assert (
            client.get("/v1/documents", headers={"Host": "a.example"}).json()["error"]["code"]
            == "invalid_host"
        )
    listed = Settings(data_dir=tmp_path / "b", allowed_hosts=("api.example.com",))
    with TestClient(create_app(listed)) as client:
        assert client.get("/openapi.json", headers={"Host": "api.example.com"}).status_code == 200
        refused = client.get("/openapi.json", headers={"Host": "localhost"})
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == "invalid_host"
        # Probes ask by IP or an internal name (Docker's healthcheck, a load balancer):
        # health answers for any Host once an allowlist is set.
        for host in ("127.0.0.1:8000", "10.0.3.7", "app", "localhost"):
            assert client.get("/healthz", headers={"Host": host}).status_code == 200, host
            assert client.get("/readyz", headers={"Host": host}).status_code in (200, 503), host


def test_rate_limit_per_key_and_per_address(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", rate_limit_rpm=600)
    store = KeyStore(settings.data_dir)
    _, slow = store.create(name="slow", scopes=["read"], rpm=2)
    _, other = store.create(name="other", scopes=["read"])
    with TestClient(create_app(settings)) as client:
        statuses = [
            client.get("/v1/documents", headers={"Authorization": f"Bearer {slow}"}).status_code
            for _ in range(3)
        ]
        assert statuses == [200, 200, 429]
        limited = client.get("/v1/documents", headers={"Authorization": f"Bearer {slow}"})
        assert limited.json()["error"]["code"] == "rate_limited"
        assert int(limited.headers["Retry-After"]) >= 1
        # Another key has its own budget.
        assert client.get("/v1/documents", headers={"Authorization": f"Bearer {other}"}).is_success

    # Unknown keys cost a table lookup each: an address gets `rpm` of them, then 429.
    guessing = Settings(data_dir=tmp_path / "guess", rate_limit_rpm=3)
    _, valid = KeyStore(guessing.data_dir).create(name="valid", scopes=["read"])
    with TestClient(create_app(guessing)) as client:
        wrong = [
            client.get("/v1/documents", headers={"Authorization": f"Bearer sr_guess{i}"})
            for i in range(4)
        ]
        assert [r.status_code for r in wrong] == [401, 401, 401, 429]
        assert client.get("/v1/documents", headers={"Authorization": f"Bearer {valid}"}).is_success
    # Open on a network (deliberately): the budget is per client address.
    anonymous = Settings(
        data_dir=tmp_path / "anon", host="0.0.0.0", allow_anonymous=True, rate_limit_rpm=2
    )
    with TestClient(create_app(anonymous)) as client:
        assert [client.get("/v1/documents").status_code for _ in range(3)] == [200, 200, 429]
    # Open on loopback: local callers are not limited (tests and benchmarks run there).
    with TestClient(create_app(Settings(data_dir=tmp_path / "lo", rate_limit_rpm=1))) as client:
        assert {client.get("/v1/documents").status_code for _ in range(3)} == {200}


def test_concurrent_answers_per_key(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    with running_server(create_fake_llm(FakeConfig(stall_after=2, stall_s=30))) as llm:
        settings = Settings(data_dir=tmp_path / "data", llm_base_url=f"{llm}/v1", llm_stall_s=60)
        store = KeyStore(settings.data_dir)
        _, admin = store.create(name="admin", scopes=["admin"])
        _, chat = store.create(name="widget", scopes=["chat"], max_streams=1)
        with running_server(create_app(settings, embedder=minilm)) as base_url:
            admin_h, chat_h = (
                {"Authorization": f"Bearer {admin}"},
                {"Authorization": f"Bearer {chat}"},
            )
            text = b"Annual plans can be refunded within 30 days of purchase."
            doc = httpx.post(
                f"{base_url}/v1/documents",
                files={"file": ("a.txt", text)},
                headers=admin_h,
                timeout=HTTP_GUARD_S,
            ).json()["document"]["id"]
            deadline = time.monotonic() + 60
            while (
                httpx.get(
                    f"{base_url}/v1/documents/{doc}", headers=admin_h, timeout=HTTP_GUARD_S
                ).json()["versions"][0]["status"]
                != "ready"
            ):
                assert time.monotonic() < deadline
                time.sleep(0.02)
            body = {"question": QUESTION}
            with httpx.stream(
                "POST", f"{base_url}/v1/chat", json=body, headers=chat_h, timeout=60
            ) as first:
                head: list[str] = []
                for line in first.iter_lines():  # up to the end of the first event
                    if not line and head:
                        break
                    head.append(line)
                assert "event: sources" in head, head
                stream_id = next(x for x in head if x.startswith("id:"))[3:].strip()
                stream_id = stream_id.rpartition(".")[0]
                second = httpx.post(
                    f"{base_url}/v1/answer", json=body, headers=chat_h, timeout=HTTP_GUARD_S
                )
                assert second.status_code == 429
                assert second.headers["Retry-After"] == "1"
                # The limit is per key: an admin may still ask.
                assert httpx.get(
                    f"{base_url}/v1/models", headers=admin_h, timeout=HTTP_GUARD_S
                ).is_success
            # Closed: the answer goes on for a resume (STREAM_RAG_RESUME_GRACE_S), and keeps
            # its slot (the model is pausing 30 s). The probe is a question over the length
            # limit, so it answers 400 without running a model.
            probe = {"q": "x" * 5000}
            held = httpx.get(
                f"{base_url}/v1/chat", params=probe, headers=chat_h, timeout=HTTP_GUARD_S
            )
            assert held.status_code == 429, held.text
            # Stopped by its client (the widget's Stop): the slot frees.
            stopped = httpx.delete(
                f"{base_url}/v1/streams/{stream_id}", headers=chat_h, timeout=HTTP_GUARD_S
            )
            assert stopped.status_code == 204, stopped.text
            deadline = time.monotonic() + 30
            while (
                httpx.get(
                    f"{base_url}/v1/chat", params=probe, headers=chat_h, timeout=HTTP_GUARD_S
                ).status_code
                == 429
            ):
                assert time.monotonic() < deadline, "the closed stream still counts"
                time.sleep(0.05)


class _ScriptFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inline: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self.inline.append("inline <script>")
        if tag == "style" or "style" in names:
            self.inline.append(f"inline style on <{tag}>")
        self.inline += [f"{n} handler on <{tag}>" for n in names if n.startswith("on")]


def test_security_headers_and_a_page_that_needs_no_inline_script(tmp_path: Path) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path / "a"))) as client:
        page = client.get("/static/index.html")
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        assert "frame-ancestors 'self'" in csp
        assert page.headers["x-frame-options"] == "SAMEORIGIN"
        assert page.headers["x-content-type-options"] == "nosniff"
        assert client.get("/healthz").headers["x-frame-options"] == "SAMEORIGIN"
    embeddable = Settings(data_dir=tmp_path / "b", frame_ancestors=("https://shop.example",))
    with TestClient(create_app(embeddable)) as client:
        page = client.get("/static/index.html")
        assert (
            "frame-ancestors 'self' https://shop.example" in page.headers["content-security-policy"]
        )
        assert "x-frame-options" not in page.headers
    for html in STATIC_DIR.glob("*.html"):
        finder = _ScriptFinder()
        finder.feed(html.read_text())
        # The page's one inline script (its redirect to the prefix's slash) is allowed by its
        # hash, which tests/test_browser_widget.py checks; nothing else may be inline.
        allowed = ["inline <script>"] if html.name == "index.html" else []
        assert finder.inline == allowed, html.name
        assert not re.search(r"javascript:", html.read_text()), html.name
