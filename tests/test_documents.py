from __future__ import annotations

import hashlib
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from stream_rag.errors import InvalidFilenameError, NotFoundError, UnsupportedTypeError
from stream_rag.store.blobs import StagedFile
from stream_rag.store.documents import DocumentStore
from stream_rag.store.records import validate_filename

from .conftest import store_snapshot


@pytest.fixture
def store(tmp_path: Path) -> DocumentStore:
    return DocumentStore(tmp_path / "data", chunk_chars=200, chunk_overlap_chars=40)


def stage(store: DocumentStore, data: bytes) -> StagedFile:
    stager = store.blobs.stager(10**9)
    stager.write(data)
    return stager.finish()


def test_same_name_different_bytes_are_two_documents(store: DocumentStore) -> None:
    a = store.add(stage(store, b"Alpha content."), filename="test1.txt")
    b = store.add(stage(store, b"Beta content."), filename="test1.txt")
    assert a.document.id != b.document.id
    assert not a.duplicate
    assert not b.duplicate
    assert store.content_path(a.version).read_bytes() == b"Alpha content."
    assert store.content_path(b.version).read_bytes() == b"Beta content."


def test_identical_bytes_are_deduplicated_per_collection(store: DocumentStore) -> None:
    first = store.add(stage(store, b"Same bytes."), filename="a.txt")
    again = store.add(stage(store, b"Same bytes."), filename="renamed.txt")
    other = store.add(stage(store, b"Same bytes."), filename="a.txt", collection="other")
    assert again.duplicate
    assert again.document.id == first.document.id
    assert not other.duplicate
    assert other.document.id != first.document.id
    assert len(store.list_documents()) == 2
    assert len(store.chunks(first.document.id, 1)) == first.version.chunk_count


def test_versions_keep_old_bytes_and_chunks(store: DocumentStore) -> None:
    v1 = store.add(stage(store, b"Refunds within 30 days."), filename="refunds.txt")
    doc_id = v1.document.id
    v2 = store.add_version(doc_id, stage(store, b"Refunds within 14 days."), filename="r2.txt")
    assert v2.version.version == 2
    assert v2.document.latest.version == 2
    assert [v.version for v in store.get(doc_id).versions] == [1, 2]
    assert store.content_path(store.version(doc_id, 1)).read_bytes() == b"Refunds within 30 days."
    assert store.chunks(doc_id, 1)[0].text == "Refunds within 30 days."
    assert store.chunks(doc_id, 2)[0].text == "Refunds within 14 days."
    assert store.version(doc_id).version == 2
    same = store.add_version(doc_id, stage(store, b"Refunds within 14 days."), filename="r2.txt")
    assert same.duplicate
    assert same.version.version == 2
    revert = store.add_version(doc_id, stage(store, b"Refunds within 30 days."), filename="r.txt")
    assert revert.version.version == 3


def test_chunks_point_into_the_extracted_text(store: DocumentStore) -> None:
    body = " ".join(f"Sentence number {i} talks about plan {i}." for i in range(40))
    result = store.add(stage(store, body.encode()), filename="long.md")
    chunks = store.chunks(result.document.id, 1)
    text = store.text(result.document.id, 1)
    assert len(chunks) == result.version.chunk_count > 1
    for ordinal, chunk in enumerate(chunks):
        assert chunk.ordinal == ordinal
        assert text[chunk.start : chunk.end] == chunk.text
        assert chunk.id == f"{result.document.id}:v1:{ordinal}"


def test_delete_removes_versions_and_unshared_bytes(store: DocumentStore) -> None:
    kept = store.add(stage(store, b"Shared."), filename="a.txt", collection="one")
    gone = store.add(stage(store, b"Shared."), filename="a.txt", collection="two")
    store.add_version(gone.document.id, stage(store, b"Only here."), filename="a.txt")
    only_here = store.version(gone.document.id, 2)
    store.delete(gone.document.id)
    with pytest.raises(NotFoundError):
        store.get(gone.document.id)
    with pytest.raises(NotFoundError):
        store.chunks(gone.document.id, 1)
    assert store.content_path(kept.version).read_bytes() == b"Shared."
    assert not store.blobs.path_for(only_here.sha256).exists()


def test_unknown_ids_and_versions(store: DocumentStore) -> None:
    with pytest.raises(NotFoundError):
        store.get("doc_missing")
    result = store.add(stage(store, b"x y z"), filename="a.txt")
    with pytest.raises(NotFoundError, match="no version 2"):
        store.version(result.document.id, 2)
    with pytest.raises(NotFoundError):
        store.add_version("doc_missing", stage(store, b"new"), filename="a.txt")


