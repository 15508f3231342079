"""What browsers need: CORS for listed origins, EventSource ids and reconnects, download
caching that revalidates, absolute URLs behind STREAM_RAG_PUBLIC_URL."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.errors import InvalidFieldError
from stream_rag.http.app import create_app
from stream_rag.model.fake import create_fake_llm
from stream_rag.model.llm import OpenAIChatModel

from .conftest import wait_indexed
from .helpers import running_server

GOOD, BAD = "http://good.example:5173", "http://evil.example"
POLICY = (
    b"Refunds for annual plans are possible within 30 days. Refunds for monthly plans are not "
    b"possible. Refunds for team plans cover unused seats within 30 days."
)


def sse_events(text: str) -> list[dict[str, Any]]:
    """Each event of an SSE body as {"event", "id", "data"}; comments skipped."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            if name in ("event", "id", "data"):
                fields[name] = value.strip()
        if "data" in fields:
            fields["data"] = json.loads(fields["data"])
            out.append(fields)
    return out


def add(client: TestClient, name: str, data: bytes) -> str:
    response = client.post("/v1/documents", files={"file": (name, data)})
    assert response.status_code == 201, response.text
    doc_id: str = response.json()["document"]["id"]
    wait_indexed(client, doc_id)
    return doc_id


# -- CORS ---------------------------------------------------------------------------------------


def preflight(client: TestClient, origin: str) -> Any:
    return client.options(
        "/v1/chat",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, authorization",
        },
    )


def cors_headers(response: Any) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.lower().startswith("access-control")}


def test_listed_origin_passes_the_preflight_for_a_json_post_with_a_key(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "d", cors_origins=(GOOD,))
    with TestClient(create_app(settings, embedder=minilm)) as client:
        response = preflight(client, GOOD)
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == GOOD
        allowed = response.headers["access-control-allow-headers"].lower()
        assert "authorization" in allowed
        assert "content-type" in allowed
        assert "POST" in response.headers["access-control-allow-methods"]
        simple = client.get("/healthz", headers={"Origin": GOOD})
        assert simple.headers["access-control-allow-origin"] == GOOD


def test_other_origins_get_no_cors_headers(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    settings = Settings(data_dir=tmp_path / "d", cors_origins=(GOOD,))
    with TestClient(create_app(settings, embedder=minilm)) as client:
        response = preflight(client, BAD)
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "cors_forbidden"
        assert cors_headers(response) == {}
        assert cors_headers(client.get("/healthz", headers={"Origin": BAD})) == {}


def test_no_origins_configured_means_same_origin_only(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path / "d"), embedder=minilm)) as client:
        assert cors_headers(preflight(client, GOOD)) == {}
        assert cors_headers(client.get("/healthz", headers={"Origin": GOOD})) == {}


