"""The gate's semantic stage: grey zone only, verdicts with their stage (the block side it reads
is stored at ingest: test_sentences.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import anyio
import numpy as np
import numpy.typing as npt
import pytest

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import embed_sentences, memory_vectors
from stream_rag.gate.citations import extract
from stream_rag.gate.judge import Stages
from stream_rag.gate.lexical import GateContext, Verdict
from stream_rag.gate.semantic import (
    COEFFICIENTS,
    DEFAULT_CUTOFF,
    INTERCEPT,
    MULTI_COEFFICIENTS,
    MULTI_INTERCEPT,
    ONE_WINDOW_GAP,
    STRICT_CUTOFF,
    Features,
    SemanticStage,
    anchored,
    block_windows,
    features,
    probability,
    several,
)
from stream_rag.index.features import compute

from .gate_blocks import BLOCKS, EXTRA_CLAIM, PARAPHRASE


@pytest.fixture(scope="module")
def stage(minilm: MiniLMEmbedder) -> SemanticStage:
    return SemanticStage(minilm)


def judge(
    stages: Stages, sentence: str, blocks: list[str] = BLOCKS, mode: str = "strict"
) -> Verdict:
    async def run() -> Verdict:
        return await stages.judge(GateContext(blocks, mode=mode))(sentence)

    return anyio.run(run)


def test_a_paraphrase_the_lexical_stage_drops_is_passed_by_the_semantic_one(
    stage: SemanticStage,
) -> None:
    lexical = judge(Stages(), PARAPHRASE)
    assert (lexical.ok, lexical.reason, lexical.grey, lexical.stage) == (
        False,
        "low_overlap",
        True,
        "lexical",
    )
    verdict = judge(Stages(stage), PARAPHRASE)
    assert (verdict.ok, verdict.stage) == (True, "semantic")
    assert verdict.scores["p"] >= stage.cutoff
    assert verdict.scores["cosine"] > 0.5
    assert verdict.scores_json()["lexical"] == round(lexical.score, 4)


def test_each_gate_mode_judges_with_its_own_cutoff(minilm: MiniLMEmbedder) -> None:
    stage = SemanticStage(minilm)
    assert stage.cutoffs == {"strict": STRICT_CUTOFF, "balanced": DEFAULT_CUTOFF}
    assert STRICT_CUTOFF > DEFAULT_CUTOFF
    assert SemanticStage(minilm, 0.6).cutoffs == {"strict": 0.6, "balanced": 0.6}
    p = judge(Stages(stage), PARAPHRASE).scores["p"]
    # A sentence between the two cutoffs passes at balanced and is dropped at strict.
    stage.cutoffs = {"strict": p + 1e-3, "balanced": p - 1e-3}
    strict = judge(Stages(stage), PARAPHRASE)
    balanced = judge(Stages(stage), PARAPHRASE, mode="balanced")
    assert (strict.ok, strict.stage, strict.reason) == (False, "semantic", "low_overlap")
    assert (balanced.ok, balanced.stage) == (True, "semantic")


def test_a_sentence_widening_its_blocks_scope_is_dropped_before_the_models(
    stage: SemanticStage,
) -> None:
    wider = PARAPHRASE.replace("Manufacturing faults", "Any fault")
    # The lexical stage drops it (gate/scope.py), final: no model is asked.
    verdict = judge(Stages(stage), wider)
    assert (verdict.ok, verdict.reason, verdict.stage) == (False, "claim_mismatch", "lexical")
    assert "'any'" in verdict.detail
    assert not verdict.grey
    # A block that says "any" itself leaves the sentence to the models.
    verdict = judge(Stages(stage), wider, [BLOCKS[0] + " Any fault is logged.", *BLOCKS[1:]])
    assert verdict.stage == "semantic"


def test_an_added_unsupported_clause_is_still_dropped(stage: SemanticStage) -> None:
    # The claim checks find no span of the cited block for the added clause: dropped before
    # any model is asked; the semantic stage alone drops it too, on its worst clause.
    verdict = judge(Stages(stage), EXTRA_CLAIM)
    assert (verdict.ok, verdict.reason, verdict.stage) == (False, "claim_mismatch", "lexical")
    text, citations = extract(EXTRA_CLAIM)
    ctx = GateContext(BLOCKS)
    alone = stage.judge(
        text, ctx.overlap(text, citations), ctx, memory_vectors(BLOCKS, stage.encoder)
    )
    assert (alone.ok, alone.reason, alone.stage) == (False, "low_overlap", "semantic")
    assert alone.scores["clause_gap"] > 0.5


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("Manufacturing faults are covered by the guarantee for three years [1].", None),
        ("Support is never available by e-mail on working days [3].", "low_overlap"),
        ("Manufacturing faults are covered by the guarantee for two years [4].", None),
        ("Manufacturing faults are covered by the guarantee for two years.", "uncited"),
    ],
)
def test_hard_failures_never_reach_the_semantic_stage(
    stage: SemanticStage, sentence: str, reason: str | None
) -> None:
    verdict = judge(Stages(stage), sentence)
    assert (verdict.ok, verdict.grey, verdict.stage) == (False, False, "lexical")
    if reason is not None:
        assert verdict.reason == reason


def test_clear_passes_stay_with_the_lexical_stage(stage: SemanticStage) -> None:
    verdict = judge(
        Stages(stage), "Refunds are issued within 30 days of a cancellation request [2]."
    )
    assert (verdict.ok, verdict.grey, verdict.stage) == (True, False, "lexical")


def test_windows_are_sentences_and_adjacent_pairs(minilm: MiniLMEmbedder) -> None:
    stored = embed_sentences([BLOCKS[0]], minilm)[0]
    assert len(stored.spans) == 3
    windows, vectors = block_windows(1, stored)
    assert [BLOCKS[0][w.start : w.end] for w in windows[3:]] == [
        BLOCKS[0][stored.spans[0][0] : stored.spans[1][1]],
        BLOCKS[0][stored.spans[1][0] : stored.spans[2][1]],
    ]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)


def test_a_sentence_cited_to_a_block_it_is_not_anchored_in_is_dropped_unasked(
    stage: SemanticStage,
) -> None:
    verdict = judge(Stages(stage), "Refunds for annual plans are paid back proportionally [3].")
    assert (verdict.ok, verdict.stage) == (False, "semantic")
    assert "not anchored in [3]" in verdict.detail
    assert "p" not in verdict.scores


class CountingEncoder:
    """The real MiniLM, keeping the texts it was asked to embed."""

    def __init__(self, model: MiniLMEmbedder) -> None:
        self.model = model
        self.name = model.name
        self.dim = model.dim
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.embedded.extend(texts)
        return self.model.embed(texts)

    def embed_tokens(
        self, texts: Sequence[str]
    ) -> tuple[npt.NDArray[np.float32], list[tuple[list[str], npt.NDArray[np.float32]]]]:
        self.embedded.extend(texts)
        return self.model.embed_tokens(texts)

    def static_vectors(self, words: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.model.static_vectors(words)


GREY = [
    PARAPHRASE,
    EXTRA_CLAIM,
    "Refunds for annual plans are paid back proportionally [3].",
    "Breakage caused by dropping the device is excluded from the guarantee [1].",
    "You can reach the help desk via mail during business days [3].",
    "Customers who cancel receive their money back within a month [2].",
    "The warranty lasts two years and includes free shipping to any country [1].",
    "Annual plans get a pro rata refund and free upgrades for life [2].",
    "The warranty covers defects for two years from purchase, except water damage and theft [1].",
]


def test_a_sentence_that_fails_whatever_its_cosine_is_not_embedded(
    minilm: MiniLMEmbedder,
) -> None:
    """The verdict is the one the full signals give (token alignment included); the sentence
    is embedded only when its embedding could change it (scores then carry the cosine)."""
    counting = CountingEncoder(minilm)
    stage = SemanticStage(counting)
    vectors = memory_vectors(BLOCKS, minilm)
    embedded = 0
    for raw in GREY:
        text, citations = extract(raw)
        ctx = GateContext(BLOCKS)
        lexical = ctx.overlap(text, citations)
        assert lexical.grey, raw
        embedded_text, (pieces,) = minilm.embed_tokens([text])
        full = features(text, lexical, ctx, vectors, embedded_text[0], stage.word_vectors, pieces)
        verdict = stage.judge(text, lexical, ctx, vectors)
        assert verdict.ok == (anchored(full) and probability(full) >= stage.cutoff), raw
        assert (text in counting.embedded) == ("cosine" in verdict.scores), raw
        embedded += text in counting.embedded
    assert 0 < embedded < len(GREY)


def test_eval_gate_counts_verdicts_by_stage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stream_rag.cli.commands import main

    records = [
        {
            "sentence": PARAPHRASE.removesuffix(" [1]."),
            "blocks": BLOCKS,
            "cited": [1],
            "label": True,
        },
        {
            "sentence": EXTRA_CLAIM.removesuffix(" [1]."),
            "blocks": BLOCKS,
            "cited": [1],
            "label": False,
        },
        {
            "sentence": "Support is available by email on weekdays.",
            "blocks": BLOCKS,
            "cited": [3],
            "label": True,
        },
    ]
    data = tmp_path / "gate.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    args = ["--data-dir", str(tmp_path / "d"), "eval", "gate", "--data", str(data)]

    def stage_rows(stages: str) -> dict[str, list[str]]:
        assert main([*args, "--stages", stages]) == 0
        out = capsys.readouterr().out
        rows = out.split("decided by", 1)[1].splitlines()[1:]
        return {row.split()[0]: row.split()[1:] for row in rows if row.strip()}

    lexical = stage_rows("lexical")
    assert lexical["lexical"][0] == "3"
    assert lexical["semantic"][0] == "0"
    every = stage_rows("all")
    # sentences, supported passed "of" supported, unsupported dropped "of" unsupported
    # The added clause is dropped by the claim checks, before the semantic stage.
    assert every["lexical"] == ["2", "1", "of", "1", "1", "of", "1"]
    assert every["semantic"] == ["1", "1", "of", "1", "0", "of", "0"]


def test_stored_chunk_terms_give_the_verdicts_computing_them_gives(
    stage: SemanticStage, minilm: MiniLMEmbedder
) -> None:
    """The request side reads the blocks' keys, words and window keys from the stored
    features (computed at ingest) instead of lemmatising the blocks: same verdicts, scores."""
    vectors = memory_vectors(BLOCKS, minilm)
    stored = [compute(block, semantic=True) for block in BLOCKS]
    for raw in GREY:
        text, citations = extract(raw)
        plain, ctx = GateContext(BLOCKS), GateContext(BLOCKS, features=stored)
        expected = stage.judge(text, plain.check(text, citations), plain, vectors)
        assert stage.judge(text, ctx.check(text, citations), ctx, vectors) == expected, raw


def _signals(stage: SemanticStage, sentence: str, blocks: list[str]) -> Features:
    text, citations = extract(sentence)
    ctx = GateContext(blocks)
    lexical = ctx.overlap(text, citations)
    assert lexical.grey, sentence
    vectors = memory_vectors(blocks, stage.encoder)
    embedded, (pieces,) = stage.sentence_encoder.embed_tokens([text])
    return features(text, lexical, ctx, vectors, embedded[0], stage.word_vectors, pieces)


NAMED = "Manufacturing faults are covered by the guarantee for two years, as Samsung promises [1]."


def test_a_name_no_issued_block_has_is_a_foreign_name(stage: SemanticStage) -> None:
    alone = _signals(stage, NAMED, BLOCKS)
    assert alone.foreign_name > 0.3
    # Named in a block the sentence does not cite: the request's context has it.
    issued = _signals(stage, NAMED, [*BLOCKS, "Samsung makes phones and televisions."])
    assert issued.foreign_name == 0.0
    assert probability(alone) < probability(issued)
    assert _signals(stage, PARAPHRASE, BLOCKS).foreign_name == 0.0


def test_the_model_is_the_one_for_the_evidence_the_match_rests_on(stage: SemanticStage) -> None:
    # Block 1 has three sentences; the paraphrase rests on its first alone: one window.
    one = _signals(stage, PARAPHRASE, BLOCKS)
    assert one.sentences == 3
    assert one.window_alignment > 0.0
    assert one.alignment - one.window_alignment <= ONE_WINDOW_GAP
    assert not several(one)
    assert probability(one) == probability(one, COEFFICIENTS, INTERCEPT)
    # Drawn from two blocks, which no window of one or two adjacent sentences holds together.
    both = _signals(stage, SPREAD, BLOCKS)
    assert both.alignment - both.window_alignment > ONE_WINDOW_GAP
    assert several(both)
    assert probability(both) == probability(both, MULTI_COEFFICIENTS, MULTI_INTERCEPT)
    # One sentence is one window; without an alignment the sentence count decides.
    assert not several(replace(both, sentences=1))
    assert several(replace(one, alignment=0.0, window_alignment=0.0))
    assert probability(one) != probability(one, multi=True)


SPREAD = "The guarantee lasts two years and money comes back within a month of cancelling [1][2]."


def test_a_sentence_in_the_writers_own_voice_is_dropped_before_the_models(
    stage: SemanticStage,
) -> None:
    own = "I think " + PARAPHRASE[0].lower() + PARAPHRASE[1:]
    # The lexical stage drops it (gate/voice.py), final: no model is asked.
    verdict = judge(Stages(stage), own)
    assert (verdict.ok, verdict.reason, verdict.stage) == (False, "claim_mismatch", "lexical")
    assert "first person" in verdict.detail
    assert not verdict.grey
    # A cited block that speaks in the first person itself leaves the sentence to the models.
    quoted = ['"I stand by it," the maker says. ' + BLOCKS[0], *BLOCKS[1:]]
    verdict = judge(Stages(stage), own, quoted)
    assert "first person" not in verdict.detail
    assert "p" in verdict.scores or "p_max" in verdict.scores


@pytest.mark.parametrize(
    "inserted",
    ["été 日本", "sûreté naïve", "東京 大阪"],
)
def test_words_the_word_pieces_spell_otherwise_still_count_as_unsupported(
    stage: SemanticStage, inserted: str
) -> None:
    # MiniLM's tokenizer strips accents and splits CJK into characters, so such a word is not
    # found under its own spelling among the aligned words; it must not count as matched.
    sentence = f"Refunds are issued {inserted} within 30 days of a cancellation request [2]."
    lexical = judge(Stages(), sentence)
    assert (lexical.ok, lexical.grey) == (False, True)
    verdict = judge(Stages(stage), sentence)
    assert verdict.scores["missing_worst"] > 0.3
    assert (verdict.ok, verdict.stage) == (False, "semantic")
