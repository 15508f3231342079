"""Stored word-piece states (embed/tokens.py) and the token alignment signal built on them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import (
    SentenceEncoder,
    StoredVectors,
    chunk_sentences,
    embed_sentences,
)
from stream_rag.embed.tokens import DIMS, TokenStates, compress, content_pieces, project
from stream_rag.gate.alignment import Alignment, align, parts
from stream_rag.gate.citations import extract
from stream_rag.gate.lexical import GateContext
from stream_rag.gate.semantic import SemanticStage, features
from stream_rag.index.folders import ingest_paths
from stream_rag.services import Services, open_services

from .test_semantic import BLOCKS, EXTRA_CLAIM, PARAPHRASE


def test_content_pieces_leave_out_stop_words_and_punctuation() -> None:
    pieces = ["the", "warrant", "##y", "covers", "two", "years", ",", "and", "30", "."]
    assert [pieces[i] for i in content_pieces(pieces)] == [
        "warrant",
        "##y",
        "covers",
        "two",
        "years",
        "30",
    ]


def test_stored_states_round_trip_and_keep_the_pieces_cosines(minilm: MiniLMEmbedder) -> None:
    _, states = minilm.embed_tokens([BLOCKS[0], BLOCKS[1]])
    stored = compress(states)
    assert stored.counts == tuple(len(content_pieces(p)) for p, _ in states)
    assert stored.dims == DIMS
    again = TokenStates.from_blob(stored.counts, stored.to_blob(), DIMS)
    np.testing.assert_allclose(again.states, stored.states, atol=1e-6)
    assert len(stored.to_blob()) == sum(stored.counts) * DIMS  # one byte a dimension
    # The projection is fixed (seeded) and keeps cosines between pieces close to the
    # model's own: a projection drawn afresh, or none, would fail one of these.
    full = np.vstack([s[content_pieces(p)] for p, s in states])
    full /= np.linalg.norm(full, axis=1, keepdims=True)
    exact = full @ full.T
    approx = stored.states @ stored.states.T
    assert np.abs(exact - approx).mean() < 0.08
    np.testing.assert_array_equal(project(full), project(full))
    assert np.abs(stored.states - project(full)).max() < 0.01  # int8 steps only


def test_a_claim_is_cut_into_parts_at_clauses() -> None:
    pieces = ["the", "warranty", "covers", "defects", ",", "and", "the", "company", "offers"]
    pieces += ["free", "repairs", "worldwide", "."]
    keep = content_pieces(pieces)
    assert [[pieces[i] for i in part] for part in parts(pieces, keep)] == [
        ["warranty", "covers", "defects"],
        ["company", "offers", "free", "repairs", "worldwide"],
    ]
    # A part of one content piece is not judged alone; with no part of two, the whole is.
    short = ["it", "rained", ",", "then", "snowed"]
    assert parts(short, content_pieces(short)) == [content_pieces(short)]


def _alignment(minilm: MiniLMEmbedder, raw: str) -> Alignment:
    text, _ = extract(raw)
    vectors, ((pieces, states),) = minilm.embed_tokens([text])
    blocks = embed_sentences(BLOCKS, minilm)
    aligned = align(pieces, states, vectors[0], [1], lambda n: blocks[n - 1])
    assert aligned is not None
    return aligned


def test_alignment_is_high_for_a_paraphrase_and_an_added_detail_goes_unmatched(
    minilm: MiniLMEmbedder,
) -> None:
    copied = _alignment(minilm, "Batteries are replaced free of charge during the first year.")
    paraphrase = _alignment(minilm, PARAPHRASE)
    extra = _alignment(minilm, EXTRA_CLAIM)
    assert copied.mean > 0.95
    assert set(copied.words) == {"batteries", "replaced", "free", "charge", "first", "year"}
    assert paraphrase.mean > extra.mean
    # The reworded words still find a counterpart; the added detail does not, while the
    # words the claim copies match almost exactly.
    assert min(paraphrase.words.values()) > 0.55
    assert extra.words["worldwide"] < 0.45
    assert extra.words["defects"] > 0.9
    # The added clause is the extra claim's weakest part, below its mean and below the
    # paraphrase's weakest.
    assert extra.weakest_part < extra.mean
    assert extra.weakest_part < paraphrase.weakest_part


def test_a_judged_sentence_reports_its_alignment(minilm: MiniLMEmbedder) -> None:
    ctx = GateContext(BLOCKS)
    blocks = embed_sentences(BLOCKS, minilm)
    stage = SemanticStage(minilm)
    found = {}
    for raw in (PARAPHRASE, EXTRA_CLAIM):
        text, citations = extract(raw)
        lexical = ctx.check(text, citations)
        vectors, (pieces,) = stage.sentence_encoder.embed_tokens([text])
        found[raw] = features(
            text, lexical, ctx, lambda n: blocks[n - 1], vectors[0], stage.word_vectors, pieces
        )
        if raw == PARAPHRASE:
            verdict = stage.judge(text, lexical, ctx, lambda n: blocks[n - 1])
            assert verdict.stage == "semantic"
            assert verdict.scores["alignment"] == round(found[raw].alignment, 4)
            assert verdict.scores["missing_worst"] == round(found[raw].missing_worst, 4)
            assert verdict.scores["weakest_part"] == round(found[raw].weakest_part, 4)
    assert 0.0 < found[EXTRA_CLAIM].alignment < found[PARAPHRASE].alignment <= 1.0
    # "worldwide" (no cited block has it, and nothing there means it) outweighs "faults".
    assert found[EXTRA_CLAIM].missing_worst > found[PARAPHRASE].missing_worst >= 0.0


@pytest.fixture
def services(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[Services]:
    opened = open_services(Settings(data_dir=tmp_path / "data"), embedder=minilm)
    yield opened
    opened.close()


def _blocks(services: Services) -> SentenceEncoder:
    """The encoder ingest stores the block side with (the gate's precision)."""
    encoder = services.indexer.sentence_encoder
    assert encoder is not None
    return encoder


def _token_rows(services: Services) -> dict[str, tuple[str | None, int | None, int | None]]:
    db = sqlite3.connect(services.settings.data_dir / "stream_rag.sqlite3")
    try:
        query = (
            "SELECT chunk_id, token_counts, token_dims, length(tokens) FROM chunk_sentence_vectors"
        )
        return {row[0]: (row[1], row[2], row[3]) for row in db.execute(query)}
    finally:
        db.close()


def test_ingest_stores_word_pieces_with_the_chunk_and_delete_removes_them(
    services: Services, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    source = tmp_path / "warranty.txt"
    source.write_text("\n\n".join(BLOCKS), encoding="utf-8")
    ingest_paths(services.store, [source], services.settings, indexer=services.indexer, quiet=True)
    (document,) = services.store.list_documents()
    chunks = services.store.chunks(document.id, 1)
    rows = _token_rows(services)
    assert set(rows) == {c.id for c in chunks}
    for chunk in chunks:
        counts_json, dims, size = rows[chunk.id]
        assert counts_json is not None
        assert dims == DIMS
        counts = [int(c) for c in counts_json.strip("[]").split(",")]
        assert len(counts) == len(chunk_sentences(chunk.text))
        assert size == sum(counts) * DIMS
        loaded = StoredVectors(services.store, _blocks(services), [(chunk.id, chunk.text)])(1)
        assert loaded.tokens is not None
        assert loaded.tokens.counts == tuple(counts)
    services.indexer.delete(document.id)
    assert _token_rows(services) == {}


def test_a_row_stored_without_word_pieces_gets_them_on_first_use(
    services: Services, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    source = tmp_path / "support.txt"
    source.write_text(BLOCKS[0], encoding="utf-8")
    ingest_paths(services.store, [source], services.settings, indexer=services.indexer, quiet=True)
    (document,) = services.store.list_documents()
    (chunk,) = services.store.chunks(document.id, 1)
    fresh = StoredVectors(services.store, _blocks(services), [(chunk.id, chunk.text)])(1)
    # As a chunk stored before word pieces were: vectors only.
    db = sqlite3.connect(services.settings.data_dir / "stream_rag.sqlite3")
    with db:
        db.execute("UPDATE chunk_sentence_vectors SET token_counts = NULL, tokens = NULL")
    db.close()
    assert _token_rows(services)[chunk.id] == (None, DIMS, None)
    loaded = StoredVectors(services.store, _blocks(services), [(chunk.id, chunk.text)])(1)
    assert loaded.tokens is not None
    assert fresh.tokens is not None
    np.testing.assert_allclose(loaded.tokens.states, fresh.tokens.states, atol=1e-6)
    counts_json, dims, size = _token_rows(services)[chunk.id]
    assert counts_json is not None
    assert dims == DIMS
    assert size == sum(fresh.tokens.counts) * DIMS
