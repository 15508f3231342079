"""gate/daykinds.py: a count of days or hours of another kind ("7 calendar days" or "7 days"
where the statement says "7 working days", "3 business days" where it says "3 days") is
refused; "business" for "working", the number in words and the statement's own kind pass
(issue 27, the red team's fifth round)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.daykinds import day_kind, day_set
from stream_rag.model.redteam_units import unit_change

from .gating import assert_knob_judged, block_pairs, verdict

# Blocks of two domains, written for these tests.
BLOCKS = [
    "Permit applications are decided within 15 working days. Appeals must be lodged within "
    "28 days of the decision. The office answers emails within 2 business days.",
    "Lab results are posted within 3 to 5 business days. Samples are kept for 30 days. "
    "Urgent samples are processed within 48 working hours.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Permit applications are decided within 15 calendar days.", 1),
        ("Permit applications are decided within 15 days.", 1),
        ("Appeals must be lodged within 28 working days of the decision.", 1),
        ("The office answers emails within 2 calendar days.", 1),
        ("Lab results are posted within 3 to 5 days.", 2),
        ("Samples are kept for 30 business days.", 2),
        ("Urgent samples are processed within 48 hours.", 2),
    ],
)
def test_a_count_of_another_kind_is_refused(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Permit applications are decided within 15 business days.", 1),
        ("Appeals must be lodged within 28 calendar days of the decision.", 1),
        ("The office answers emails within two working days.", 1),
        ("Lab results are posted within 3 to 5 working days.", 2),
        ("Samples are kept for 30 days.", 2),
    ],
)
def test_the_statements_own_kind_passes(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert ok or why.startswith("overlap"), why  # grey: the semantic stage decides
    assert day_kind(sentence, [BLOCKS[block - 1]]) == ""


def test_another_statements_kind_vouches_for_nothing() -> None:
    blocks = ["Refunds take 10 working days. Exchanges take 10 days."]
    assert day_kind("Exchanges take 10 working days.", blocks)
    assert day_kind("Refunds take 10 working days.", blocks) == ""


PAIRS = block_pairs(BLOCKS)


@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**16))
def test_the_knobs_edits_are_refused_and_its_controls_pass(
    pair: tuple[int, str], seed: int
) -> None:
    assert_knob_judged(BLOCKS, unit_change, pair, seed)


# A bakery and a ferry: the days a statement holds on narrowed, widened or changed.
WEEKLY = [
    "The bakery sells fresh bread every day from 7 am. Cakes are baked on weekdays only. "
    "The bakery is open daily except at weekends in August.",
    "The harbour ferry runs on weekdays and at weekends. The night ferry runs at weekends. "
    "The ticket desk opens at 6 am on weekdays and is closed at weekends.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("The bakery sells fresh bread on weekdays from 7 am.", 1),
        ("The bakery sells fresh bread at weekends from 7 am.", 1),
        ("Cakes are baked every day.", 1),
        ("Cakes are baked at weekends only.", 1),
        ("The bakery is open at weekends in August.", 1),
        ("The night ferry runs on weekdays.", 2),
        ("The night ferry runs every day.", 2),
        ("The ticket desk opens at 6 am on weekdays and is closed every day.", 2),
    ],
)
def test_other_days_are_refused(sentence: str, block: int) -> None:
    # the first, the second and the fifth were shown on 422bf4b (overlap 1.00: no rule read
    # which days)
    assert day_set(sentence, [WEEKLY[block - 1]]), sentence
    ok, why = verdict(WEEKLY, sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("The bakery sells fresh bread every day from 7 am.", 1),
        ("The bakery sells fresh bread daily from 7 am.", 1),
        ("Cakes are baked on weekdays only.", 1),
        ("Cakes are baked Monday to Friday only.", 1),
        ("The bakery is open on weekdays in August.", 1),
        ("The harbour ferry runs every day.", 2),
        ("The night ferry runs at the weekend.", 2),
        ("The ticket desk opens at 6 am on weekdays.", 2),
    ],
)
def test_the_statements_own_days_pass(sentence: str, block: int) -> None:
    assert day_set(sentence, [WEEKLY[block - 1]]) == "", sentence


def test_a_count_of_working_days_is_no_set_of_days() -> None:
    # "5 working days" is a count (day_kind's), not the days something holds on
    assert day_set("Refunds take 5 working days.", ["Refunds are paid every day."]) == ""


@given(pair=st.sampled_from(block_pairs(WEEKLY)), seed=st.integers(0, 2**16))
def test_the_knobs_day_sets_are_refused(pair: tuple[int, str], seed: int) -> None:
    assert_knob_judged(WEEKLY, unit_change, pair, seed)


def test_each_part_of_a_joined_sentence_is_held_to_its_own_statement() -> None:
    # two statements joined by ", and" (the probe's causal_link control) were refused on
    # 6cd4798: the second part's days were held to the first part's statement
    joined = (
        "The bakery sells fresh bread every day from 7 am, and cakes are baked on weekdays only."
    )
    assert day_set(joined, [WEEKLY[0]]) == ""
    wrong = (
        "The bakery sells fresh bread every day from 7 am, and cakes are baked at weekends only."
    )
    assert day_set(wrong, [WEEKLY[0]])
