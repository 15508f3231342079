"""Words a faithful restatement writes that the checks read too literally (issue 27): a duty said
as "need" and as "must have" (gate/binding.py), a table's header read as a name after its row
is written as a sentence, and a small word in sentence case that a heading or a comma ran into
(gate/support.py). Blocks of a museum and a gym; each rule passes its restatement and still
fails a false edit."""

from __future__ import annotations

import pytest

from stream_rag.gate.support import block_names

from .gating import verdict

MUSEUM = [
    "Ticket types and fees\n\n"
    "Adult: Entry 14 euros, Audio guide 4 euros, Opening hours 10:00 to 18:00.\n"
    "Student: Entry 9 euros, Audio guide 2 euros, Opening hours 10:00 to 18:00.",
    "Groups of more than 10 visitors need a booking made two weeks ahead. Large bags can be "
    "left in the cloakroom.",
    "Guided tours\nYou can join a guided tour at 11:00 and 15:00 every day.",
]


def test_a_header_of_a_row_written_as_a_sentence_is_no_name() -> None:
    names = block_names(MUSEUM[0])
    assert not {"entry", "audio", "opening"} & names


@pytest.mark.parametrize(
    "sentence",
    [
        # "entry" is a header in block 1: written in a clause, it is a word, not a name.
        "Groups of more than 10 visitors must have a booking made two weeks ahead.",
        "Groups of more than 10 visitors require a booking made two weeks ahead.",
    ],
)
def test_a_duty_said_with_need_is_one_with_must_have(sentence: str) -> None:
    ok, why = verdict(MUSEUM, sentence, 2)
    assert ok, why


def test_a_duty_where_the_span_says_can_still_fails() -> None:
    assert not verdict(MUSEUM, "Large bags need to be left in the cloakroom.", 2)[0]
    assert not verdict(MUSEUM, "Large bags must have the cloakroom.", 2)[0]


@pytest.mark.parametrize(
    "sentence",
    [
        "Guided tours You can join a guided tour at 11:00 and 15:00 every day.",
        "Every day, You can join a guided tour at 11:00 and 15:00.",
    ],
)
def test_a_small_word_in_sentence_case_mid_sentence_is_no_name(sentence: str) -> None:
    ok, why = verdict(MUSEUM, sentence, 3)
    assert ok, why


def test_a_single_capital_after_a_word_is_still_a_name() -> None:
    blocks = ["Zone A tickets cost 3 euros. Zone B tickets cost 5 euros."]
    assert verdict(blocks, "Zone A tickets cost 3 euros.", 1)[0]
    assert not verdict(blocks, "Zone A tickets cost 5 euros.", 1)[0]


def test_a_small_word_in_a_names_place_is_still_a_name() -> None:
    # "If" of another block's heading run in, in the place of "Student": no glue to skip.
    sentence = "A If ticket costs 9 euros for entry."
    assert not verdict([*MUSEUM, "Refunds\nIf you cancel, we refund you."], sentence, 1)[0]


def test_a_price_said_with_another_verb_where_a_header_names_prices() -> None:
    blocks = [
        "Fees\n\nAdult: Price per visit 14 euros, Price per year 90 euros.\n"
        "Child: Price per visit 6 euros, Price per year 40 euros.",
        "A guided tour costs 5 euros per person and lasts one hour.",
    ]
    ok, why = verdict(
        blocks, "A guided tour is priced at 5 euros per person and lasts one hour.", 2
    )
    assert ok, why
    assert not verdict(blocks, "A guided tour is priced at 6 euros per person.", 2)[0]


# -- a comparison said from its other side (gate/compared.py) -----------------------------------

LEAGUE = [
    "The Otters scored 12 goals more than the Harriers this season. The Herons finished ahead "
    "of the Kites.",
    "The north pool is deeper than the south pool.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("The Harriers scored 12 goals less than the Otters this season.", 1),
        ("The Harriers scored 12 goals fewer than the Otters this season.", 1),
        ("The Kites finished behind the Herons.", 1),
    ],
)
def test_a_true_converse_passes(sentence: str, block: int) -> None:
    ok, why = verdict(LEAGUE, sentence, block)
    assert ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("The Harriers scored 12 goals more than the Otters this season.", 1),
        ("The Otters scored 12 goals less than the Harriers this season.", 1),
        ("The Harriers scored 10 goals less than the Otters this season.", 1),
        ("The Kites finished ahead of the Herons.", 1),
        ("The Herons finished behind the Kites.", 1),
        # The sides traded with the word kept: shown at overlap 1.00 on ee014e2.
        ("The south pool is deeper than the north pool.", 2),
    ],
)
def test_the_sides_or_the_order_alone_turned_fail(sentence: str, block: int) -> None:
    assert not verdict(LEAGUE, sentence, block)[0]


def test_a_small_word_closing_a_menu_path_stays_a_name() -> None:
    # "About" ends "(Help > About)": read as glue, the path lost a word the span has.
    blocks = [
        "Before calling the help desk, note your printer model (Settings > About) and its age."
    ]
    sentence = "Before calling the help desk, write down your printer model (Settings > About)."
    ok, why = verdict(blocks, sentence, 1)
    assert ok, why


def test_a_small_word_after_a_capitalised_one_is_part_of_a_name() -> None:
    # "By" of another block's "Pay By Bank" in the place of "Plus" of "Secure Plus".
    blocks = ["Secure Plus is a signed service for valuables.", "Pay By Bank is accepted."]
    assert not verdict(blocks, "Secure By is a signed service for valuables.", 1)[0]
    assert verdict(blocks, "Secure Plus is a signed service for valuables.", 1)[0]
