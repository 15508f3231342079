"""A customer telling their situation in their own words shares few terms with the block that
answers, and little with its averaged vector: one sentence of it saying what they ask is
evidence enough (`answer/evidence.py`, `sentence_evidence`); a question the blocks do not
answer is still refused as `low_evidence`."""

from __future__ import annotations

from stream_rag.answer.conflicts import LexicalConflictDetector
from stream_rag.answer.prechecks import refusal
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.model.extractive import SentenceVectors
from stream_rag.retrieve.hybrid import Block

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
