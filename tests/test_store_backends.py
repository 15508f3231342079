"""One store suite, run against SQLite and PostgreSQL (a real server: tests/postgres.py)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore, hash_secret
from stream_rag.answer.readings import load_readings, store_readings
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.errors import NotFoundError, QueueFullError, UnsupportedTypeError
from stream_rag.http.app import create_app
from stream_rag.index.jobs import (
    Lease,
    claim,
    claimable,
    queued,
    record_error,
    refund_attempt,
    release,
    start_attempt,
)
from stream_rag.index.questions import any_questions, load_questions, save_questions
from stream_rag.ingest.extract_pool import (
    Extracted,
    ExtractionPool,
    InProcessExtractor,
    Wanted,
)
from stream_rag.store.blobs import StagedFile
from stream_rag.store.blobs_db import PART_BYTES
from stream_rag.store.documents import DocumentStore
from stream_rag.store.migrations import LATEST, MIGRATIONS
from stream_rag.store.questions import Asked, Cited, QuestionLog
from stream_rag.store.quotas import Quota, QuotaExceededError
from stream_rag.store.streams import StreamLog

from .conftest import wait_indexed


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """None (SQLite in the data directory) or a fresh PostgreSQL database's URL."""
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def store(tmp_path: Path, database_url: str | None) -> Iterator[DocumentStore]:
    opened = DocumentStore(
        tmp_path / "data", chunk_chars=200, chunk_overlap_chars=40, database_url=database_url
    )
    try:
        yield opened
    finally:
        opened.close()


def stage(store: DocumentStore, data: bytes) -> StagedFile:
    stager = store.blobs.stager(10**9)
    stager.write(data)
    return stager.finish()


def test_documents_versions_and_bytes(store: DocumentStore) -> None:
    a = store.add(stage(store, b"Alpha content."), filename="test1.txt")
    b = store.add(stage(store, b"Beta content."), filename="test1.txt")
    assert a.document.id != b.document.id
    again = store.add(stage(store, b"Alpha content."), filename="renamed.txt")
    assert again.duplicate
    assert again.document.id == a.document.id
    other = store.add(stage(store, b"Alpha content."), filename="a.txt", collection="other")
    assert not other.duplicate
    v2 = store.add_version(a.document.id, stage(store, b"Alpha, second."), filename="t.txt")
    assert v2.version.version == 2
    assert [v.version for v in store.get(a.document.id).versions] == [1, 2]
    assert store.content_path(store.version(a.document.id, 1)).read_bytes() == b"Alpha content."
    assert store.content_path(v2.version).read_bytes() == b"Alpha, second."
    assert store.chunks(a.document.id, 2)[0].text == "Alpha, second."
    assert store.text(a.document.id, 1) == "Alpha content."
    assert store.count() == 3
    assert [d.id for d in store.list_documents("other")] == [other.document.id]
    assert len(store.list_documents()) == 3


def test_chunks_point_into_the_text(store: DocumentStore) -> None:
    body = " ".join(f"Sentence number {i} talks about plan {i}." for i in range(40))
    result = store.add(stage(store, body.encode()), filename="long.md")
    doc_id = result.document.id
    chunks = store.chunks(doc_id, 1)
    text = store.text(doc_id, 1)
    assert len(chunks) == result.version.chunk_count > 1
    for ordinal, chunk in enumerate(chunks):
        assert (chunk.ordinal, chunk.id) == (ordinal, f"{doc_id}:v1:{ordinal}")
        assert text[chunk.start : chunk.end] == chunk.text
    ids = [c.id for c in chunks]
    assert store.chunks_by_id(ids) == {c.id: c for c in chunks}
    sources = store.chunk_sources(ids[:2])
    assert sources[ids[0]].filename == "long.md"
    assert sources[ids[0]].sha256 == result.version.sha256
    assert store.chunk_batch(doc_id, 1, 1, 2) == chunks[1:3]


def test_the_bytes_survive_a_fresh_open(tmp_path: Path, database_url: str | None) -> None:
    """Another process (a replica) on the same database downloads the same bytes; 4.6 MB
    are two parts on PostgreSQL."""
    store = DocumentStore(tmp_path / "data", chunk_chars=4000, database_url=database_url)
    try:
        text = ("Refunds are paid within 30 days. " * 140_000).encode()
        added = store.add(stage(store, text), filename="big.txt")
    finally:
        store.close()
    data_dir = tmp_path / "data" if database_url is None else tmp_path / "replica"
    other = DocumentStore(data_dir, database_url=database_url)
    try:
        path = other.content_path(other.version(added.document.id, 1))
        assert hashlib.sha256(path.read_bytes()).hexdigest() == added.version.sha256
    finally:
        other.close()


