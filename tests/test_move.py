"""`stream-rag migrate --to postgresql://...`: an embedded deployment (SQLite + Qdrant Edge)
moves into PostgreSQL and a Qdrant server in one command; ids, versions, hashes, keys and
grants stay, every earlier citation URL downloads the same bytes, doctor reports nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.cli import main
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .conftest import wait_indexed
from .test_replicas import qdrant  # noqa: F401  (the Qdrant test server's fixture)
from .test_shared_access import cited_versions

FILES = {
    "gym.txt": b"The office gym opens at 6 am and closes at 10 pm on weekdays.",
    "parking.md": b"# Parking\n\nVisitor parking is on level minus two of the north garage.",
}


def test_an_embedded_deployment_moves_in_one_command(
    tmp_path: Path,
    postgres_url: str,
    qdrant: str,  # noqa: F811
    minilm: MiniLMEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "data"
    keys = KeyStore(data)
    admin = {"Authorization": "Bearer " + keys.create(name="a", scopes=["admin"])[1]}
    chat = {"Authorization": "Bearer " + keys.create(name="w", scopes=["chat"])[1]}
    keys.close()
    contents: dict[str, bytes] = {}  # citation URL -> bytes
    with TestClient(create_app(Settings(data_dir=data), embedder=minilm)) as client:
        client.headers.update(admin)
        ids = {}
        for name, body in FILES.items():
            doc = client.post("/v1/documents", files={"file": (name, body)}).json()["document"]
            wait_indexed(client, doc["id"])
            contents[doc["versions"][0]["url"]] = body
            ids[name] = doc["id"]
        newer = FILES["gym.txt"].replace(b"6 am", b"7 am")
        gym = ids["gym.txt"]
        made = client.post(f"/v1/documents/{gym}/versions", files={"file": ("g.txt", newer)})
        wait_indexed(client, gym)
        contents[made.json()["version"]["url"]] = newer
        before = client.get("/v1/documents").json()
        del client.headers["Authorization"]
        asked = client.post("/v1/chat", json={"question": "When does the gym open?"}, headers=chat)
        cited = cited_versions(asked.text)
        assert cited, asked.text
    monkeypatch.setenv("STREAM_RAG_QDRANT_URL", qdrant)
    assert main(["--data-dir", str(data), "migrate", "--to", postgres_url]) == 0
    out = capsys.readouterr().out
    assert "moved documents: 2 rows" in out
    assert "moved versions: 3 rows" in out
    # Moving again into the now full database is refused, and changes nothing.
    assert main(["--data-dir", str(data), "migrate", "--to", postgres_url]) == 1
    assert "already has documents" in capsys.readouterr().err
    moved = Settings(data_dir=tmp_path / "replica", database_url=postgres_url, qdrant_url=qdrant)
    with TestClient(create_app(moved, embedder=minilm)) as client:
        assert client.get("/v1/documents", headers=admin).json() == before
        for url, body in contents.items():
            assert client.get(url, headers=admin).content == body, url
        for doc_id, version in cited:  # the chat key's grants moved too
            got = client.get(f"/v1/documents/{doc_id}/versions/{version}/content", headers=chat)
            assert got.status_code == 200
        found = client.post("/v1/search", json={"query": "visitor parking"}, headers=admin)
        assert found.json()["blocks"][0]["filename"] == "parking.md"
