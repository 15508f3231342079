"""Tests for the gate's lexical check (gate/lexical.py): reasons, substance, blocks; numbers and
CJK text are in test_lexical_numbers.py."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.citations import Citation
from stream_rag.gate.lexical import (
    DEFAULT_THRESHOLD,
    IDF_MIN_BLOCKS,
    GateContext,
    Verdict,
    check_sentence,
)

REFUNDS = (
    "Annual plans can be refunded within 30 days of purchase. Monthly plans are not refundable. "
    "Refunds are paid to the original card and usually arrive in five business days."
)
SHIPPING = (
    "Standard shipping costs $8 per order and takes 3 to 7 business days. Orders over "
    "50 dollars ship free. The warehouse dispatches parcels at 9:00 am on weekdays."
)
RELEASE = (
    "Version 2.4 was released on 2024-05-01 and raised the storage quota to 1.5 million "
    "files. The upgrade costs 3.50 euros per seat and cut sync errors by 40 percent."
)
BLOCKS = (REFUNDS, SHIPPING, RELEASE)
IDS = ("doc-refunds", "doc-shipping", "doc-release")


@pytest.fixture
def ctx() -> GateContext:
    return GateContext(BLOCKS, IDS)


def check(ctx: GateContext, sentence: str, *cited: int) -> Verdict:
    return ctx.check(sentence, [Citation(n) for n in cited])


# --- reasons, in the order they are checked -------------------------------------------------


@pytest.mark.parametrize("sentence", ["", "   ", "Yes.", "Oh, okay!", "It is what it is.", "..."])
def test_a_sentence_without_content_is_empty_and_fails(ctx: GateContext, sentence: str) -> None:
    verdict = check(ctx, sentence, 1)
    assert verdict == Verdict(False, "empty", (1,), 0.0, "no content terms to verify")


def test_empty_is_judged_before_citations(ctx: GateContext) -> None:
    assert check(ctx, "Yes.").reason == "empty"
    assert check(ctx, "Yes.", 9).reason == "empty"


def test_a_sentence_with_only_a_number_is_not_empty(ctx: GateContext) -> None:
    assert check(ctx, "30.", 1).ok
    assert check(ctx, "31.", 1).reason == "number_mismatch"


def test_a_sentence_without_citation_is_uncited(ctx: GateContext) -> None:
    verdict = check(ctx, "Annual plans can be refunded within 30 days of purchase.")
    assert verdict == Verdict(False, "uncited", (), 0.0, "cites no block")


def test_a_citation_past_the_issued_blocks_is_unknown(ctx: GateContext) -> None:
    verdict = check(ctx, "Annual plans can be refunded within 30 days.", 1, 4)
    assert verdict.reason == "unknown_citation"
    assert not verdict.ok
    assert verdict.cited == (1, 4)
    assert verdict.score == 0.0
    assert verdict.detail == "cites [4] but only [1]..[3] were issued"


def test_citation_zero_is_unknown(ctx: GateContext) -> None:
    assert check(ctx, "Annual plans can be refunded.", 0).detail == (
        "cites [0] but only [1]..[3] were issued"
    )


def test_no_blocks_issued() -> None:
    verdict = check(GateContext([]), "Annual plans can be refunded.", 1)
    assert (verdict.reason, verdict.detail) == (
        "unknown_citation",
        "cites [1] but no block was issued",
    )


def test_a_claimed_id_that_is_not_the_blocks_document_is_a_mismatch(ctx: GateContext) -> None:
    raw = "Annual plans can be refunded within 30 days (source#1: Refunds, ID: 'doc-shipping')."
    verdict = check_sentence(raw, ctx)
    assert verdict.reason == "id_mismatch"
    assert verdict.cited == (1,)
    assert verdict.detail == "[1] is 'doc-refunds', not 'doc-shipping'"


def test_a_claimed_id_that_matches_passes(ctx: GateContext) -> None:
    raw = "Annual plans can be refunded within 30 days (source#1: Refunds, ID: 'doc-refunds')."
    assert check_sentence(raw, ctx).ok


def test_claimed_ids_are_not_checked_without_doc_ids() -> None:
    ctx = GateContext(BLOCKS)
    verdict = ctx.check("Annual plans can be refunded.", [Citation(1, "anything")])
    assert verdict.ok


def test_doc_ids_must_match_the_blocks() -> None:
    with pytest.raises(ValueError, match="3 blocks but 2 document ids"):
        GateContext(BLOCKS, IDS[:2])


def test_unknown_citation_is_judged_before_id_mismatch(ctx: GateContext) -> None:
    verdict = ctx.check("Annual plans can be refunded.", [Citation(1, "nope"), Citation(7)])
    assert verdict.reason == "unknown_citation"


def test_a_fabricated_claim_with_the_right_citation_fails(ctx: GateContext) -> None:
    # (Words of excess, "free" or "lifetime", fail as such: gate/binding.py.)
    verdict = check(ctx, "Annual plans include bonus upgrades and priority support.", 1)
    assert verdict.reason == "low_overlap"
    assert not verdict.ok
    assert 0.0 < verdict.score < DEFAULT_THRESHOLD
    assert verdict.detail.startswith(f"overlap {verdict.score:.2f} < {DEFAULT_THRESHOLD:.2f}")
    assert "'bonus'" in verdict.detail


def test_a_true_claim_cited_to_the_wrong_block_fails(ctx: GateContext) -> None:
    assert check(ctx, "Monthly plans are not refundable.", 1).ok
    assert check(ctx, "Monthly plans are not refundable.", 2).reason == "low_overlap"


def test_a_wrong_number_is_a_number_mismatch(ctx: GateContext) -> None:
    verdict = check(ctx, "Annual plans can be refunded within 45 days of purchase.", 1)
    assert verdict == Verdict(False, "number_mismatch", (1,), 1.0, "'45 days' is not in [1]")


def test_ok_verdict(ctx: GateContext) -> None:
    verdict = check(ctx, "Annual plans can be refunded within 30 days of purchase.", 1)
    assert verdict == Verdict(True, "ok", (1,), 1.0, "overlap 1.00")


def test_verdict_is_frozen(ctx: GateContext) -> None:
    verdict = check(ctx, "Monthly plans are not refundable.", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.ok = False  # type: ignore[misc]


# --- substance ------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [1, 2, 3])
def test_every_sentence_copied_verbatim_from_a_block_passes(ctx: GateContext, block: int) -> None:
    for sentence in BLOCKS[block - 1].split(". "):
        verdict = check(ctx, sentence, block)
        assert verdict.ok, (sentence, verdict)
        assert verdict.score == 1.0


@given(st.sampled_from(range(len(BLOCKS))), st.integers(0, 40), st.integers(1, 40))
def test_any_span_of_a_block_passes_against_it(block: int, start: int, length: int) -> None:
    words = BLOCKS[block].split()
    span = " ".join(words[start : start + length])
    verdict = GateContext(BLOCKS).check(span, [Citation(block + 1)])
    end = start + length
    ranges = [i for i in range(len(words) - 2) if words[i + 1] == "to" and words[i][0].isdigit()]
    if 0 < start <= len(words) and words[start - 1] in ("not", "no", "never"):
        # "refundable." cut from "are not refundable." states what the block negates.
        assert verdict.ok or "negates" in verdict.detail, (span, verdict)
    elif any((start <= i < end) != (start <= i + 2 < end) for i in ranges):
        # "takes 3" cut from "takes 3 to 7 business days" states one end as the whole.
        assert verdict.ok or "one end of the range" in verdict.detail, (span, verdict)
    else:
        assert verdict.ok or verdict.reason == "empty", (span, verdict)


def test_one_new_claim_term_costs_score(ctx: GateContext) -> None:
    copied = "Refunds are paid to the original card and usually arrive in five business days"
    assert check(ctx, copied, 1).score == 1.0
    added = check(ctx, copied + " by courier", 1)
    assert added.score < 0.9
    assert "'courier'" in added.detail or added.ok


def test_two_new_claim_terms_in_a_short_sentence_fail(ctx: GateContext) -> None:
    assert not check(ctx, "Refunds arrive by registered courier.", 1).ok


def test_many_new_terms_fail_a_long_sentence_whatever_its_share() -> None:
    block = " ".join(f"word{c}alpha" for c in "abcdefghijklmnopqrst")
    sentence = " ".join(f"word{c}alpha" for c in "abcdefghijklmnopqrst") + " xenon yttrium zinc"
    strict = GateContext([block]).check(sentence, [Citation(1)])
    assert strict.reason == "low_overlap"
    assert strict.score >= DEFAULT_THRESHOLD
    assert strict.detail.startswith("unsupported weight 3.0 >= 3.0")
    lenient = GateContext([block], max_unsupported=None).check(sentence, [Citation(1)])
    assert lenient.ok


def test_the_threshold_is_a_parameter() -> None:
    sentence = "Refunds are paid to the original card by courier."
    assert not GateContext(BLOCKS, threshold=0.99).check(sentence, [Citation(1)]).ok
    assert GateContext(BLOCKS, threshold=0.5).check(sentence, [Citation(1)]).ok


def test_inflections_meet(ctx: GateContext) -> None:
    assert check(ctx, "Annual plans are refundable and refunds are paid to cards.", 1).ok
    assert check(ctx, "The warehouse dispatched parcels at 9:00 am on weekdays.", 2).ok


def test_negation_must_be_in_the_statement_the_sentence_matches(ctx: GateContext) -> None:
    assert check(ctx, "Monthly plans are not refundable.", 1).ok
    verdict = check(ctx, "Standard shipping does not cost $8 per order.", 2)
    assert verdict.reason == "low_overlap"
    assert verdict.score >= DEFAULT_THRESHOLD
    assert verdict.detail == "it negates, [2] has no negation; not in [2]: 'not'"
    # Block [1] negates something else ("monthly plans are not refundable"): the statement
    # this sentence matches does not negate.
    verdict = check(ctx, "Annual plans can't be refunded within 30 days of purchase.", 1)
    assert verdict.reason == "low_overlap"
    assert not verdict.grey
    assert verdict.detail == "it negates, the statements it matches do not"


def test_a_sentence_stating_what_its_statement_negates_fails(ctx: GateContext) -> None:
    verdict = check(ctx, "Monthly plans are refundable.", 1)
    assert verdict.reason == "low_overlap"
    assert verdict.score == 1.0
    assert not verdict.grey  # a flipped polarity is final, not a question for a later stage
    assert verdict.detail == "a statement it matches negates 'refundabl', the sentence does not"
    covered = GateContext(["Screen damage is not covered by the warranty. Batteries are."])
    assert not covered.check("Screen damage is covered by the warranty.", [Citation(1)]).ok
    assert covered.check("Screen damage is not covered by the warranty.", [Citation(1)]).ok
    assert covered.check("The warranty does not cover screen damage.", [Citation(1)]).ok


def test_a_negation_elsewhere_in_the_block_does_not_flip_a_sentence(ctx: GateContext) -> None:
    assert check(ctx, "Annual plans can be refunded within 30 days of purchase.", 1).ok
    tour = GateContext(["It was not only the band's longest tour, but one of the longest in rock."])
    assert tour.check("It was one of the longest tours in rock.", [Citation(1)]).ok


def test_interjections_are_not_claims(ctx: GateContext) -> None:
    assert check(ctx, "Yes, monthly plans are not refundable.", 1).score == 1.0


# --- one, two and many blocks ---------------------------------------------------------------


def test_one_block() -> None:
    ctx = GateContext([REFUNDS], ["doc-refunds"])
    assert ctx.dropped == frozenset()
    assert check(ctx, "Annual plans can be refunded within 30 days.", 1).ok
    assert check(ctx, "Annual plans include bonus upgrades.", 1).reason == "low_overlap"
    assert check(ctx, "Annual plans can be refunded.", 2).reason == "unknown_citation"


def test_two_blocks_drop_nothing_even_when_they_share_terms() -> None:
    ctx = GateContext([REFUNDS, "Refunds for annual plans need a receipt."])
    assert ctx.dropped == frozenset()
    assert check(ctx, "Annual plans can be refunded within 30 days.", 1).ok
    assert check(ctx, "Annual plans can be refunded within 30 days.", 2).reason in (
        "low_overlap",
        "number_mismatch",
    )


def test_a_sentence_drawing_on_two_blocks_must_cite_both() -> None:
    ctx = GateContext([REFUNDS, SHIPPING])
    sentence = "Refunds arrive in five business days and standard shipping costs $8."
    assert check(ctx, sentence, 1, 2).ok
    assert not check(ctx, sentence, 1).ok
    assert check_sentence(sentence + " [1-2]", ctx).ok
    assert check_sentence(sentence + " [1][2]", ctx).cited == (1, 2)


def test_terms_in_most_of_three_or_more_blocks_are_dropped() -> None:
    blocks = [
        "The refund policy covers annual plans.",
        "The refund policy excludes monthly plans.",
        "The refund policy covers hardware bought in stores.",
        "Gift cards never expire.",
    ]
    ctx = GateContext(blocks)
    assert {"refund", "policy"} <= ctx.dropped
    assert "plan" not in ctx.dropped  # 2 of 4 is not more than half
    # The shared words are no evidence: only "hardware" is, and [2] does not have it.
    verdict = check(ctx, "The refund policy covers hardware.", 2)
    assert verdict.reason == "low_overlap"
    assert verdict.score == 0.0
    assert check(ctx, "The refund policy covers hardware.", 3).ok


def test_a_sentence_of_only_shared_terms_falls_back_to_a_plain_share() -> None:
    blocks = ["refund policy one", "refund policy two", "refund policy three"]
    ctx = GateContext(blocks)
    assert check(ctx, "Refund policy.", 1).score == 1.0


def test_idf_counts_at_least_the_minimum_blocks() -> None:
    one = GateContext([REFUNDS])
    eight = GateContext([REFUNDS] + [f"Unrelated filler text number {i}." for i in range(7)])
    assert IDF_MIN_BLOCKS == 8
    sentence = "Annual plans can be refunded by courier within 30 days."
    assert check(one, sentence, 1).score == pytest.approx(check(eight, sentence, 1).score)
    assert one.unseen_weight == pytest.approx(eight.unseen_weight)


def test_note_is_no_negation() -> None:
    # "note", "noted" stemmed to "not", the negation's pseudo-term: "Note that ..." was refused
    # as negating, and a block's "Please note" vouched for a negation.
    ctx = GateContext(("The lighthouse has a spiral staircase of 120 steps. It opens at 10 am.",))
    assert check(ctx, "Note that the lighthouse has a spiral staircase of 120 steps.", 1).ok
    noted = GateContext(("Please note that kayaks can be hired until 6 pm at the boathouse.",))
    verdict = check(noted, "Kayaks cannot be hired until 6 pm at the boathouse.", 1)
    assert not verdict.ok
    assert "negat" in verdict.detail
