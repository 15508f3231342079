"""The red team's fifth round (model/redteam_shifts.py) as transformations, on a block of another
domain than the fixtures: each family writes its false edit of the block's own sentence, and
its control recorded true."""

from __future__ import annotations

import random

import pytest

from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam import Scene
from stream_rag.model.redteam_shifts import SHIFTS

FERRY = (
    "The first ferry leaves at 6 am and tickets must be bought online. "
    "Bikes are carried free if there is space. Refunds are paid within 5 working days. "
    "Crossings take 40 to 50 minutes."
)


def options(family: str, sentence: str) -> list[tuple[str, str, bool]]:
    scene = Scene(1, sentence, block_sentences(FERRY), {1: FERRY}, random.Random(0))
    return [(o.variant, o.text, o.false) for o in SHIFTS[family](scene)]


@pytest.mark.parametrize(
    ("family", "sentence", "false", "control"),
    [
        (
            "comparative",
            "Refunds are paid within 5 working days.",
            "Refunds are paid within 5 working days earlier.",
            "Also, refunds are paid within 5 working days.",
        ),
    ],
)
def test_a_family_writes_its_edit_and_its_control(
    family: str, sentence: str, false: str, control: str
) -> None:
    made = options(family, sentence)
    assert (false, True) in [(text, f) for _, text, f in made], made
    assert (control, False) in [(text, f) for _, text, f in made], made


def test_a_word_of_order_is_put_in_the_place_of_its_opposite() -> None:
    made = options(
        "comparative", "The first ferry leaves at 6 am and tickets must be bought online."
    )
    assert (
        "order",
        "The last ferry leaves at 6 am and tickets must be bought online.",
        True,
    ) in made


@pytest.mark.parametrize("family", sorted(SHIFTS))
def test_a_sentence_without_the_structure_gets_no_edit(family: str) -> None:
    assert [o for o in options(family, "Tickets are sold here.") if o[2]] == []


def test_before_is_turned_to_after_and_a_comparison_said_from_its_other_side_is_a_control() -> None:
    made = options("comparative", "Express crossings cost more than night crossings.")
    assert ("Night crossings cost less than express crossings.", False) in [
        (text, f) for _, text, f in made
    ], made
    made = options("comparative", "Tickets are sold before boarding starts.")
    assert ("order", "Tickets are sold after boarding starts.", True) in made
