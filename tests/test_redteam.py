"""The red team's knobs (model/redteam.py, redteam_knobs.py) as transformations: each family
makes a new sentence from the block's own that cites a block and says whether it is false, is
deterministic, applies to blocks of other domains, and writes faithful controls too."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.answer.prompt import build_messages
from stream_rag.cli import fake as fake_cli
from stream_rag.model.fake import FakeConfig, write
from stream_rag.model.ledger import plain
from stream_rag.model.passages import block_sentences
from stream_rag.model.redteam_knobs import RED_TEAM, red_team, spelled
from stream_rag.model.redteam_shifts import SHIFTS
from stream_rag.retrieve.hybrid import Block

KB = Path(__file__).parent / "fixtures" / "gym_kb"
BLOCKS = {i: path.read_text() for i, path in enumerate(sorted(KB.iterdir()), start=1)}
PAIRS = [(n, s) for n, text in BLOCKS.items() for s in block_sentences(text)]
EVERY_SENTENCE = {plain(s) for _, s in PAIRS}
# Blocks of another domain than the fixture, written for these tests.
OTHER = {
    1: "Parcels up to 20 kg ship within 3 to 5 business days. Express delivery costs $12 per "
    "parcel and arrives before noon on weekdays. Returns are accepted only if the seal is "
    "unbroken.",
    2: "The library opens at 9 am from Monday to Saturday. Members can borrow at most 8 books "
    "at a time. Late returns are charged 1,500 credits unless the member has a waiver.",
}


def test_the_cli_names_every_knob() -> None:
    assert fake_cli.RED_TEAM == RED_TEAM
    assert all(hasattr(FakeConfig(), name) for name in RED_TEAM)


@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**32 - 1), knob=st.sampled_from(RED_TEAM))
def test_a_false_edit_is_a_new_sentence_that_cites(
    pair: tuple[int, str], seed: int, knob: str
) -> None:
    n, sentence = pair
    written = red_team(knob, n, sentence, BLOCKS, random.Random(seed))
    assert written == red_team(knob, n, sentence, BLOCKS, random.Random(seed))
    if written is None:
        return  # the family applies to no sentence of this block (the fake then quotes)
    assert written.behaviour == knob
    assert set(written.cited) <= set(BLOCKS)
    assert f"[{written.source}]" in written.text
    if written.false:
        assert not written.variant.startswith("control")
        assert plain(written.text) not in EVERY_SENTENCE or not written.text.isascii()
    else:
        assert written.variant.startswith("control")


@pytest.mark.parametrize("blocks", [BLOCKS, OTHER], ids=["gym", "other"])
def test_the_families_apply_to_blocks_of_any_domain(blocks: dict[int, str]) -> None:
    """Across the families, most sentences get a false edit, and controls are written."""
    rng = random.Random(0)
    pairs = [(n, s) for n, text in blocks.items() for s in block_sentences(text)]
    # Each sentence drawn four times: a control is written one time in four where one applies.
    # "foreign" edits French, German and Spanish only (tests/test_foreign.py); the fifth
    # round's shifts edit closed-class words few sentences have ("if", "must", "working days"),
    # each held to blocks of other domains in its own test (tests/test_conditions.py ...);
    # so are the sixth's "due_to" ("was cancelled", tests/test_links.py) and "rates" ("per
    # day", tests/test_rates.py).
    knobs = [k for k in RED_TEAM if k not in ("foreign", "due_to", "rates") and k not in SHIFTS]
    made = [red_team(k, n, s, blocks, rng) for k in knobs for n, s in pairs * 4]
    false = [w for w in made if w is not None and w.false]
    controls = [w for w in made if w is not None and not w.false]
    assert len(false) >= 0.5 * len(made)
    # Some families need words few blocks have ("instead of", "up to", "50%", a range, "All",
    # two coordinated parts with no number).
    assert len({w.behaviour for w in false}) >= len(knobs) - 7
    assert len({w.behaviour for w in controls}) >= len(knobs) // 2


@pytest.mark.parametrize(
    ("knob", "sentence", "expected"),
    [
        ("bound_flip", "Members can borrow at most 8 books at a time.", "at least 8"),
        ("unit_swap", "Parcels up to 20 kg ship within 3 business days.", "3 business"),
        ("drop_condition", "Returns are accepted only if the seal is unbroken.", "Returns"),
        ("separators", "Late returns are charged 1,500 credits.", "1"),
        ("subject_swap", "Members can borrow at most 8 books.", "at most 8 books"),
    ],
)
def test_a_family_edits_what_it_names(knob: str, sentence: str, expected: str) -> None:
    blocks = {1: f"{sentence} Visitors pay 3 euros per hour.", 2: OTHER[1]}
    for seed in range(20):
        written = red_team(knob, 1, sentence, blocks, random.Random(seed))
        assert written is not None
        assert expected in written.text
        assert written.text.rsplit(" [", 1)[0] != sentence


def test_numbers_are_spelled() -> None:
    assert [spelled(v) for v in (0, 14, 30, 105, 1500)] == [
        "zero",
        "fourteen",
        "thirty",
        "one hundred five",
        "one thousand five hundred",
    ]


def test_the_fake_writes_a_family_at_its_rate() -> None:
    blocks = [
        Block(n, f"doc_{n}:v1:0", f"doc_{n}", 1, "0" * 64, f"f{n}.md", f"f{n}.md", 0, len(t), t, {})
        for n, t in OTHER.items()
    ]
    messages = [m.to_json() for m in build_messages("How much is express delivery?", blocks)]
    written = write(FakeConfig(unit_swap=1.0), messages)
    assert written
    assert any(w.behaviour == "unit_swap" for w in written)
    assert all(w.behaviour in ("unit_swap", "faithful") for w in written)
