"""Faithful restatements the claim checks read too literally (issue 27, the real-model operating
point): a statement's "They ..." continuation, "per" said as "every", "for free" moved, a
compound after "every", a unit's other spelling, "since"/"due to" that tell time. Each
passes, and the edit that makes it false still fails; blocks of another domain than the
fixtures."""

from __future__ import annotations

import pytest

from stream_rag.gate.citations import Citation
from stream_rag.gate.lexical import GateContext
from stream_rag.language.opposites import closed_class
from stream_rag.language.terms import stem

from .gating import verdict

MUSEUM = (
    "Tickets for the river museum are sold at the desk. They are free, whatever the age of "
    "the visitor. Guided tours cost 12 euros. Members collect one stamp per visit and get a "
    "free tour for every 10 stamps. Visitors may stay in the garden for up to three hours for "
    "free. A locked coin locker refuses every payment, but tokens from the desk still work."
)
HISTORY = (
    "The museum opened in 1998. It has hosted 40 exhibitions since then. The new wing is due "
    "to open in May. Entry is cheaper on Mondays because fewer guides work then. The cafe "
    "closes at 5 pm."
)
BLOCKS = (MUSEUM, HISTORY)


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        # The next statement's "They" names the tickets: both are one span.
        ("Tickets for the river museum are free and are sold at the desk.", 1),
        ("Members collect one stamp for every visit.", 1),  # "per visit"
        ("Visitors may stay in the garden for free for up to three hours.", 1),
        ("A locked locker refuses every coin payment.", 1),
        ("The museum has hosted 40 exhibitions since its opening in 1998.", 2),
        ("The new wing of the museum is due to open in May.", 2),
    ],
)
def test_a_faithful_restatement_passes(sentence: str, block: int) -> None:
    ok, detail = verdict(BLOCKS, sentence, block)
    assert ok, detail


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Guided tours cost 12 euros and are free.", 1),
        ("Members collect one stamp for every tour.", 1),  # "every" of another thing
        ("Visitors may stay in the tower for free for up to three hours.", 1),
        ("The museum hosted 40 exhibitions since it opened in May.", 2),  # a cause
        ("The cafe closes at 5 pm due to the new wing.", 2),
    ],
)
def test_the_false_edit_still_fails(sentence: str, block: int) -> None:
    ok, detail = verdict(BLOCKS, sentence, block)
    assert not ok, detail


def test_a_units_other_spelling_is_the_same_unit() -> None:
    assert not closed_class(stem("metres"), stem("meter"))
    assert not closed_class(stem("litre"), stem("liters"))
    assert closed_class(stem("metres"), stem("miles"))


def test_a_bare_yes_is_left_unchecked_at_balanced_only() -> None:
    sentence = "Yes. Guided tours cost 12 euros."
    strict = GateContext(BLOCKS)
    balanced = GateContext(BLOCKS, mode="balanced")
    for ctx, shown in ((strict, False), (balanced, True)):
        text, _, units = ctx.read(f"{sentence} [1]")
        assert ctx.check(text, [Citation(1)], units).ok is shown
    text, _, units = balanced.read("Yes. Guided tours cost 20 euros. [1]")
    assert not balanced.check(text, [Citation(1)], units).ok


def test_a_continuation_binds_to_the_statement_it_names() -> None:
    # "They" names the monthly plans: the pair is one span, and the annual plans are not it.
    blocks = (
        "Monthly plans cost 8 euros. They can be cancelled at any time. "
        "Annual plans cost 80 euros.",
    )
    ok, detail = verdict(blocks, "Annual plans can be cancelled at any time.", 1)
    assert not ok, detail
    ok, detail = verdict(blocks, "Monthly plans can be cancelled at any time.", 1)
    assert ok, detail
