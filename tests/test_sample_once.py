"""`serve --sample` loads the sample knowledge base once per collection: a sample document the
operator deleted stays deleted across restarts (the store's meta records the load)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from stream_rag.config import Settings
from stream_rag.index.folders import (
    ingest_paths,
    ingest_sample,
    iter_files,
    sample_kb_dir,
    sample_loaded_key,
)
from stream_rag.services import open_store

from .helpers import HANG_GUARD_S, HTTP_GUARD_S, START_GUARD_S, free_port


@contextmanager
def serving(data: Path, log: Path) -> Iterator[str]:
    """A real `stream-rag serve --sample` on loopback (keyless: the operator's own machine)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAM_RAG_")}
    env["STREAM_RAG_DATA_DIR"] = str(data)
    command = [sys.executable, "-m", "stream_rag.cli", "serve", "--sample", "--port", str(port)]
    with log.open("w") as sink:
        server = subprocess.Popen(command, env=env, stderr=sink, cwd=data.parent)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_GUARD_S
        while True:
            try:
                httpx.get(f"{base}/healthz", timeout=10)
                break
            except httpx.TransportError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)  # polling for the port to open, not ordering two events
        yield base
    finally:
        server.terminate()
        server.wait(timeout=HANG_GUARD_S)


def names(base: str) -> list[str]:
    listed = httpx.get(f"{base}/v1/documents", timeout=30)
    assert listed.status_code == 200, listed.text
    return sorted(doc["name"] for doc in listed.json()["documents"])


def test_a_deleted_sample_document_stays_deleted_after_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    sample = sorted(path.name for path in iter_files([sample_kb_dir()]))
    with serving(data, tmp_path / "first.log") as base:
        assert names(base) == sample
        (doc,) = [
            d
            for d in httpx.get(f"{base}/v1/documents", timeout=HTTP_GUARD_S).json()["documents"]
            if d["name"] == "pricing.md"
        ]
        deleted = httpx.delete(f"{base}/v1/documents/{doc['id']}", timeout=30)
        assert deleted.status_code in (200, 204), deleted.text
    assert f"sample knowledge base: {len(sample)} added" in (tmp_path / "first.log").read_text()
    with serving(data, tmp_path / "second.log") as base:
        assert names(base) == [name for name in sample if name != "pricing.md"]
    assert "sample knowledge base: loaded before" in (tmp_path / "second.log").read_text()


def test_a_store_loaded_before_the_record_existed_is_not_loaded_again(tmp_path: Path) -> None:
    # A release that kept no record loaded the sample; the operator deleted all but one file.
    settings = Settings(data_dir=tmp_path / "data")
    store = open_store(settings, processes=False)
    try:
        kept = sorted(iter_files([sample_kb_dir()]))[0]
        assert len(ingest_paths(store, [kept], settings, quiet=True).added) == 1
        assert ingest_sample(store, settings) is None
        assert [d.name for d in store.list_documents()] == [kept.name]
        assert store.meta(sample_loaded_key(settings.default_collection)) is not None
    finally:
        store.close()


def test_the_record_is_per_collection(tmp_path: Path) -> None:
    first = Settings(data_dir=tmp_path / "data")
    other = first.with_overrides(default_collection="support")
    store = open_store(first, processes=False)
    try:
        report = ingest_sample(store, first)
        assert report is not None
        assert report.failed == []
        assert ingest_sample(store, first) is None
        again = ingest_sample(store, other)  # another collection gets its own copy
        assert again is not None
        assert len(again.added) == len(report.added)
        assert {d.collection for d in store.list_documents()} == {"default", "support"}
    finally:
        store.close()
