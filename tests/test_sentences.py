"""The block side the gate's semantic stage reads, stored with each chunk at ingest
(embed/sentences.py, embed/tokens.py): sentence vectors and word-piece states."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import (
    SentenceEncoder,
    SentenceVectors,
    StoredVectors,
    chunk_sentences,
    embed_sentences,
    stored_model,
)
from stream_rag.embed.tokens import DIMS
from stream_rag.index.folders import ingest_paths
from stream_rag.services import Services, open_services
from stream_rag.types import Chunk

from .gate_blocks import BLOCKS


@pytest.fixture
def services(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[Services]:
    opened = open_services(Settings(data_dir=tmp_path / "data"), embedder=minilm)
    yield opened
    opened.close()


def _ingest(services: Services, path: Path, text: str, *, index: bool) -> list[Chunk]:
    """The chunks of `text` stored from a file (and indexed, with the block side stored)."""
    path.write_text(text, encoding="utf-8")
    indexer = services.indexer if index else None
    ingest_paths(services.store, [path], services.settings, indexer=indexer, quiet=True)
    (document,) = services.store.list_documents()
    return services.store.chunks(document.id, 1)


def _rows(services: Services, columns: str) -> dict[str, tuple[Any, ...]]:
    """`columns` of each stored chunk's row, by chunk id."""
    db = sqlite3.connect(services.settings.data_dir / "stream_rag.sqlite3")
    try:
        query = f"SELECT chunk_id, {columns} FROM chunk_sentence_vectors"
        return {row[0]: tuple(row[1:]) for row in db.execute(query)}
    finally:
        db.close()


_VECTORS = "model, length(vectors)"
_TOKENS = "token_counts, token_dims, length(tokens)"


def _blocks(services: Services) -> SentenceEncoder:
    """The encoder ingest stores the block side with (the gate's precision)."""
    encoder = services.indexer.sentence_encoder
    assert encoder is not None
    return encoder


def _load(services: Services, encoder: SentenceEncoder, chunk: Chunk) -> SentenceVectors:
    return StoredVectors(services.store, encoder, [(chunk.id, chunk.text)])(1)


def test_ingest_stores_each_chunks_sentence_vectors_and_delete_removes_them(
    services: Services, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    chunks = _ingest(services, tmp_path / "warranty.txt", "\n\n".join(BLOCKS), index=True)
    rows = _rows(services, _VECTORS)
    assert set(rows) == {c.id for c in chunks}
    for chunk in chunks:
        model, size = rows[chunk.id]
        assert model == f"{minilm.name}:int8"  # the gate's precision, by default int8
        assert size == len(chunk_sentences(chunk.text)) * minilm.dim * 2  # float16
    services.indexer.delete(chunks[0].doc_id)
    assert _rows(services, _VECTORS) == {}


def test_chunks_without_stored_vectors_get_them_on_first_use(
    services: Services, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    (chunk,) = _ingest(services, tmp_path / "support.txt", BLOCKS[2], index=False)
    assert _rows(services, _VECTORS) == {}
    loaded = _load(services, minilm, chunk)
    assert _rows(services, _VECTORS) == {
        chunk.id: (minilm.name, len(loaded.spans) * minilm.dim * 2)
    }
    again = _load(services, minilm, chunk)
    assert again.spans == loaded.spans
    assert np.allclose(again.vectors, loaded.vectors, atol=1e-3)


def test_blocks_are_stored_at_the_gate_precision_and_other_rows_recomputed_on_first_use(
    services: Services, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    (chunk,) = _ingest(services, tmp_path / "warranty.txt", BLOCKS[0], index=False)
    blocks = _blocks(services)
    stage = services.answerer.stages.semantic
    assert stage is not None
    assert stage.sentence_encoder is blocks  # both sides of the comparison: one model
    # As stored before the block side followed the gate's precision: fp32 rows.
    old = _load(services, minilm, chunk)
    assert _rows(services, _VECTORS)[chunk.id][0] == minilm.name
    loaded = _load(services, blocks, chunk)
    assert _rows(services, _VECTORS)[chunk.id][0] == stored_model(blocks)
    assert stored_model(blocks) == f"{minilm.name}:int8"
    fresh = embed_sentences([chunk.text], blocks)[0]
    assert loaded.spans == old.spans == fresh.spans
    np.testing.assert_allclose(loaded.vectors, fresh.vectors, atol=1e-6)
    assert not np.allclose(loaded.vectors, old.vectors, atol=1e-6)
    # Read back as stored (float16), not computed again.
    again = _load(services, blocks, chunk)
    np.testing.assert_allclose(again.vectors, fresh.vectors, atol=2e-3)


def test_ingest_stores_word_pieces_with_the_chunk_and_delete_removes_them(
    services: Services, tmp_path: Path
) -> None:
    chunks = _ingest(services, tmp_path / "warranty.txt", "\n\n".join(BLOCKS), index=True)
    rows = _rows(services, _TOKENS)
    assert set(rows) == {c.id for c in chunks}
    for chunk in chunks:
        counts_json, dims, size = rows[chunk.id]
        assert counts_json is not None
        assert dims == DIMS
        counts = [int(c) for c in counts_json.strip("[]").split(",")]
        assert len(counts) == len(chunk_sentences(chunk.text))
        assert size == sum(counts) * DIMS
        loaded = _load(services, _blocks(services), chunk)
        assert loaded.tokens is not None
        assert loaded.tokens.counts == tuple(counts)
    services.indexer.delete(chunks[0].doc_id)
    assert _rows(services, _TOKENS) == {}


def test_a_row_stored_without_word_pieces_gets_them_on_first_use(
    services: Services, tmp_path: Path
) -> None:
    (chunk,) = _ingest(services, tmp_path / "support.txt", BLOCKS[0], index=True)
    fresh = _load(services, _blocks(services), chunk)
    # As a chunk stored before word pieces were: vectors only.
    db = sqlite3.connect(services.settings.data_dir / "stream_rag.sqlite3")
    with db:
        db.execute("UPDATE chunk_sentence_vectors SET token_counts = NULL, tokens = NULL")
    db.close()
    assert _rows(services, _TOKENS)[chunk.id] == (None, DIMS, None)
    loaded = _load(services, _blocks(services), chunk)
    assert loaded.tokens is not None
    assert fresh.tokens is not None
    np.testing.assert_allclose(loaded.tokens.states, fresh.tokens.states, atol=1e-6)
    counts_json, dims, size = _rows(services, _TOKENS)[chunk.id]
    assert counts_json is not None
    assert dims == DIMS
    assert size == sum(fresh.tokens.counts) * DIMS
