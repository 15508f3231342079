"""gate/daykinds.py: a count of days or hours of another kind ("7 calendar days" or "7 days"
where the statement says "7 working days", "3 business days" where it says "3 days") is
refused; "business" for "working", the number in words and the statement's own kind pass
(issue 27, the red team's fifth round)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.daykinds import day_kind
from stream_rag.model.redteam_shifts import unit_change

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
