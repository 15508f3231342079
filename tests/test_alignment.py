"""Stored word-piece states (embed/tokens.py) and the token alignment signal built on them."""

from __future__ import annotations

import numpy as np

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import embed_sentences
from stream_rag.embed.tokens import DIMS, TokenStates, compress, content_pieces, project
from stream_rag.gate.alignment import LONG_PART_PIECES, Alignment, align, parts
from stream_rag.gate.citations import extract
from stream_rag.gate.lexical import GateContext
from stream_rag.gate.semantic import SemanticStage, features

from .gate_blocks import BLOCKS, EXTRA_CLAIM, PARAPHRASE


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
    # Long parts (the several-sentence model's): a two-piece part is not one.
    mixed = ["sales", "rose", "sharply", "in", "europe", ",", "after", "launch", "week", "."]
    long_parts = parts(mixed, content_pieces(mixed), LONG_PART_PIECES)
    assert [[mixed[i] for i in part] for part in long_parts] == [
        ["sales", "rose", "sharply", "europe"]
    ]
    assert len(parts(mixed, content_pieces(mixed))) == 2


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
