"""gate/exclusive.py: the statement's "only" dropped ("Members can book lanes online." of "Only
members can book ...") or put on another word ("Members can only book ...") is refused; "only"
on the same word in another place, "solely", "alone" and "only three" for "only 3" pass (issue
27, the red team's fifth round)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.exclusive import _FUNCTION, _ONLY, _key, _moved, _said, exclusive
from stream_rag.model.redteam_shifts import only_shift

from .gating import assert_knob_judged, block_pairs, verdict

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


PAIRS = block_pairs(BLOCKS)


@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**16))
def test_the_knobs_edits_are_refused_and_its_controls_pass(
    pair: tuple[int, str], seed: int
) -> None:
    assert_knob_judged(BLOCKS, only_shift, pair, seed)


def test_an_only_put_on_a_word_where_the_statements_qualifies_none_is_refused() -> None:
    # "... to this only": the statement's "only" qualifies no word read, so it vouches for
    # none the sentence puts one on (it raised IndexError; the gate stopped on it)
    block = ["The fee applies to this only."]
    assert "puts it on no word of its own" in exclusive("The fee applies only to members.", block)
    assert exclusive("The fee applies to this only.", block) == ""
    assert not verdict(block, "The fee applies only to members.", 1)[0]


# -- what an "only" qualifies, read once --------------------------------------------------------


def _attached_before(tokens: list[str]) -> list[set[str]]:
    """exclusive._attached as it was: the words each "only" may qualify, one set per "only"."""
    out = []
    for i, token in enumerate(tokens):
        if token not in _ONLY or (i and tokens[i - 1] in ("not", "if")):
            continue
        after = [_key(t) for t in tokens[i + 1 :] if t not in _FUNCTION]
        words = set(after[:1] if i == 0 else after)
        if i and tokens[i - 1] not in _FUNCTION:
            words.add(_key(tokens[i - 1]))
        out.append(words)
    return out


_TOKENS = st.lists(
    st.sampled_from(["only", "solely", "not", "if", "the", "to", "members", "adults", "3", "x"]),
    max_size=12,
)


@given(theirs=_TOKENS, mine=_TOKENS)
def test_what_an_only_qualifies_is_read_as_before(theirs: list[str], mine: list[str]) -> None:
    attached = _attached_before(theirs)
    said = _said(theirs)
    assert (said is None) == (not attached)
    if said is not None:
        assert said == set().union(*attached)
        moved = (min(w) for w in _attached_before(mine) if w and not w & said)
        assert _moved(mine, said) == next(moved, None)


class _Counted(Sequence[str]):
    """Tokens that count how often they are read (a slice's reads too)."""

    def __init__(self, tokens: list[str], reads: list[int] | None = None) -> None:
        self.tokens = tokens
        self.reads = reads if reads is not None else [0]

    def __len__(self) -> int:
        return len(self.tokens)

    @overload
    def __getitem__(self, k: int) -> str: ...
    @overload
    def __getitem__(self, k: slice) -> _Counted: ...
    def __getitem__(self, k: int | slice) -> str | _Counted:
        self.reads[0] += 1
        if isinstance(k, slice):
            return _Counted(self.tokens[k], self.reads)
        return self.tokens[k]


def test_a_run_of_only_is_read_once() -> None:
    mine = _Counted(["refunds", "take"] + ["only"] * 2_000 + ["5", "days"])
    theirs = _Counted(["refunds", "only", "take", "5", "days"])
    said = _said(theirs)
    assert said == {"take", "5", "day", "refund"}
    assert _moved(mine, said) is None
    assert mine.reads[0] < 20 * len(mine)
