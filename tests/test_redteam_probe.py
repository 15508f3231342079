"""The red team's third round (model/redteam_probe.py) as transformations, on blocks of
another domain than the fixtures: each family writes what it names from the block's own
sentences, recorded false; the list family's reordering is a control, recorded true."""

from __future__ import annotations

import random

import pytest

from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam import Scene
from stream_rag.model.redteam_probe import PROBE

FERRY = (
    "Foot passengers board through gate B. Cars are loaded two hours before departure. "
    "Bicycles travel free on weekday crossings. The morning ferry carries cars, vans and "
    "motorbikes. Cabins are available for overnight crossings."
)
OTHER = "The harbour office sells annual parking permits at the kiosk."


def options(family: str, sentence: str) -> list[tuple[str, str, bool]]:
    blocks = {1: FERRY, 2: OTHER}
    scene = Scene(1, sentence, block_sentences(FERRY), blocks, random.Random(0))
    return [(o.variant, o.text, o.false) for o in PROBE[family](scene)]


@pytest.mark.parametrize(
    ("family", "sentence", "expected"),
    [
        ("predicate_join", "Cars are loaded two hours before departure.", "Cars are available"),
        ("list_extend", "The morning ferry carries cars, vans and motorbikes.", "motorbikes and"),
        ("qualifier", "Foot passengers board through gate B.", "gate B "),
        ("scope_widen", "Cars are loaded two hours before departure.", "Everyone is loaded"),
        ("scope_widen", "Cars are loaded two hours before departure.", "Anyone is loaded"),
        ("scope_widen", "The morning ferry carries cars, vans and motorbikes.", "Every ferry"),
    ],
)
def test_a_family_writes_what_it_names(family: str, sentence: str, expected: str) -> None:
    made = options(family, sentence)
    assert any(expected in text and false for _, text, false in made), made


def test_a_modifier_is_swapped_for_a_word_no_cited_block_uses() -> None:
    made = options("novel_word", "Bicycles travel free on weekday crossings.")
    words = set(FERRY.lower().split())
    assert made
    for _, text, false in made:
        assert false
        assert "weekday" not in text
        assert set(text.lower().rstrip(".").split()) - words


def test_the_sentence_s_own_phrase_fronted_is_a_control() -> None:
    made = options("qualifier", "Cabins are available for overnight crossings.")
    assert ("control_fronted", "For overnight crossings, cabins are available.", False) in made


def test_a_list_in_another_order_is_a_control() -> None:
    made = options("list_extend", "The morning ferry carries cars, vans and motorbikes.")
    assert ("control_order", "The morning ferry carries cars, motorbikes and vans.", False) in made
