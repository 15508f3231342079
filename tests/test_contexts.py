"""Gate contexts kept by their blocks (answer/contexts.py) and the verdicts a context keeps."""

from __future__ import annotations

from stream_rag.answer.contexts import ContextCache, build_context
from stream_rag.gate.citations import extract
from stream_rag.retrieve.hybrid import Block

TEXTS = (
    "Annual plans can be refunded within 30 days of purchase.",
    "The Pro plan costs $8 per month, or $80 per year.",
    "Support answers email on weekdays from 9:00 to 18:00 CET.",
)


def blocks(texts: tuple[str, ...] = TEXTS, doc: str = "doc") -> list[Block]:
    return [
        Block(n, f"{doc}{n}:v1:0", f"{doc}{n}", 1, "", "name", "f.md", 0, len(t), t, {})
        for n, t in enumerate(texts, 1)
    ]


def test_the_same_blocks_get_the_same_context_and_anything_else_a_new_one() -> None:
    cache = ContextCache(capacity=2)
    first = cache.get(blocks(), 0.5)
    assert cache.get(blocks(), 0.5) is first  # equal blocks of another request
    assert cache.get(blocks(), 0.6) is not first  # another threshold
    assert cache.get(blocks(doc="other"), 0.5) is not first  # other documents
    edited = (TEXTS[0], TEXTS[1], "Support answers email at weekends.")
    assert cache.get(blocks(edited), 0.5).blocks[2] == edited[2]
    assert (cache.hits, cache.misses) == (1, 4)
    assert cache.get(blocks(), 0.5) is not first  # evicted: two contexts kept


def test_a_context_gives_a_sentence_the_verdict_a_new_context_gives() -> None:
    shared = build_context(blocks(), 0.5)
    sentences = [
        "Annual plans can be refunded within 30 days of purchase. [1]",
        "Annual plans can be refunded within 60 days of purchase. [1]",
        "The Pro plan costs $8 per month. [2]",
        "The Pro plan costs $8 per month. [3]",
        "Support answers email on weekdays. [4]",
    ]
    for _ in range(2):  # the second pass is answered from the context's verdicts
        for sentence in sentences:
            text, citations = extract(sentence)
            fresh = build_context(blocks(), 0.5).check(text, citations)
            assert shared.check(text, citations) == fresh
            assert shared.check(text, citations) is shared.check(text, citations)  # kept
    verdicts = [shared.check(*extract(s)) for s in sentences]
    assert [v.reason for v in verdicts] == [
        "ok",
        "number_mismatch",
        "ok",
        "low_overlap",
        "unknown_citation",
    ]