def test_rejected_upload_changes_nothing(store: DocumentStore) -> None:
    store.add(stage(store, b"Existing."), filename="a.txt")
    before = store_snapshot(store.data_dir)
    staged = stage(store, b"\x89PNG...")
    with pytest.raises(UnsupportedTypeError):
        store.add(staged, filename="image.png")
    staged.path.unlink()
    assert store_snapshot(store.data_dir) == before


def test_concurrent_identical_uploads_make_one_document(store: DocumentStore) -> None:
    results = []

    def upload() -> None:
        results.append(store.add(stage(store, b"Raced bytes."), filename="race.txt"))

    threads = [threading.Thread(target=upload) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({r.document.id for r in results}) == 1
    assert sum(not r.duplicate for r in results) == 1
    assert len(store.list_documents()) == 1


@pytest.mark.parametrize(
    "name", ["../etc/passwd", "a/b.txt", "a\\b.txt", "..", "x..txt", "bad\x07.txt", "a" * 300]
)
def test_bad_filenames(name: str) -> None:
    with pytest.raises(InvalidFilenameError):
        validate_filename(name)


def test_unicode_filenames_are_fine() -> None:
    assert validate_filename("Überblick 数据.pdf") == "Überblick 数据.pdf"


def test_sweep_removes_orphans_but_not_uploads_in_flight(store: DocumentStore) -> None:
    kept = store.add(stage(store, b"Kept."), filename="a.txt")
    orphan = store.blobs.path_for("f" * 64)
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_bytes(b"left by a crash")
    in_flight = store.blobs.stager(10**6)
    in_flight.write(b"half of an upload")
    assert store.sweep() == 1  # however fresh: blobs are committed under the write lock
    assert not orphan.exists()
    assert store.content_path(kept.version).exists()
    assert in_flight.path.exists()  # this store's staging is in flight
    in_flight.discard()


STAGER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from stream_rag.store.documents import DocumentStore

    store = DocumentStore(Path(sys.argv[1]))
    stager = store.blobs.stager(10**9)
    stager.write(b"half of an upload")
    print(stager.path, flush=True)
    sys.stdin.readline()  # hold the upload open until told to stop (or killed)
    """
)


def test_staging_left_by_a_crash_is_swept_at_the_next_start(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"

    def start() -> tuple[subprocess.Popen[bytes], Path]:
        child = subprocess.Popen(
            [sys.executable, "-c", STAGER, str(data_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert child.stdout is not None
        line = child.stdout.readline().decode().strip()
        assert line, "the child died before staging"
        return child, Path(line)

    live, live_path = start()
    crashed, crashed_path = start()
    crashed.kill()
    crashed.wait()
    assert crashed_path.exists()
    store = DocumentStore(data_dir)  # a restart, seconds after the crash
    try:
        assert not crashed_path.exists()
        assert not crashed_path.parent.exists()
        assert live_path.exists()  # another process's upload in flight is left alone
    finally:
        store.close()
        assert live.stdin is not None
        live.stdin.close()
        live.wait()
        for child in (live, crashed):
            assert child.stdin is not None
            assert child.stdout is not None
            child.stdin.close()
            child.stdout.close()


CRASHER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from stream_rag.store.documents import DocumentStore

    store = DocumentStore(Path(sys.argv[1]), chunk_chars=300, chunk_overlap_chars=50)
    body = " ".join(f"Line {i} says the plan costs {i} dollars." for i in range(30000))
    n = 0
    while True:
        stager = store.blobs.stager(10**9)
        stager.write(f"Upload {n}. {body}".encode())
        staged = stager.finish()
        store.add(staged, filename=f"big{n}.txt")
        print(n, flush=True)
        n += 1
    """
)


def test_kill_mid_upload_leaves_no_partial_document(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    rng = random.Random(7)
    for _ in range(4):
        child = subprocess.Popen(
            [sys.executable, "-c", CRASHER, str(data_dir)], stdout=subprocess.PIPE
        )
        assert child.stdout is not None
        # Wait for a first commit (however slow the machine), then kill at a random point
        # of the uploads that follow.
        assert child.stdout.readline(), "the child died before committing an upload"
        time.sleep(rng.uniform(0.0, 1.5))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    store = DocumentStore(data_dir)
    documents = store.list_documents()
    assert documents, "the child should have committed at least one upload"
    for document in documents:
        assert len(document.versions) == 1
        record = document.latest
        chunks = store.chunks(document.id, 1)
        assert len(chunks) == record.chunk_count > 0
        data = store.content_path(record).read_bytes()
        assert hashlib.sha256(data).hexdigest() == record.sha256
        assert store.text(document.id, 1) == data.decode()
