"""Access state shared through the store's database: two replicas (two apps, one PostgreSQL)
share a key's rate limit, see a revocation, and honour each other's citation grants; on SQLite
the grants outlive a restart."""

from __future__ import annotations

import time
from pathlib import Path

from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.sse import EventStreamParser

from .conftest import wait_indexed

POLICY = (
    b"The office gym opens at 6 am and closes at 10 pm on weekdays. "
    b"Guests need a badge from reception and a signed waiver form."
)


def cited_versions(text: str) -> set[tuple[str, int]]:
    return {
        (c["doc_id"], c["version"])
        for event in EventStreamParser().feed(text)
        if event.event == "sentence"
        for c in event.json()["citations"]
    }


def upload_and_ask(client: TestClient, admin: dict[str, str], chat: dict[str, str]) -> str:
    """Store the policy, ask about it with the chat key; the document's id."""
    made = client.post("/v1/documents", files={"file": ("gym.txt", POLICY)}, headers=admin)
    doc_id: str = made.json()["document"]["id"]
    client.headers.update(admin)
    wait_indexed(client, doc_id)
    del client.headers["Authorization"]
    stream = client.post("/v1/chat", json={"question": "When does the gym open?"}, headers=chat)
    assert (doc_id, 1) in cited_versions(stream.text), stream.text
    return doc_id


def test_two_replicas_share_limits_revocations_and_grants(
    tmp_path: Path, postgres_url: str, minilm: MiniLMEmbedder
) -> None:
    keys = KeyStore(tmp_path / "keys", postgres_url)
    admin = {"Authorization": "Bearer " + keys.create(name="a", scopes=["admin"])[1]}
    chat = {"Authorization": "Bearer " + keys.create(name="w", scopes=["chat"])[1]}
    limited, secret = keys.create(name="r", scopes=["read"], rpm=4)
    reader = {"Authorization": f"Bearer {secret}"}
    keys.close()

    def replica(name: str) -> TestClient:
        settings = Settings(data_dir=tmp_path / name, database_url=postgres_url)
        return TestClient(create_app(settings, embedder=minilm))

    with replica("a") as a, replica("b") as b:
        # Asked on A, downloaded on B (whose cache never saw the bytes).
        doc_id = upload_and_ask(a, admin, chat)
        download = b.get(f"/v1/documents/{doc_id}/versions/1/content", headers=chat)
        assert download.status_code == 200, download.text
        assert download.content == POLICY
        # Four requests a minute for the read key, whichever replica takes them.
        codes = [(a, b)[i % 2].get("/v1/documents", headers=reader).status_code for i in range(5)]
        assert codes == [200, 200, 200, 200, 429]
        # Revoked on A: refused on B once it reads the key table again (every second).
        assert a.delete(f"/v1/keys/{limited.id}", headers=admin).status_code == 200
        deadline = time.monotonic() + 30
        while b.get("/v1/documents", headers=reader).status_code != 401:
            assert time.monotonic() < deadline, "B still accepts the revoked key"
            time.sleep(0.05)


def test_grants_outlive_a_restart(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    keys = KeyStore(tmp_path / "data")
    admin = {"Authorization": "Bearer " + keys.create(name="a", scopes=["admin"])[1]}
    chat = {"Authorization": "Bearer " + keys.create(name="w", scopes=["chat"])[1]}
    keys.close()
    settings = Settings(data_dir=tmp_path / "data")
    with TestClient(create_app(settings, embedder=minilm)) as client:
        doc_id = upload_and_ask(client, admin, chat)
    with TestClient(create_app(settings, embedder=minilm)) as client:
        download = client.get(f"/v1/documents/{doc_id}/versions/1/content", headers=chat)
        assert download.status_code == 200, download.text
        assert download.content == POLICY


def test_two_replicas_share_a_visitors_rating_limit(
    tmp_path: Path, postgres_url: str, minilm: MiniLMEmbedder
) -> None:
    keys = KeyStore(tmp_path / "keys", postgres_url)
    admin = {"Authorization": "Bearer " + keys.create(name="a", scopes=["admin"])[1]}
    chat = {"Authorization": "Bearer " + keys.create(name="w", scopes=["chat"])[1]}
    keys.close()

    def replica(name: str) -> TestClient:
        settings = Settings(data_dir=tmp_path / name, database_url=postgres_url, feedback_rpm=3)
        return TestClient(create_app(settings, embedder=minilm))

    with replica("a") as a, replica("b") as b:
        upload_and_ask(a, admin, chat)
        asked = a.post("/v1/chat", json={"question": "When does the gym open?"}, headers=chat)
        answer_id = (EventStreamParser().feed(asked.text)[0].id or "").rpartition(".")[0]
        rate = {"answer_id": answer_id, "rating": "up"}
        # Three ratings a minute for this visitor, whichever replica takes them.
        codes = [(a, b)[i % 2].post("/v1/feedback", json=rate, headers=chat) for i in range(4)]
        assert [c.status_code for c in codes] == [200, 200, 200, 429]
