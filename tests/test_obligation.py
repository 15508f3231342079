"""gate/obligation.py: a duty made advice or a choice ("should", "is recommended", "may" where
the statement says "must" or "is required") and an instruction made advice or optional ("It is
recommended that you ...", "You should ...", "Optionally, ...") are refused; the statement's own
modal, "have to" for "must", "Please ..." and "You can ..." of an instruction pass (issue 27,
the red team's fifth round)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.obligation import obliged
from stream_rag.model.redteam_shifts import obligation

from .gating import assert_knob_judged, block_pairs, verdict

# Blocks of two domains, written for these tests.
BLOCKS = [
    "Visitors must show a photo ID at the gate. Lock your bike in the racks by the entrance. "
    "A helmet is required on the climbing wall. Guests should arrive ten minutes early.",
    "Back up your files before the upgrade. Passwords must be changed every 90 days. "
    "Two-factor sign-in is mandatory for administrators.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Visitors should show a photo ID at the gate.", 1),
        ("Visitors may show a photo ID at the gate.", 1),
        ("A helmet is recommended on the climbing wall.", 1),
        ("A helmet is optional on the climbing wall.", 1),
        ("It is recommended that you lock your bike in the racks by the entrance.", 1),
        ("You should back up your files before the upgrade.", 2),
        ("Optionally, back up your files before the upgrade.", 2),
        ("Passwords should be changed every 90 days.", 2),
        ("Two-factor sign-in is recommended for administrators.", 2),
    ],
)
def test_a_duty_or_an_instruction_weakened_is_refused(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Visitors must show a photo ID at the gate.", 1),
        ("Visitors have to show a photo ID at the gate.", 1),
        ("Guests should arrive ten minutes early.", 1),
        ("Please lock your bike in the racks by the entrance.", 1),
        ("You can back up your files before the upgrade.", 2),
        ("Passwords must be changed every 90 days.", 2),
    ],
)
def test_the_statements_own_modal_passes(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert ok or why.startswith("overlap"), why  # grey: the semantic stage decides
    assert obliged(sentence, [BLOCKS[block - 1]]) == ""


PAIRS = block_pairs(BLOCKS)


@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**16))
def test_the_knobs_edits_are_refused_and_its_controls_pass(
    pair: tuple[int, str], seed: int
) -> None:
    assert_knob_judged(BLOCKS, obligation, pair, seed)
