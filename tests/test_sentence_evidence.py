"""A customer telling their situation in their own words shares few terms with the block that
answers, and little with its averaged vector: one sentence of it saying what they ask is
evidence enough (`answer/evidence.py`, `sentence_evidence`); a question the blocks do not
answer is still refused as `low_evidence`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio

from stream_rag.answer.conflicts import LexicalConflictDetector
from stream_rag.answer.prechecks import refusal
from stream_rag.config import Settings
from stream_rag.embed.backends import Vectors
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.index.folders import ingest_paths
from stream_rag.model.extractive import SentenceVectors
from stream_rag.model.passages import block_sentences
from stream_rag.retrieve.hybrid import Block
from stream_rag.services import open_services

ROOMS = (
    "# Rooms and rates\n\n"
    "Hotel Seeblick has 24 rooms on three floors, each with a private bathroom and free Wi-Fi. "
    "The rates below are per room and night, breakfast included.\n\n"
    "Double room: Sleeps 2, Sunday to Thursday 129 euros, Friday and Saturday 149 euros.\n"
    "Family suite: Sleeps 4, Sunday to Thursday 219 euros, Friday and Saturday 239 euros.\n\n"
    # One entry: the entries' cosines (`entry_evidence`) are the block's own.
    "You can cancel free of charge up to 48 hours before the day you arrive. If you cancel "
    "later or do not come, we charge the first night."
)


def _block(text: str) -> Block:
    scores = {"dense": 0.2, "fused": 1.0}
    return Block(1, "c1", "d1", 1, "0" * 64, "rooms.md", "rooms.md", 0, len(text), text, scores)


def test_a_sentence_saying_what_was_asked_in_other_words_is_evidence(
    minilm: MiniLMEmbedder,
) -> None:
    similarity = SentenceVectors(minilm)
    blocks = [_block(ROOMS)]
    question = "Something came up and we can't travel tomorrow. Will I get charged if I cancel now?"
    detector = LexicalConflictDetector()
    # Without the sentences' cosines, the few shared terms and the block's vector refuse it.
    weak = refusal(question, blocks, 0.35, False, detector=detector)
    assert weak is not None
    assert weak.reason == "low_evidence"
    assert refusal(question, blocks, 0.35, False, detector=detector, entries=similarity) is None
    off = refusal(
        "How do I change a flat tyre on my car?",
        blocks,
        0.35,
        False,
        detector=detector,
        entries=similarity,
    )
    assert off is not None
    assert off.reason == "low_evidence"


class CountingEmbedder:
    """The local MiniLM, recording every text it is asked to embed."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded.extend(texts)
        return self.inner.embed(texts)


def test_the_sentences_compared_with_the_question_were_embedded_at_indexing(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """`sentence_evidence` reads the vectors the local generator's ranking warmed as the chunks
    were indexed: a cold check embedded every sentence of the top blocks in the answer's worker
    thread (review finding), and compared an int8 question vector with fp32 sentences."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "rooms.md").write_text(ROOMS, encoding="utf-8")
    settings = Settings(data_dir=tmp_path / "data")
    counting = CountingEmbedder(minilm)
    services = open_services(settings, embedder=counting)
    question = "Something came up and we can't travel tomorrow. Will I get charged if I cancel now?"
    try:
        ingest_paths(services.store, [kb], settings, indexer=services.indexer, quiet=True)
        counting.embedded.clear()
        result = anyio.run(services.answerer.answer, question)
    finally:
        services.close()
    assert result.refusal is None, result.refusal
    sentences = set(block_sentences(ROOMS))
    assert not sentences & set(counting.embedded), counting.embedded
