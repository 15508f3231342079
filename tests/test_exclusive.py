"""gate/exclusive.py: the statement's "only" dropped ("Members can book lanes online." of "Only
members can book ...") or put on another word ("Members can only book ...") is refused; "only"
on the same word in another place, "solely", "alone" and "only three" for "only 3" pass (issue
27, the red team's fifth round)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.exclusive import exclusive
from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam import Scene, options_for
from stream_rag.model.redteam_shifts import only_shift

from .gating import verdict

# Blocks of two domains, written for these tests.
BLOCKS = [
    "Only members can book lanes online. The sauna is open to adults only. Refunds are only "
    "given for unused tickets.",
    "Each shop may host only 3 vendors at a time. Parcels are delivered on weekdays only. "
    "Not only cards but also cash are accepted.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Members can book lanes online.", 1),
        ("Members can only book lanes online.", 1),
        ("The sauna is open to adults.", 1),
        ("Refunds are given for unused tickets.", 1),
        ("Only refunds are given for unused tickets.", 1),
        ("Each shop may host 3 vendors at a time.", 2),
        ("Parcels are delivered on weekdays.", 2),
    ],
)
def test_an_only_dropped_or_moved_is_refused(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Only members can book lanes online.", 1),
        ("Members alone can book lanes online.", 1),
        ("The sauna is only open to adults.", 1),
        ("Refunds are given only for unused tickets.", 1),
        ("Each shop may host only three vendors at a time.", 2),
        ("Parcels are delivered only on weekdays.", 2),
        ("Cards and cash are accepted.", 2),
    ],
)
def test_the_statements_own_only_passes(sentence: str, block: int) -> None:
    assert exclusive(sentence, [BLOCKS[block - 1]]) == ""
    ok, why = verdict(BLOCKS, sentence, block)
    assert ok or why.startswith("overlap"), why  # grey: the semantic stage decides


PAIRS = [(n, s) for n, text in enumerate(BLOCKS, start=1) for s in block_sentences(text)]


@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**16))
def test_the_knobs_edits_are_refused_and_its_controls_pass(
    pair: tuple[int, str], seed: int
) -> None:
    n, sentence = pair
    issued = dict(enumerate(BLOCKS, start=1))
    scene = Scene(n, sentence, block_sentences(BLOCKS[n - 1]), issued, random.Random(seed))
    for option in options_for(only_shift, scene):
        ok, why = verdict(BLOCKS, option.text, n)
        if option.false:
            assert not ok, (option, why)
        else:
            assert ok or why.startswith("overlap"), (option, why)


def test_an_only_put_on_a_word_where_the_statements_qualifies_none_is_refused() -> None:
    # "... to this only": the statement's "only" qualifies no word read, so it vouches for
    # none the sentence puts one on (it raised IndexError; the gate stopped on it)
    block = ["The fee applies to this only."]
    assert "puts it on no word of its own" in exclusive("The fee applies only to members.", block)
    assert exclusive("The fee applies to this only.", block) == ""
    assert not verdict(block, "The fee applies only to members.", 1)[0]
