"""Gate contexts kept by their blocks (answer/contexts.py), the verdicts a context keeps, and
the pre-generation checks' outcome kept by question and blocks."""

from __future__ import annotations

from stream_rag.answer.contexts import ContextCache, build_context
from stream_rag.answer.pipeline import Answerer
from stream_rag.answer.results import Options
from stream_rag.config import Settings
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


POLICY = "Annual plans can be refunded within 30 days of purchase. Refunds go to the card."
FAQ = "How do refunds work? Annual plans can be refunded within 14 days of purchase."
REFUND_Q = "How long is the refund window for annual plans?"


def refund_blocks(
    name: str = "name", dense: float = 0.8, faq_dated: str | None = None
) -> list[Block]:
    return [
        Block(n, f"{d}:v1:0", d, 1, "", name, "f.md", 0, len(t), t, {"dense": dense}, dated=dated)
        for n, (d, t, dated) in enumerate((("policy", POLICY, None), ("faq", FAQ, faq_dated)), 1)
    ]


def answerer(**settings: object) -> Answerer:
    # precheck reads only the settings and the detector; no retrieval or model call.
    return Answerer(None, None, Settings(**settings))  # type: ignore[arg-type]


def test_the_checks_outcome_is_kept_for_the_same_question_and_blocks() -> None:
    kept = answerer()
    first = kept.precheck(REFUND_Q, refund_blocks(), Options())
    assert first is not None
    assert first.reason == "conflicting_sources"
    assert kept.precheck(REFUND_Q, refund_blocks(), Options()) is first
    # What a fresh answerer says, for anything that changes the question, blocks or options.
    for question, blocks, options in [
        (REFUND_Q, refund_blocks(), Options()),
        (REFUND_Q, refund_blocks(name="other"), Options()),  # shown in the details
        (REFUND_Q, refund_blocks(faq_dated="2020-01-01"), Options()),  # names the older side
        (REFUND_Q, refund_blocks(), Options(check_conflicts=False)),
        (REFUND_Q, refund_blocks(dense=0.0), Options(min_evidence=0.6)),
        (REFUND_Q, refund_blocks(dense=0.9), Options(min_evidence=0.6)),
        ("How do refunds work?", refund_blocks(), Options()),
    ]:
        assert kept.precheck(question, blocks, options) == answerer().precheck(
            question, blocks, options
        )
    assert kept.prechecks.hits == 2  # the repeat above and the first of the loop
    low = kept.precheck(REFUND_Q, refund_blocks(dense=0.0), Options(min_evidence=0.6))
    assert low is not None
    assert low.reason == "low_evidence"
    assert kept.precheck(REFUND_Q, refund_blocks(dense=0.9), Options(min_evidence=0.6)) == first