def test_delete_and_sweep_remove_unshared_bytes(
    store: DocumentStore, tmp_path: Path, database_url: str | None
) -> None:
    kept = store.add(stage(store, b"Shared."), filename="a.txt", collection="one")
    gone = store.add(stage(store, b"Shared."), filename="a.txt", collection="two")
    store.add_version(gone.document.id, stage(store, b"Only here."), filename="a.txt")
    only_here = store.version(gone.document.id, 2)
    store.delete(gone.document.id)
    with pytest.raises(NotFoundError):
        store.get(gone.document.id)
    assert store.content_path(kept.version).read_bytes() == b"Shared."
    assert store.blobs.fetch(only_here.sha256) is None
    assert store.sweep() == 0
    if database_url is not None:  # a cold cache reads the database
        other = DocumentStore(tmp_path / "replica", database_url=database_url)
        try:
            assert other.blobs.fetch(only_here.sha256) is None
            assert other.content_path(kept.version).read_bytes() == b"Shared."
        finally:
            other.close()


def test_a_rejected_upload_stores_nothing(store: DocumentStore) -> None:
    store.add(stage(store, b"Existing."), filename="a.txt")
    with pytest.raises(UnsupportedTypeError):
        store.add(stage(store, b"\x89PNG..."), filename="image.png")
    assert store.count() == 1
    assert queued(store) == 1


