"""A frame that adds nothing to the claim it holds (gate/frames.py): discourse markers and "It is
not true that" over a plainly negated clause, on a library's and a bakery's blocks."""

from __future__ import annotations

import pytest

from stream_rag.gate.claimcheck import Clause
from stream_rag.gate.frames import unframed
from tests.gating import verdict

LIBRARY = [
    "Members can borrow up to 12 books at a time. Loans last three weeks and can be renewed "
    "twice online. Overdue books cost 20 cents a day.",
    "The reading room is closed on Sundays. Children under 8 must be accompanied by an adult.",
]
BAKERY = [
    "Sourdough loaves are baked every morning at 6:00. Rye bread is not sold on Mondays. "
    "Orders for cakes cannot be changed less than 48 hours before collection.",
]


@pytest.mark.parametrize(
    "sentence",
    [
        "Note that loans last three weeks and can be renewed twice online.",
        "Please note that overdue books cost 20 cents a day.",
        "Keep in mind that the reading room is closed on Sundays.",
        "Bear in mind that children under 8 must be accompanied by an adult.",
        "Remember: members can borrow up to 12 books at a time.",
        "In short, the reading room is closed on Sundays.",
        "In other words, overdue books cost 20 cents a day.",
    ],
)
def test_a_discourse_marker_before_a_true_claim_passes(sentence: str) -> None:
    ok, why = verdict(LIBRARY, sentence, 1 if "book" in sentence or "loan" in sentence else 2)
    assert ok, why


@pytest.mark.parametrize(
    "sentence",
    [
        "Note that loans last four weeks and can be renewed twice online.",
        "Keep in mind that the reading room is open on Sundays.",
        "In short, children under 8 may be accompanied by an adult.",
        "Remember: members can borrow unlimited books at a time.",
    ],
)
def test_a_discourse_marker_before_a_false_claim_fails(sentence: str) -> None:
    block = 1 if "book" in sentence or "loan" in sentence else 2
    assert not verdict(LIBRARY, sentence, block)[0]


@pytest.mark.parametrize(
    "sentence",
    [
        "It is not true that rye bread is sold on Mondays.",
        "It is not the case that orders for cakes can be changed less than 48 hours before "
        "collection.",
        "It is not true that sourdough loaves are not baked at 6:00.",
    ],
)
def test_not_true_that_over_the_clause_of_other_polarity_passes(sentence: str) -> None:
    ok, why = verdict(BAKERY, sentence, 1)
    assert ok, why


@pytest.mark.parametrize(
    "sentence",
    [
        "It is not true that rye bread is not sold on Mondays.",
        "It is not the case that sourdough loaves are baked every morning at 6:00.",
        "It is not true that orders for cakes cannot be changed less than 48 hours before "
        "collection.",
    ],
)
def test_not_true_that_over_the_clause_as_said_fails(sentence: str) -> None:
    assert not verdict(BAKERY, sentence, 1)[0]


@pytest.mark.parametrize(
    "sentence",
    [
        # Scope: "not (A and not B)" is no "A and B"; "not never" is "sometimes"; "not all".
        "It is not true that rye bread is baked and not sold on Mondays.",
        "It is not true that rye bread is never sold on Mondays.",
        "It is not true that all cakes are baked at 6:00.",
        "It is not true that loaves which are baked at 6:00 are sold on Mondays.",
        "In short supply, loaves are baked every morning.",
        "Note the fee.",
    ],
)
def test_what_is_no_plain_frame_is_left_as_written(sentence: str) -> None:
    units = (Clause(sentence, (1,)),)
    assert unframed(sentence, units) == (sentence, units)


def test_the_first_clause_loses_the_frame_and_keeps_its_citations() -> None:
    units = (Clause("Note that loans last three weeks", (1,)), Clause("fines are low", (2,)))
    text, out = unframed("Note that loans last three weeks, and fines are low.", units)
    assert text == "Loans last three weeks, and fines are low."
    assert out == (Clause("Loans last three weeks", (1,)), units[1])


@pytest.mark.parametrize(
    ("sentence", "blocks", "block"),
    [
        # A spoken opener with its comma says nothing ("Well," as real models open answers).
        ("Well, sourdough loaves are baked at 6:00.", BAKERY, 1),
        ("Well, loans last three weeks.", LIBRARY, 1),
        ("Of course, loans can be renewed twice online.", LIBRARY, 1),
        ("Actually, the reading room is closed on Sundays.", LIBRARY, 2),
    ],
)
def test_a_spoken_opener_before_a_true_claim_passes(
    sentence: str, blocks: list[str], block: int
) -> None:
    ok, why = verdict(blocks, sentence, block)
    assert ok, why


@pytest.mark.parametrize(
    ("sentence", "blocks", "block"),
    [
        ("Of course, sourdough loaves are baked at 7:00.", BAKERY, 1),
        ("Well, loans last four weeks.", LIBRARY, 1),
        ("Actually, loans cannot be renewed.", LIBRARY, 1),
        ("Well, the reading room is open on Sundays.", LIBRARY, 2),
    ],
)
def test_a_spoken_opener_before_a_false_claim_fails(
    sentence: str, blocks: list[str], block: int
) -> None:
    assert not verdict(blocks, sentence, block)[0]
