"""Ingest a stranger cannot monopolise (issue 29): extraction slots taken in turn per tenant,
uploads whose client left are not stored, quotas per key and per collection (507), and a
chunks-per-KB ceiling for small files that unfold into thousands of chunks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.errors import ClientGoneError
from stream_rag.http.app import create_app
from stream_rag.index.jobs import TenantTurns
from stream_rag.ingest.extract_pool import ExtractionPool, Limits
from stream_rag.ingest.fairness import FairSlots
from stream_rag.store.documents import DocumentStore

from .conftest import store_snapshot
from .hostile import heavy_pdf, wordy_pdf


@pytest.mark.anyio
async def test_one_tenants_42_uploads_do_not_starve_anothers_one() -> None:
    """Two slots; tenant A queues 42 extractions, then B one: B's turn comes after at most
    two of A's finish (the arrival order, anyio's, served all 42 first)."""
    slots = FairSlots(2)
    order: list[str] = []
    release = {name: anyio.Event() for name in [f"a{i}" for i in range(42)] + ["b"]}

    async def upload(tenant: str, name: str) -> None:
        async with slots.slot(tenant):
            order.append(name)
            await release[name].wait()

    async with anyio.create_task_group() as group:
        for i in range(42):
            group.start_soon(upload, "key-a/docs", f"a{i}")
        while len(order) < 2 or slots.waiting < 40:
            await anyio.lowlevel.checkpoint()  # let every upload reach the queue (no time passes)
        group.start_soon(upload, "key-b/docs", "b")
        while slots.waiting < 41:
            await anyio.lowlevel.checkpoint()
        done = 0
        while "b" not in order:
            release[order[done]].set()
            done += 1
            while len(order) < min(done + 2, 43):
                await anyio.lowlevel.checkpoint()
        assert done <= 2, order
        for event in release.values():
            event.set()
    assert sorted(order) == sorted(release)


def test_indexing_takes_turns_per_collection() -> None:
    """42 versions of one collection queued, then one of another: its first batch is the
    second turn, not the 43rd (versions took turns one by one)."""
    turns = TenantTurns()
    for i in range(42):
        turns.push("a", (f"doc_a{i}", 1))
    turns.push("b", ("doc_b", 1))
    order = []
    while turns:
        tenant, turn = turns.pop()
        order.append(turn)
        if turn == ("doc_a0", 1) and len(order) == 1:
            turns.push(tenant, turn)  # more batches to go: back in its collection's line
    assert order[:3] == [("doc_a0", 1), ("doc_b", 1), ("doc_a1", 1)]
    assert len(order) == 44


@pytest.mark.anyio
async def test_a_cancelled_wait_gives_its_turn_on() -> None:
    slots = FairSlots(1)
    got: list[str] = []
    held = anyio.Event()

    async def hold() -> None:
        async with slots.slot("a"):
            await held.wait()

    async def take(name: str) -> None:
        async with slots.slot(name):
            got.append(name)

    async with anyio.create_task_group() as group:
        group.start_soon(hold)
        while slots.busy < 1:
            await anyio.lowlevel.checkpoint()
        with anyio.CancelScope() as leaving:
            leaving.cancel()
            await take("gone")  # cancelled while it waits: never granted
        group.start_soon(take, "b")
        while slots.waiting < 1:
            await anyio.lowlevel.checkpoint()
        held.set()
    assert got == ["b"]
    assert (slots.busy, slots.waiting) == (0, 0)


def test_an_upload_whose_client_left_is_not_stored(tmp_path: Path) -> None:
    """The client leaves while its heavy PDF is extracted: nothing is stored or queued, and
    the worker that read it is not left running on (pool)."""
    pool = ExtractionPool(Limits(), workers=1)
    store = DocumentStore(tmp_path / "data", extractor=pool)
    try:
        before = store_snapshot(tmp_path / "data")
        stager = store.blobs.stager(10_000_000)
        stager.write(heavy_pdf())
        staged = stager.finish()
        asked = []

        def wanted() -> bool:
            asked.append(True)
            return len(asked) == 1  # there when the upload began, gone right after

        with pytest.raises(ClientGoneError):
            store.add(staged, filename="heavy.pdf", wanted=wanted)
        staged.path.unlink()  # the request's own (`UploadForm.discard`)
        assert store_snapshot(tmp_path / "data") == before
        assert store.pending() == []
    finally:
        store.close()


@pytest.fixture
def deployment(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[object]:
    clients: list[TestClient] = []

    def build(**overrides: object) -> tuple[TestClient, dict[str, str]]:
        settings = Settings(data_dir=tmp_path / "data", **overrides)  # type: ignore[arg-type]
        store = KeyStore(settings.data_dir)
        keys = {
            name: "Bearer " + store.create(name=name, scopes=scopes)[1]
            for name, scopes in (("admin", ["admin"]), ("w1", ["write"]), ("w2", ["write"]))
        }
        client = TestClient(create_app(settings, embedder=minilm))
        client.__enter__()
        clients.append(client)
        return client, keys

    yield build
    for client in clients:
        client.__exit__(None, None, None)


def upload(client: TestClient, key: str, name: str, data: bytes, **form: str) -> object:
    return client.post(
        "/v1/documents", files={"file": (name, data)}, data=form, headers={"Authorization": key}
    )


def test_quotas_per_key_and_per_collection(deployment: object) -> None:
    client, keys = deployment(key_max_documents=2, collection_max_mb=0.01)  # type: ignore[operator]
    for i in range(2):
        made = upload(client, keys["w1"], f"n{i}.txt", f"Note {i} about refunds.".encode())
        assert made.status_code == 201, made.text  # type: ignore[attr-defined]
    third = upload(client, keys["w1"], "n2.txt", b"Note 2 about refunds.")
    assert third.status_code == 507  # type: ignore[attr-defined]
    error = third.json()["error"]  # type: ignore[attr-defined]
    assert error["code"] == "quota_exceeded"
    assert "STREAM_RAG_KEY_MAX_DOCUMENTS" in error["message"]
    # Another key, and an admin, are not bound by w1's quota; the collection's 10 KB binds all.
    assert upload(client, keys["w2"], "m.txt", b"Other note.").status_code == 201  # type: ignore[attr-defined]
    half = b"Refunds. " * 650  # 5.7 KB
    assert upload(client, keys["admin"], "a.txt", half).status_code == 201  # type: ignore[attr-defined]
    big = upload(client, keys["admin"], "b.txt", half + b"More.")
    assert big.status_code == 507  # type: ignore[attr-defined]
    assert "STREAM_RAG_COLLECTION_MAX_MB" in big.json()["error"]["message"]  # type: ignore[attr-defined]
    elsewhere = upload(client, keys["admin"], "b.txt", half + b"More.", collection="other")
    assert elsewhere.status_code == 201  # type: ignore[attr-defined]
    listed = client.get("/v1/documents", headers={"Authorization": keys["admin"]})
    assert len(listed.json()["documents"]) == 5


def test_a_small_file_that_unfolds_into_many_chunks_is_refused(deployment: object) -> None:
    client, keys = deployment()  # type: ignore[operator]
    data = wordy_pdf(pages=50)  # 8 KB, ~280 chunks
    refused = upload(client, keys["admin"], "wordy.pdf", data)
    assert refused.status_code == 422, refused.text  # type: ignore[attr-defined]
    assert refused.json()["error"]["limit"] == "STREAM_RAG_MAX_CHUNKS_PER_KB"  # type: ignore[attr-defined]
    fine = upload(client, keys["admin"], "notes.txt", b"Refunds take five days. " * 2000)
    assert fine.status_code == 201  # type: ignore[attr-defined]