def test_a_preflight_with_no_origins_configured_says_which_setting(
    tmp_path: Path, minilm: MiniLMEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    # It was a 405 with no hint in the log: the operator could not tell why the widget failed.
    with TestClient(create_app(Settings(data_dir=tmp_path / "d"), embedder=minilm)) as client:
        with caplog.at_level(logging.WARNING, logger="stream_rag"):
            refused = [preflight(client, GOOD) for _ in range(2)]
        for response in refused:
            assert response.status_code == 403
            assert response.json()["error"]["code"] == "cors_forbidden"
            assert "STREAM_RAG_CORS_ORIGINS" in response.json()["error"]["message"]
            assert cors_headers(response) == {}
        logged = [r.getMessage() for r in caplog.records if "CORS" in r.getMessage()]
        assert len(logged) == 1, logged  # once per origin, not once per request
        assert GOOD in logged[0]
        assert "STREAM_RAG_CORS_ORIGINS" in logged[0]
        # An OPTIONS that is not a preflight is not a CORS matter.
        assert client.options("/v1/chat").status_code != 403


def test_cors_origins_come_comma_separated_from_the_environment() -> None:
    environ = {"STREAM_RAG_CORS_ORIGINS": f" {GOOD}/ , https://b.example ,"}
    settings = Settings.from_env(environ, env_file=None)
    assert settings.cors_origins == (f"{GOOD}/", "https://b.example")
    assert Settings.from_env({}, env_file=None).cors_origins == ()
    with pytest.raises(InvalidFieldError, match="CORS_ORIGINS"):
        Settings.from_env({"STREAM_RAG_CORS_ORIGINS": "good.example/path"}, env_file=None)
    with pytest.raises(InvalidFieldError, match="PUBLIC_URL"):
        Settings.from_env({"STREAM_RAG_PUBLIC_URL": "rag.example"}, env_file=None)


# -- EventSource --------------------------------------------------------------------------------


def test_events_carry_ids_and_a_reconnect_after_the_answer_is_not_asked_again(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    fake = create_fake_llm()
    with running_server(fake) as llm_url:
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        app = create_app(Settings(data_dir=tmp_path / "d"), embedder=minilm, model=model)
        with TestClient(app) as client:
            add(client, "policy.md", POLICY)
            body = client.get("/v1/chat", params={"q": "Refunds for annual plans?"}).text
            events = sse_events(body)
            assert [e["event"] for e in events][-1] == "done"
            ids = [e["id"] for e in events]
            assert len(set(ids)) == len(ids) == len(events)
            answer = {i.partition(".")[0] for i in ids}
            assert len(answer) == 1
            assert fake.state.stats.requests == 1
            again = client.get(
                "/v1/chat",
                params={"q": "Refunds for annual plans?"},
                headers={"Last-Event-ID": ids[-1]},
            )
            assert again.status_code == 204
            assert again.content == b""
            assert fake.state.stats.requests == 1
            # A fresh EventSource (no Last-Event-ID) is a new question and gets a new answer id.
            fresh = sse_events(client.get("/v1/chat", params={"q": "Refunds?"}).text)
            assert {e["id"].partition(".")[0] for e in fresh}.isdisjoint(answer)


# -- caching and public URLs -------------------------------------------------------------------


def test_latest_content_revalidates_and_versions_are_immutable(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path / "d"), embedder=minilm)) as client:
        doc_id = add(client, "a.txt", b"version one")
        first = client.get(f"/v1/documents/{doc_id}/content")
        assert first.headers["cache-control"] == "private, no-cache"
        etag = first.headers["etag"]
        cached = client.get(f"/v1/documents/{doc_id}/content", headers={"If-None-Match": etag})
        assert cached.status_code == 304
        assert cached.content == b""
        assert cached.headers["etag"] == etag
        response = client.post(
            f"/v1/documents/{doc_id}/versions", files={"file": ("a.txt", b"version two")}
        )
        assert response.status_code == 201
        fresh = client.get(f"/v1/documents/{doc_id}/content", headers={"If-None-Match": etag})
        assert fresh.status_code == 200
        assert fresh.content == b"version two"
        old = client.get(f"/v1/documents/{doc_id}/versions/1/content")
        assert old.content == b"version one"
        assert "immutable" in old.headers["cache-control"]
        assert old.headers["etag"] == etag
        again = client.get(
            f"/v1/documents/{doc_id}/versions/1/content", headers={"If-None-Match": etag}
        )
        assert again.status_code == 304


def test_public_url_makes_citation_and_download_urls_absolute(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    base = "https://rag.example/api"
    settings = Settings(data_dir=tmp_path / "d", public_url=base + "/")
    # A public address ends open mode (docs/decisions/open-mode-read-only.md): a key.
    _, admin = KeyStore(settings.data_dir).create(name="ops", scopes=["admin"])
    with TestClient(create_app(settings, embedder=minilm)) as client:
        client.headers["Authorization"] = f"Bearer {admin}"
        doc_id = add(client, "policy.md", POLICY)
        document = client.get(f"/v1/documents/{doc_id}").json()
        assert document["url"] == f"{base}/v1/documents/{doc_id}/content"
        assert document["versions"][0]["url"] == f"{base}/v1/documents/{doc_id}/versions/1/content"
        events = sse_events(client.post("/v1/chat", json={"question": "Refunds?"}).text)
        sentences = [e for e in events if e["event"] == "sentence"]
        assert sentences
        for event in [*sentences, next(e for e in events if e["event"] == "sources")]:
            refs = event["data"].get("citations") or event["data"]["blocks"]
            assert all(r["url"].startswith(f"{base}/v1/documents/{doc_id}/") for r in refs)
    with TestClient(create_app(Settings(data_dir=tmp_path / "e"), embedder=minilm)) as client:
        doc_id = add(client, "policy.md", POLICY)
        assert client.get(f"/v1/documents/{doc_id}").json()["url"].startswith("/v1/")
