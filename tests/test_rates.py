"""gate/rates.py: how often, per what and by whom, held to the statement a sentence restates
("most days" of "every day", "per visit" of "per day", "by a member" of "by an adult"), with
the red team's `rates` family that writes them (issue 27, the red team's sixth round)."""

from __future__ import annotations

import random

import pytest

from stream_rag.gate.rates import rated
from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam import Scene
from stream_rag.model.redteam_rates import rates

from .gating import verdict

# A library and a climbing wall, written for these tests.
BLOCKS = [
    "The reading room is open from 09:00 to 18:00 every day. Visitors may borrow 3 books per "
    "day. Children under 8 must be accompanied by an adult. Lockers cost 2 euros per visit.",
    "Members climb twice per week for 12 euros per session. Ropes are always checked by an "
    "instructor. Each route is reset monthly. Guests are welcome.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("The reading room is open from 09:00 to 18:00 most days.", 1),
        ("Visitors may borrow 3 books per visit.", 1),  # the block's other rate
        ("Lockers cost 2 euros per day.", 1),
        ("Children under 8 must be accompanied by a member.", 1),
        ("Members climb twice per session for 12 euros per session.", 2),
        ("Members climb twice per week for 12 euros per week.", 2),
        ("Ropes are usually checked by an instructor.", 2),
        ("Ropes are always checked by a guest.", 2),
        ("Most routes are reset monthly.", 2),
    ],
)
def test_another_rate_frequency_or_agent_is_refused(sentence: str, block: int) -> None:
    assert rated(sentence, [BLOCKS[block - 1]])
    ok, why = verdict(BLOCKS, sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("The reading room is open from 09:00 to 18:00 every day.", 1),
        ("Visitors may borrow 3 books a day.", 1),
        ("Lockers cost 2 euros for each visit.", 1),
        ("Children under 8 must be accompanied by an adult.", 1),
        ("For 12 euros per session, members climb twice per week.", 2),  # the rates reordered
        ("Ropes are always checked by instructors.", 2),
        ("Every route is reset monthly.", 2),
        ("Visitors may borrow 3 books per day, 20 per cent more than before.", 1),  # a share
    ],
)
def test_the_statements_own_rates_pass(sentence: str, block: int) -> None:
    assert rated(sentence, [BLOCKS[block - 1]]) == ""


def test_the_family_writes_false_rates_and_true_controls() -> None:
    for n, block in enumerate(BLOCKS, start=1):
        own = block_sentences(block)
        for sentence in own:
            scene = Scene(n, sentence, own, dict(enumerate(BLOCKS, start=1)), random.Random(0))
            for option in rates(scene):
                ok, why = verdict(BLOCKS, option.text, n)
                assert ok != option.false, (option, why)
