"""The index fingerprint does not depend on where the data directory is: a copied or moved
directory is not indexed again, and a fingerprint stored in the old form (with the absolute
path) is accepted and rewritten."""

from __future__ import annotations

import shutil
from pathlib import Path

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.services import Services, open_services

from .test_jobs import add


def opened(data: Path, minilm: MiniLMEmbedder) -> Services:
    return open_services(Settings(data_dir=data), embedder=minilm)


def indexed_store(data: Path, minilm: MiniLMEmbedder) -> None:
    services = opened(data, minilm)
    try:
        assert services.indexer.reconcile() == []  # a new store: nothing to index yet
        doc_id, version = add(services.store, "walrus.md", "The walrus weighs a ton.")
        services.indexer.index_version(doc_id, version)
    finally:
        services.close()


def copied_store(tmp_path: Path, minilm: MiniLMEmbedder) -> Services:
    """Services over a copy (`b`) of an indexed data directory (`a`)."""
    indexed_store(tmp_path / "a", minilm)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    return opened(tmp_path / "b", minilm)


def test_a_copied_data_directory_is_not_indexed_again(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    services = copied_store(tmp_path, minilm)
    try:
        assert services.indexer.reconcile() == []
        assert str(tmp_path) not in services.indexer.fingerprint
        vector = minilm.embed(["walrus weight"])[0]
        assert len(services.index.search_dense(vector, "default", 5)) == 1
    finally:
        services.close()


def test_a_fingerprint_in_the_old_form_is_accepted_and_rewritten(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    services = copied_store(tmp_path, minilm)
    try:
        current = services.indexer.fingerprint
        head, _, rest = current.partition("|")
        assert head == "qdrant-edge:edge-384-f16"
        # As the store was written before: the embedded index named by its absolute path,
        # here the directory it was copied from.
        old = f"qdrant-edge:{tmp_path / 'a' / 'index' / 'edge-384-f16'}|{rest}"
        services.store.set_meta("index_fingerprint", old)
        assert services.indexer.reconcile() == []
        assert services.store.meta("index_fingerprint") == current
        # Anything else that differs still indexes everything again.
        for other in (
            f"qdrant-edge:{tmp_path / 'a' / 'index' / 'edge-768-f16'}|{rest}",
            old.replace("all-MiniLM-L6-v2", "openai:text-embedding-3-small"),
            old.replace("|features-", "|features-v0-"),
        ):
            services.store.set_meta("index_fingerprint", other)
            assert len(services.indexer.reconcile()) == 1, other
            assert services.store.meta("index_fingerprint") == current
    finally:
        services.close()
