"""gate/conditions.py: a condition turned round ("unless" or "even if" where the statement says
"if", "if" where it says "unless", "including" where it says "except") is refused; the
statement's own connective, "provided that" and a condition moved to the front pass (issue 27,
the red team's fifth round)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.conditions import conditioned
from stream_rag.model.redteam_shifts import condition_flip

from .gating import assert_knob_judged, block_pairs, verdict

# Blocks of two domains, written for these tests.
BLOCKS = [
    "The pool is open every day except on public holidays. Refunds are given if the ticket is "
    "unused. Lockers are free unless you lose the key.",
    "Orders ship the same day when they are placed before noon. Returns are accepted if the "
    "seal is unbroken. Delivery is free unless the parcel weighs over 20 kg.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("The pool is open every day including on public holidays.", 1),
        ("Refunds are given unless the ticket is unused.", 1),
        ("Refunds are given even if the ticket is unused.", 1),
        ("Lockers are free if you lose the key.", 1),
        ("Orders ship the same day unless they are placed before noon.", 2),
        ("Returns are accepted regardless of whether the seal is unbroken.", 2),
        ("Delivery is free if the parcel weighs over 20 kg.", 2),
    ],
)
def test_a_condition_turned_round_is_refused(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Refunds are given provided that the ticket is unused.", 1),
        ("If the ticket is unused, refunds are given.", 1),
        ("Lockers are free except if you lose the key.", 1),
        ("Unless you lose the key, lockers are free.", 1),
        ("Delivery is free unless the parcel weighs over 20 kg.", 2),
    ],
)
def test_the_statements_own_condition_passes(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert ok or why.startswith("overlap"), why  # grey: the semantic stage decides
    assert conditioned(sentence, [BLOCKS[block - 1]]) == ""


def test_another_statements_unless_vouches_for_nothing() -> None:
    assert conditioned("Refunds are given unless the ticket is unused.", BLOCKS[:1])


PAIRS = block_pairs(BLOCKS)


@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**16))
def test_the_knobs_edits_are_refused_and_its_controls_pass(
    pair: tuple[int, str], seed: int
) -> None:
    assert_knob_judged(BLOCKS, condition_flip, pair, seed)
