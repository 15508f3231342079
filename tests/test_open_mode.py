"""Open mode (no key) only where no request can come from elsewhere (issue 29, High): behind a
proxy, or with a public address configured, a keyless server answers questions and nothing
else; keys are made over HTTP only with an admin key."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

UPLOAD = {"file": ("n.txt", b"Refunds are paid within 30 days of a request.")}
KEY = {"scopes": ["admin"], "name": "mine"}


def refused_for_writes(client: TestClient, headers: dict[str, str] | None = None) -> None:
    for method, path, kwargs in (
        ("POST", "/v1/documents", {"files": UPLOAD}),
        ("DELETE", "/v1/documents/doc_x", {}),
        ("GET", "/v1/documents", {}),
        ("POST", "/v1/search", {"json": {"query": "refunds"}}),
        ("POST", "/v1/index/optimize", {}),
    ):
        response = client.request(method, path, headers=headers, **kwargs)
        assert response.status_code == 401, (method, path, response.text)
        assert "stream-rag keys create" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "setting", [{"public_url": "https://docs.example.com"}, {"allowed_hosts": ("testserver",)}]
)
def test_a_public_address_setting_starts_read_only(
    tmp_path: Path,
    minilm: MiniLMEmbedder,
    setting: dict[str, object],
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = Settings(data_dir=tmp_path / "data").with_overrides(**setting)
    with caplog.at_level(logging.WARNING), TestClient(create_app(settings, embedder=minilm)) as c:
        assert any("OPEN MODE REFUSED AT START" in r.message for r in caplog.records)
        refused_for_writes(c)
        assert c.post("/v1/keys", json=KEY).status_code == 401
        # Answers still work, as a chat key sees them.
        assert c.post("/v1/answer", json={"question": "When are refunds paid?"}).status_code == 200
        assert c.get("/healthz").status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Forwarded-For": "203.0.113.9"},
        {"Forwarded": "for=203.0.113.9"},
        {"X-Real-IP": "203.0.113.9"},
        {"X-Forwarded-Proto": "https"},
        {"Host": "203.0.113.9"},
    ],
)
def test_a_relayed_request_ends_open_mode_for_good(
    tmp_path: Path, minilm: MiniLMEmbedder, headers: dict[str, str]
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with TestClient(create_app(settings, embedder=minilm)) as c:
        assert c.post("/v1/documents", files=UPLOAD).status_code == 201  # open: local client
        refused_for_writes(c, headers)
        # The proxy's next request may carry no sign of it: still refused.
        refused_for_writes(c)
        assert c.post("/v1/answer", json={"question": "When are refunds paid?"}).status_code == 200


def test_keys_are_made_over_http_with_an_admin_key_only(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with TestClient(create_app(settings, embedder=minilm)) as c:
        # Open mode: anyone could make an admin key and lock the owner out.
        refused = c.post("/v1/keys", json=KEY)
        assert refused.status_code == 401
        assert "stream-rag keys create" in refused.json()["error"]["message"]
        assert c.get("/v1/keys").status_code == 401
        assert KeyStore(settings.data_dir).list() == []
        assert c.post("/v1/documents", files=UPLOAD).status_code == 201  # still open
        _, secret = KeyStore(settings.data_dir).create(name="ops", scopes=["admin"])
        auth = {"Authorization": f"Bearer {secret}"}
        deadline = time.monotonic() + 30  # the server reads the key table every second
        while c.get("/v1/keys", headers=auth).status_code != 200:
            assert time.monotonic() < deadline, "the new key never took effect"
        assert c.post("/v1/keys", json=KEY, headers=auth).status_code == 201
