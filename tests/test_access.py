"""API keys, scopes and collection binding over HTTP (issue 11's findings, each reproduced)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.access.principals import Access, OpenModeError
from stream_rag.cli.commands import main
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .conftest import wait_indexed

ALPHA = b"Alpha plans can be refunded within 30 days of purchase by the account owner."
BETA = b"Beta secrets: the vault combination is changed every 14 days by the night guard."


def auth(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


@dataclass
class World:
    client: TestClient
    keys: dict[str, str]
    alpha: str
    beta: str

    def as_(self, who: str) -> dict[str, str]:
        return auth(self.keys[who])


@pytest.fixture
def world(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[World]:
    settings = Settings(data_dir=tmp_path / "data")
    store = KeyStore(settings.data_dir)
    keys = {
        "admin": store.create(name="admin", scopes=["admin"])[1],
        "write_a": store.create(name="w", scopes=["write"], collections=["alpha"])[1],
        "read_a": store.create(name="r", scopes=["read"], collections=["alpha"])[1],
        "chat_a": store.create(name="c", scopes=["chat"], collections=["alpha"])[1],
        "chat_a2": store.create(name="c2", scopes=["chat"], collections=["alpha"])[1],
        "read_ab": store.create(name="rab", scopes=["read"], collections=["alpha", "beta"])[1],
    }
    with TestClient(create_app(settings, embedder=minilm)) as client:
        ids = []
        for collection, data in (("alpha", ALPHA), ("beta", BETA)):
            response = client.post(
                "/v1/documents",
                files={"file": (f"{collection}.txt", data)},
                data={"collection": collection},
                headers=auth(keys["admin"]),
            )
            assert response.status_code == 201, response.text
            ids.append(response.json()["document"]["id"])
        client.headers.update(auth(keys["admin"]))
        for doc_id in ids:
            wait_indexed(client, doc_id)
        del client.headers["Authorization"]
        yield World(client, keys, *ids)


def test_without_a_key_every_api_route_is_401_once_keys_exist(world: World) -> None:
    # The finding: anyone who could reach the server could list, download and delete.
    for method, path in [
        ("GET", "/v1/documents"),
        ("GET", f"/v1/documents/{world.alpha}/content"),
        ("DELETE", f"/v1/documents/{world.alpha}"),
        ("POST", "/v1/search"),
        ("POST", "/v1/chat"),
        ("GET", "/v1/models"),
    ]:
        response = world.client.request(method, path, json={"query": "x", "question": "x"})
        assert response.status_code == 401, (method, path)
        assert response.json()["error"]["code"] == "unauthorized"
        assert response.headers["www-authenticate"] == "Bearer"
    bad = world.client.get("/v1/documents", headers=auth("sr_not_a_key"))
    assert bad.status_code == 401
    assert world.client.get("/healthz").json() == {"status": "ok"}  # no counts for strangers
    assert set(world.client.get("/readyz").json()) == {"status", "failed"}
    ready = world.client.get("/readyz", headers=world.as_("admin")).json()
    assert ready["checks"]["store"]["value"] == 2


def test_scopes(world: World) -> None:
    c = world.client
    upload = {"file": ("n.txt", b"New alpha text about refunds.")}
    assert c.post("/v1/documents", headers=world.as_("read_a"), files=upload).status_code == 403
    created = c.post(
        "/v1/documents", headers=world.as_("write_a"), data={"collection": "alpha"}, files=upload
    )
    assert created.status_code == 201
    assert created.json()["document"]["collection"] == "alpha"
    # A write key without read cannot list; a read key cannot delete.
    assert c.get("/v1/documents", headers=world.as_("write_a")).status_code == 403
    assert c.delete(f"/v1/documents/{world.alpha}", headers=world.as_("read_a")).status_code == 403
    forbidden = c.post("/v1/search", json={"query": "refund"}, headers=world.as_("chat_a"))
    assert forbidden.status_code == 403
    assert "read" in forbidden.json()["error"]["message"]
    assert c.get(f"/v1/documents/{world.alpha}", headers=world.as_("chat_a")).status_code == 403
    # Writing into a collection the key is not bound to.
    other = c.post(
        "/v1/documents", headers=world.as_("write_a"), data={"collection": "beta"}, files=upload
    )
    assert other.status_code == 403


def test_other_collections_answer_like_unknown_ids(world: World) -> None:
    c, read_a = world.client, world.as_("read_a")
    unknown = "doc_000000000000000000000000"
    for suffix in ("", "/content", "/versions/1", "/versions/1/chunks", "/versions/1/content"):
        hidden = c.get(f"/v1/documents/{world.beta}{suffix}", headers=read_a)
        missing = c.get(f"/v1/documents/{unknown}{suffix}", headers=read_a)
        assert hidden.status_code == missing.status_code == 404, suffix
        assert hidden.json() == json.loads(missing.text.replace(unknown, world.beta)), suffix
    deleted = c.delete(f"/v1/documents/{world.beta}", headers=world.as_("write_a"))
    assert deleted.status_code == 404
    version = c.post(
        f"/v1/documents/{world.beta}/versions",
        files={"file": ("b.txt", b"overwrite")},
        headers=world.as_("write_a"),
    )
    assert version.status_code == 404
    listing = c.get("/v1/documents", headers=read_a).json()["documents"]
    assert [d["id"] for d in listing] == [world.alpha]
    assert c.get("/v1/documents?collection=beta", headers=read_a).status_code == 403
    both = c.get("/v1/documents", headers=world.as_("read_ab")).json()["documents"]
    assert {d["id"] for d in both} == {world.alpha, world.beta}
    assert c.get(f"/v1/documents/{world.beta}", headers=world.as_("admin")).status_code == 200


def test_search_and_answers_stay_in_the_keys_collections(world: World) -> None:
    c, read_a = world.client, world.as_("read_a")
    # No collection named: the key's only collection, not the default one.
    found = c.post("/v1/search", json={"query": "vault combination refunded"}, headers=read_a)
    assert found.status_code == 200
    assert {b["doc_id"] for b in found.json()["blocks"]} == {world.alpha}
    named = c.post("/v1/search", json={"query": "vault", "collection": "beta"}, headers=read_a)
    assert named.status_code == 403
    assert world.beta not in named.text
    assert "vault" not in named.text.replace("'vault'", "")
    # A key bound to two collections must name one (no default among them).
    multi = c.post("/v1/search", json={"query": "vault"}, headers=world.as_("read_ab"))
    assert multi.status_code == 403
    beta = c.post(
        "/v1/search", json={"query": "vault", "collection": "beta"}, headers=world.as_("read_ab")
    )
    assert {b["doc_id"] for b in beta.json()["blocks"]} == {world.beta}
    answer = c.post("/v1/answer", json={"question": "vault combination?"}, headers=read_a)
    assert answer.status_code == 200
    assert world.beta not in answer.text
    assert "guard" not in answer.text


def test_safety_overrides_need_an_admin_key(world: World) -> None:
    # The finding: any caller could switch the safety checks off per request.
    overrides = (
        ("gate_threshold", 0.01),
        ("min_evidence", 0),
        ("check_conflicts", False),
        ("gate_semantic", False),
    )
    for field, value in overrides:
        body = {"question": "Which plans can be refunded?", field: value}
        for path in ("/v1/answer", "/v1/chat"):
            refused = world.client.post(path, json=body, headers=world.as_("read_a"))
            assert refused.status_code == 403, (path, field)
            assert field in refused.json()["error"]["message"]
        allowed = world.client.post(
            "/v1/answer", json={**body, "collection": "alpha"}, headers=world.as_("admin")
        )
        assert allowed.status_code == 200


def test_chat_key_downloads_only_what_its_answers_cited(world: World) -> None:
    c, chat = world.client, world.as_("chat_a")
    url = f"/v1/documents/{world.alpha}/versions/1/content"
    assert c.get(url, headers=chat).status_code == 404  # not cited yet
    answer = c.post("/v1/answer", json={"question": "Which plans can be refunded?"}, headers=chat)
    cited = {c["url"] for s in answer.json()["sentences"] for c in s["citations"]}
    assert url in cited
    download = c.get(url, headers=chat)
    assert download.status_code == 200
    assert download.content == ALPHA
    # Citations shown to another key do not count.
    assert c.get(url, headers=world.as_("chat_a2")).status_code == 404
    assert c.get(f"/v1/documents/{world.alpha}/versions/1/chunks", headers=chat).status_code == 403


def test_revoked_keys_stop_working(world: World, tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "data")
    key, secret = store.create(name="temp", scopes=["read"], collections=["alpha"])
    assert world.client.get("/v1/documents", headers=auth(secret)).status_code == 200
    store.revoke(key.id)
    deadline = time.monotonic() + 10
    while world.client.get("/v1/documents", headers=auth(secret)).status_code != 401:
        assert time.monotonic() < deadline, "a revoked key still works"


def test_open_mode_is_loopback_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    code = main(["--data-dir", str(data), "serve", "--host", "0.0.0.0", "--port", "8"])
    assert code == 1
    message = capsys.readouterr().err
    assert "stream-rag keys create" in message
    assert "STREAM_RAG_ALLOW_ANONYMOUS" in message
    with pytest.raises(OpenModeError):
        anyio.run(Access.open, Settings(data_dir=data, host="0.0.0.0"))
    anyio.run(Access.open, Settings(data_dir=data, host="0.0.0.0", allow_anonymous=True))
    anyio.run(Access.open, Settings(data_dir=data, host="::1"))


def test_keys_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    assert main([*data, "keys", "list"]) == 0
    assert "no active keys" in capsys.readouterr().out
    assert main([*data, "keys", "create", "--scope", "chat", "--collection", "docs", "--json"]) == 0
    created: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert created["key"].startswith("sr_")
    assert created["collections"] == ["docs"]
    assert main([*data, "keys", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [k["id"] for k in listed] == [created["id"]]
    assert created["key"] not in json.dumps(listed)
    stored = (tmp_path / "data" / "stream_rag.sqlite3").read_bytes()
    assert created["key"].encode() not in stored  # only the hash is stored
    assert main([*data, "keys", "revoke", created["id"]]) == 0
    assert main([*data, "keys", "revoke", created["id"]]) == 1
    bad = ["keys", "create", "--scope", "admin", "--collection", "docs"]
    assert main([*data, *bad]) == 1
    assert "admin" in capsys.readouterr().err