def test_concurrent_identical_uploads_make_one_document(store: DocumentStore) -> None:
    results = []

    def upload() -> None:
        results.append(store.add(stage(store, b"Raced bytes."), filename="race.txt"))

    threads = [threading.Thread(target=upload) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({r.document.id for r in results}) == 1
    assert sum(not r.duplicate for r in results) == 1


def test_jobs_attempts_and_readiness(store: DocumentStore) -> None:
    added = store.add(stage(store, b"Refunds within 30 days."), filename="r.txt")
    key = (added.document.id, 1)
    assert store.pending() == [key]
    assert start_attempt(store, key, 2) is None
    record_error(store, key, "boom")
    refund_attempt(store, key)
    refund_attempt(store, key)  # never below zero
    assert start_attempt(store, key, 1) is None
    reason = start_attempt(store, key, 1)
    assert reason is not None
    assert "boom" in reason
    assert store.version(*key).status == "failed"
    assert queued(store) == 0
    store.set_indexing([key])
    assert queued(store) == 1
    store.set_indexing([key])  # queued once
    assert queued(store) == 1
    assert store.set_ready(*key, tokens=5, chunks=1) == 1
    assert store.live_versions([added.document.id]) == {added.document.id: 1}
    assert store.versions_with_status("ready") == {key}
    assert store.bm25_totals() == (5, 1)
    assert store.live_chunk_ids() == {f"{key[0]}:v1:0": key}
    assert store.newest_versions() == [key]


def test_the_queue_bound_and_quotas(tmp_path: Path, database_url: str | None) -> None:
    store = DocumentStore(tmp_path / "data", max_jobs=1, database_url=database_url)
    try:
        store.add(stage(store, b"One."), filename="1.txt", quota=Quota(owner="key_a"))
        with pytest.raises(QueueFullError):
            store.add(stage(store, b"Two."), filename="2.txt")
        store.set_failed(store.pending()[0][0], 1, "made room")
        with pytest.raises(QuotaExceededError):
            store.add(stage(store, b"Three."), filename="3.txt", quota=Quota("key_a", 1))
        store.add(stage(store, b"Three."), filename="3.txt", quota=Quota("key_b", 1))
    finally:
        store.close()


def test_derived_rows_per_chunk(store: DocumentStore) -> None:
    added = store.add(stage(store, b"The fee is 30 dollars a month."), filename="f.txt")
    chunks = store.chunks(added.document.id, 1)
    cid = chunks[0].id
    store.set_chunk_features([(cid, '{"a": 1}'), ("gone:v1:0", "{}")])
    store.set_chunk_features([(cid, '{"a": 2}')])
    assert store.chunk_features([cid, "gone:v1:0"]) == {cid: '{"a": 2}'}
    vectors = np.ones((2, 4), np.float16).tobytes()
    store.save_sentence_vectors([(cid, "m", "[[0, 3]]", 4, vectors, None, None, None)])
    store.save_sentence_vectors([(cid, "m", "[[0, 4]]", 4, vectors, "[1]", 2, b"\x01\x02")])
    assert store.sentence_vectors([cid], "m") == {
        cid: ("[[0, 4]]", 4, vectors, ("[1]", 2, b"\x01\x02"))
    }
    save_questions(store, "q", [cid], [np.ones((2, 4), np.float32)])
    assert any_questions(store, "q")
    assert load_questions(store, [cid], "q", 4)[cid].shape == (2, 4)
    store_readings(store, chunks)
    store_readings(store, chunks)
    assert set(load_readings(store, [cid])) <= {cid}
    store.set_meta("fingerprint", "a")
    store.set_meta("fingerprint", "b")
    assert store.meta("fingerprint") == "b"
    assert store.meta_int("absent") == 0
    store.delete(added.document.id)  # derived rows go with their chunks
    assert store.chunk_features([cid]) == {}
    assert not any_questions(store, "q")


def test_keys_live_in_the_same_database(tmp_path: Path, database_url: str | None) -> None:
    keys = KeyStore(tmp_path / "data", database_url)
    try:
        key, secret = keys.create(name="bot", scopes=["chat"], collections=["a", "b"], rpm=5)
        found = keys.find(key.sha256)
        assert found is not None
        assert found.collections == frozenset({"a", "b"})
        assert [k.id for k in keys.list()] == [key.id]
        assert keys.revoke(key.id).revoked_at is not None
        assert keys.find(key.sha256) is None
        with pytest.raises(NotFoundError, match="revoked already"):
            keys.revoke(key.id)
        assert secret.startswith("sr_")
    finally:
        keys.close()


def test_migrations_are_recorded_once(tmp_path: Path, database_url: str | None) -> None:
    first = DocumentStore(tmp_path / "data", database_url=database_url)
    second = DocumentStore(tmp_path / "data2", database_url=database_url)
    try:
        assert first.backend.applied() == {m.version for m in MIGRATIONS}
        assert max(second.backend.applied()) == LATEST
    finally:
        first.close()
        second.close()


def test_a_migration_cut_short_is_finished_at_the_next_open(tmp_path: Path) -> None:
    # A process stopped after a migration's columns were added but before it was recorded
    # (or a second process that applied it meanwhile): opening again must not fail.
    first = DocumentStore(tmp_path / "data")
    with first.transaction() as db:
        db.execute("DELETE FROM schema_migrations WHERE version IN (6, 7)")
    first.close()
    again = DocumentStore(tmp_path / "data")
    try:
        assert again.backend.applied() == {m.version for m in MIGRATIONS}
        assert "source_end" in again.backend.columns("chunks")
    finally:
        again.close()


def test_the_server_stores_indexes_and_answers_on_either(
    tmp_path: Path, database_url: str | None, minilm: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url)
    with TestClient(create_app(settings, embedder=minilm)) as client:
        body = b"Refunds are paid within 30 days of a cancellation."
        response = client.post("/v1/documents", files={"file": ("refunds.txt", body)})
        assert response.status_code == 201, response.text
        doc_id = response.json()["document"]["id"]
        assert wait_indexed(client, doc_id)["versions"][0]["status"] == "ready"
        download = client.get(f"/v1/documents/{doc_id}/versions/1/content")
        assert download.content == body
        found = client.post("/v1/search", json={"query": "when are refunds paid"}).json()
        assert found["blocks"][0]["doc_id"] == doc_id


def test_the_question_log(store: DocumentStore) -> None:
    log = QuestionLog(store, keep_days=30)
    cited = (Cited("doc_a", 1, "a.txt"),)
    log.record(Asked("q1", "default", "when?", "answered", "c1", "key_a", citations=cited))
    assert log.rate("q1", "key_a", 1, "good")
    assert not log.rate("q1", "key_b", -1, "not mine")
    log.record(Asked("q1", "default", "when?", "answered", "c1", "key_a", sentences=2))
    (row,) = log.rows(["default"], "2000-01-01")
    assert (row.rating, row.sentences) == (1, 2)
    assert log.forget_conversation("c1", "key_a") == 1
    assert log.rows(None, "2000-01-01") == []


def test_job_leases(store: DocumentStore) -> None:
    """A version leased by one process is not taken by another until the lease runs out."""
    added = store.add(stage(store, b"Leased."), filename="l.txt")
    key = (added.document.id, 1)
    a, b = Lease(60.0), Lease(60.0)
    assert claimable(store) == [key]
    assert claim(store, key, a)
    assert claim(store, key, a)  # a renewal
    assert not claim(store, key, b)
    assert claimable(store) == []
    release(store, key, a)
    assert claimable(store) == [key]
    assert claim(store, key, Lease(-1.0))  # a lease that has run out: its process died
    assert claimable(store) == [key]
    assert claim(store, key, b)
    assert store.set_ready(*key, tokens=1, chunks=1) == 1
    assert not claim(store, key, b)  # indexed: no longer queued


def test_stream_records_and_their_expiry(store: DocumentStore) -> None:
    log = StreamLog(store, keep_s=600)
    log.open("s1", "key_a")
    log.append("s1", 1, "sources", "{}", False)
    log.append("s1", 2, "sentence", '{"text": "x"}', False)
    recorded = log.read("s1", 1)
    assert recorded is not None
    assert (recorded.owner, recorded.finished, recorded.stale) == ("key_a", False, False)
    assert recorded.events == ((2, "sentence", '{"text": "x"}'),)
    log.append("s1", 3, "done", "{}", True)
    done = log.read("s1", 3)
    assert done is not None
    assert done.finished
    assert done.events == ()
    assert log.read("nope", 0) is None
    gone = StreamLog(store, keep_s=-1)  # records that expired at once
    gone.open("s2", "key_a")
    assert gone.read("s2", 0) is None
    assert gone.purge() == 1
    assert log.read("s1", 0) is not None  # the unexpired one stays


def test_chunks_keep_their_source_bytes_and_versions_are_extracted_again(
    store: DocumentStore,
) -> None:
    source = "# Returns\n\nReturn **unused** tools within 30 days. " * 6
    added = store.add(stage(store, source.encode()), filename="r.md")
    doc_id = added.document.id
    chunks = store.chunks(doc_id, 1)
    assert all("**" not in c.text for c in chunks)
    for chunk in chunks:
        assert chunk.source_start is not None
        assert chunk.source_end is not None
        assert chunk.page_start is None
        original = source.encode()[chunk.source_start : chunk.source_end].decode()
        assert original.replace("**", "").startswith(chunk.text.split("\n")[0])
    assert store.outdated_versions() == []
    with store.transaction() as db:
        db.execute("UPDATE versions SET extraction = NULL WHERE doc_id = ?", (doc_id,))
    assert store.outdated_versions() == [(doc_id, 1)]
    assert store.reextract(doc_id, 1) == (len(chunks), len(chunks))
    assert store.outdated_versions() == []
    assert store.chunks(doc_id, 1) == chunks


def test_a_version_the_extractor_could_not_take_now_stays_outdated(tmp_path: Path) -> None:
    # A closed pool (a stop during start-up's extraction) says nothing about the file: the
    # version keeps its text and is extracted again at the next start, not marked current.
    pool = ExtractionPool(workers=1)
    store = DocumentStore(tmp_path / "data", chunk_chars=200, extractor=pool)
    try:
        added = store.add(
            stage(store, b"# Returns\n\nReturn tools within 30 days."), filename="r.md"
        )
        doc_id = added.document.id
        with store.transaction() as db:
            db.execute("UPDATE versions SET extraction = NULL WHERE doc_id = ?", (doc_id,))
        before = store.text(doc_id, 1)
        pool.close()
        assert store.reextract(doc_id, 1) == (1, 1)
        assert store.outdated_versions() == [(doc_id, 1)]
        assert store.text(doc_id, 1) == before
    finally:
        store.close()


def test_bytes_fetched_by_many_threads_at_once_are_cached_whole(
    tmp_path: Path, postgres_url: str
) -> None:
    # A replica that never saw the file: visitors open the same cited document at once.
    data = bytes(range(256)) * (PART_BYTES * 2 // 256 + 4096)  # three parts
    source = DocumentStore(tmp_path / "a", database_url=postgres_url)
    replica = DocumentStore(tmp_path / "b", database_url=postgres_url)
    try:
        staged = stage(source, data)
        with source.transaction():
            source.blobs.commit(staged)
        sha = staged.sha256
        start = threading.Barrier(6)

        def fetch() -> bytes:
            start.wait()
            path = replica.blobs.fetch(sha)
            assert path is not None
            return path.read_bytes()

        with ThreadPoolExecutor(6) as pool:
            fetched = list(pool.map(lambda _: fetch(), range(6)))
        assert all(got == data for got in fetched)
        cached = replica.blobs.fetch(sha)
        assert cached is not None
        assert hashlib.sha256(cached.read_bytes()).hexdigest() == sha
    finally:
        source.close()
        replica.close()


def test_a_store_of_the_release_before_migrations_upgrades_in_place(tmp_path: Path) -> None:
    # The store as the release before numbered migrations left it: no migration record, none
    # of the tables and columns added since, every version of an older extraction.
    source = (
        b"# Plants\n\n1. Water daily\n2. Feed weekly\n\n| Size | Price |\n|---|---|\n| S | 5 |\n"
    )
    store = DocumentStore(tmp_path / "data", chunk_chars=200)
    added = store.add(stage(store, source), filename="plants.md").document
    store.close()
    keys = KeyStore(tmp_path / "data")
    key, secret = keys.create(name="widget", scopes=["chat"])
    keys.close()
    old = sqlite3.connect(tmp_path / "data" / "stream_rag.sqlite3")
    old.executescript(
        "DROP TABLE schema_migrations; DROP TABLE feedback; DROP TABLE questions;"
        "DROP TABLE rate_buckets; DROP TABLE citation_grants; DROP TABLE stream_events;"
        "DROP TABLE answer_streams; ALTER TABLE versions DROP COLUMN extraction;"
        "ALTER TABLE jobs DROP COLUMN lease_owner; ALTER TABLE jobs DROP COLUMN lease_until;"
        + "".join(
            f"ALTER TABLE chunks DROP COLUMN {c};"
            for c in ("page_start", "page_end", "source_start", "source_end")
        )
        + "UPDATE versions SET text = 'old text'; UPDATE chunks SET text = 'old text';"
    )
    old.close()

    upgraded = DocumentStore(tmp_path / "data", chunk_chars=200)
    try:
        assert upgraded.backend.applied() == {m.version for m in MIGRATIONS}
        assert upgraded.outdated_versions() == [(added.id, 1)]
        upgraded.reextract(added.id, 1)
        assert upgraded.outdated_versions() == []
        document = upgraded.get(added.id)
        assert (document.id, document.name, document.collection) == (
            added.id,
            added.name,
            added.collection,
        )
        assert [(v.version, v.sha256, v.size) for v in document.versions] == [
            (1, added.latest.sha256, len(source))
        ]
        assert upgraded.content_path(document.latest).read_bytes() == source
        text = upgraded.text(added.id, 1)
        assert "old text" not in text
        assert "Water daily." in text
        chunks = upgraded.chunks(added.id, 1)
        assert all(c.source_start is not None for c in chunks)
    finally:
        upgraded.close()
    again = KeyStore(tmp_path / "data")
    try:
        assert again.find(hash_secret(secret)) == key
    finally:
        again.close()


class MeanwhileExtractor(InProcessExtractor):
    """Extracts in this thread, and first lets `meanwhile` run: what another process does to
    the store while this one reads the file."""

    def __init__(self) -> None:
        super().__init__()
        self.meanwhile: Callable[[], None] = lambda: None

    def extract(
        self,
        path: Path,
        media_type: str,
        chunk_chars: int,
        overlap_chars: int,
        *,
        wanted: Wanted | None = None,
    ) -> Extracted:
        self.meanwhile()
        return super().extract(path, media_type, chunk_chars, overlap_chars, wanted=wanted)


def test_reextracting_a_version_another_process_changed_meanwhile(
    tmp_path: Path, database_url: str | None
) -> None:
    extractor = MeanwhileExtractor()
    store = DocumentStore(tmp_path / "data", extractor=extractor, database_url=database_url)
    other = DocumentStore(tmp_path / "data", database_url=database_url)
    try:
        source = b"# Returns\n\nReturn tools within 30 days."
        doc_id = store.add(stage(store, source), filename="r.md").document.id
        outdated = "UPDATE versions SET extraction = NULL WHERE doc_id = ?"
        with store.transaction() as db:
            db.execute(outdated, (doc_id,))
        first = store.chunks(doc_id, 1)[0].id

        def extracted_and_indexed() -> None:  # another replica, starting at the same time
            other.reextract(doc_id, 1)
            other.set_chunk_features([(first, "{}")])

        extractor.meanwhile = extracted_and_indexed
        assert store.reextract(doc_id, 1) == (1, 1)
        assert store.chunk_features([first]) == {first: "{}"}  # its work is kept
        with store.transaction() as db:
            db.execute(outdated, (doc_id,))

        def deleted() -> None:  # a user deleting it through another replica's API
            other.delete(doc_id)

        extractor.meanwhile = deleted
        with pytest.raises(NotFoundError):  # what Indexer.reextract skips
            store.reextract(doc_id, 1)
    finally:
        other.close()
        store.close()
