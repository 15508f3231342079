"""The red team's fourth round (model/redteam_roles.py) as transformations, on a block of
another domain than the fixtures: each family writes its false edit of the block's own
sentence, and its control (a passive, "All the ...", "may" for "can") recorded true."""

from __future__ import annotations

import random

import pytest

from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam import Scene
from stream_rag.model.redteam_roles import ROLES

MUSEUM = (
    "The night guard locks every gallery at 6 pm. All tickets include the audio guide. "
    "Visitors can leave bags in the cloakroom."
)


def options(family: str, sentence: str) -> list[tuple[str, str, bool]]:
    scene = Scene(1, sentence, block_sentences(MUSEUM), {1: MUSEUM}, random.Random(0))
    return [(o.variant, o.text, o.false) for o in ROLES[family](scene)]


@pytest.mark.parametrize(
    ("family", "sentence", "false", "control"),
    [
        (
            "role_swap",
            "The night guard locks every gallery at 6 pm.",
            "Every gallery locks the night guard at 6 pm.",
            "Every gallery is locked by the night guard at 6 pm.",
        ),
        (
            "weaken",
            "All tickets include the audio guide.",
            "Some tickets include the audio guide.",
            "All the tickets include the audio guide.",
        ),
        (
            "certain",
            "Visitors can leave bags in the cloakroom.",
            "Visitors will leave bags in the cloakroom.",
            "Visitors may leave bags in the cloakroom.",
        ),
    ],
)
def test_a_family_writes_its_edit_and_its_control(
    family: str, sentence: str, false: str, control: str
) -> None:
    made = options(family, sentence)
    assert (false, True) in [(text, f) for _, text, f in made], made
    assert (control, False) in [(text, f) for _, text, f in made], made


@pytest.mark.parametrize("family", ["role_swap", "weaken", "certain"])
def test_a_sentence_without_the_structure_gets_no_edit(family: str) -> None:
    assert options(family, "Open daily.") == []
