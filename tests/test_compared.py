"""gate/compared.py: a comparison no cited block makes ("... within 7 days earlier") is refused;
the block's own comparatives, bounds on a number and comparatives before the word they qualify
are not (issue 27, the red team's fifth round)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.compared import compared, turned
from stream_rag.model.passages import block_sentences

from .gating import verdict

# Blocks of two domains, written for these tests.
BLOCKS = [
    "Parcels up to 20 kg ship within 3 to 5 business days. Express delivery costs $12 per "
    "parcel and arrives before noon on weekdays. Orders of 30 items or more get a larger box.",
    "The museum opens at 10 am. Guided tours last 90 minutes and leave from the main hall. "
    "Children under 12 enter free; older visitors pay 15 euros.",
]
SENTENCES = [(n, s) for n, text in enumerate(BLOCKS, start=1) for s in block_sentences(text)]
APPENDED = ("earlier", "later", "faster", "sooner", "more often", "for longer", "quicker")


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Parcels up to 20 kg ship within 3 to 5 business days earlier.", 1),
        ("Express delivery costs $12 per parcel and arrives before noon on weekdays faster.", 1),
        ("Guided tours last 90 minutes and leave from the main hall more often.", 2),
        ("The museum opens at 10 am sooner than the gallery.", 2),
    ],
)
def test_a_comparison_no_block_makes_is_refused(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert not ok
    assert "comparison" in why, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Orders of 30 items or more get a larger box.", 1),  # the block's own words
        ("Older visitors pay 15 euros.", 2),
        ("Children under 12 enter free, and older visitors pay 15 euros.", 2),
    ],
)
def test_the_blocks_own_comparisons_pass(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert ok, why


@pytest.mark.parametrize(
    "sentence",
    [
        "Orders of more than 30 items get a box.",  # a bound on a number: binding.py's
        "Orders of 30 items or more get a box.",
        "Lady Amelia is the younger sister of Edward.",  # before the word it qualifies
        "The company later moved to Texas.",  # before a verb
        "It is the second most populous island.",
    ],
)
def test_bounds_and_comparatives_before_a_word_are_left_to_other_checks(sentence: str) -> None:
    assert compared(sentence, ["Orders ship in a box."]) == ""


def test_a_hyphenated_block_word_vouches() -> None:
    assert compared("It ranks second most.", ["It is the second-most populous island."]) == ""


@given(pair=st.sampled_from(SENTENCES), word=st.sampled_from(APPENDED))
def test_a_comparative_appended_to_any_block_sentence_is_refused(
    pair: tuple[int, str], word: str
) -> None:
    n, sentence = pair
    assert verdict(BLOCKS, sentence, n)[0]  # the quote is shown
    body = sentence.rstrip().rstrip(".")
    ok, why = verdict(BLOCKS, f"{body} {word}.", n)
    assert not ok, why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Guided tours last 90 more minutes and leave from the main hall.", 2),
        ("Older visitors pay 15 euros less.", 2),
        ("Older visitors pay 15 more euros.", 2),
        ("Guided tours last 90 minutes more and leave from the main hall.", 2),
    ],
)
def test_more_or_less_after_an_amount_no_block_writes_is_refused(sentence: str, block: int) -> None:
    ok, why = verdict(BLOCKS, sentence, block)
    assert not ok, why


@pytest.mark.parametrize(
    "sentence",
    ["Orders of 30 items or more get a box.", "Children of 12 and more enter free."],
)
def test_a_bound_after_an_amount_is_not_a_comparison(sentence: str) -> None:
    assert compared(sentence, ["Orders ship in a box."]) == ""


# A library and a swimming pool: an order turned round between the same words.
ORDERED = [
    "Books can be reserved up to 14 days ahead of collection. Morning lanes fill faster than "
    "evening lanes. The east gate opens before the west gate.",
    "Adult lessons start earlier on weekdays. Junior lessons finish later on Saturdays. "
    "The deep pool is heated to a higher temperature than the diving pool.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Books can be reserved up to 14 days behind collection.", 1),
        ("Books can be reserved up to 14 days after collection.", 1),
        ("Morning lanes fill slower than evening lanes.", 1),
        ("The east gate opens after the west gate.", 1),
        # the block writes "later" of another statement: it vouches for nothing here
        ("Adult lessons start later on weekdays.", 2),
        ("The deep pool is heated to a lower temperature than the diving pool.", 2),
    ],
)
def test_an_order_turned_round_is_refused(sentence: str, block: int) -> None:
    ok, why = verdict(ORDERED, sentence, block)
    assert not ok, why
    assert turned(sentence, [ORDERED[block - 1]]), why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Books can be reserved up to 14 days before collection.", 1),
        ("Books can be reserved up to 14 days in advance of collection.", 1),
        ("Junior lessons finish later on Saturdays.", 2),
        ("Adult lessons start earlier on weekdays.", 2),
    ],
)
def test_an_order_kept_in_other_words_passes(sentence: str, block: int) -> None:
    ok, why = verdict(ORDERED, sentence, block)
    assert ok, why


@pytest.mark.parametrize(
    "sentence",
    [
        "Evening lanes fill slower than morning lanes.",
        "The west gate opens after the east gate.",
        "The diving pool is heated to a lower temperature than the deep pool.",
    ],
)
def test_a_comparison_said_from_its_other_side_is_no_turn(sentence: str) -> None:
    # The converse trades the sides as it turns the word: neither rule refuses it.
    evidence = ORDERED
    assert turned(sentence, evidence) == ""
    assert compared(sentence, evidence) == ""


@pytest.mark.parametrize(
    "sentence",
    [
        "Weekday tickets for the harbour museum are the fewest, below weekend tickets.",
        "The regional train is the lowest, under the express train for the harbour.",
    ],
)
def test_a_comparison_of_another_thing_with_the_sides_traded_is_refused(sentence: str) -> None:
    # Two poles of one axis are no converse unless one is the other's opposite in one sense:
    # "the fewest" of "costs more" compares another thing (it was shown, 77ba693)
    blocks = [
        "Weekend tickets for the harbour museum cost more than weekday tickets. The express "
        "train for the harbour costs more than the regional train."
    ]
    assert compared(sentence, blocks)
    assert not verdict(blocks, sentence, 1)[0]


@pytest.mark.parametrize(
    "sentence",
    [
        "The south car park at the harbour station holds older cars than the north car park.",
        "The south car park at the harbour station holds smaller cars than the north car park.",
    ],
)
def test_a_comparative_before_its_noun_then_than_is_a_comparison(sentence: str) -> None:
    # "older cars than": a comparison no block makes, though the word it qualifies follows it
    # (both were shown over a block comparing how many)
    blocks = ["The north car park at the harbour station holds more cars than the south car park."]
    assert compared(sentence, blocks)
    assert not verdict(blocks, sentence, 1)[0]
    assert compared("The house cleaning service is less expensive than ours.", blocks) == ""


# An orchard and a choir: a word of order in time put as one of position (or rank) pointing the
# other way, and back.
SENSED = [
    "Apples are picked before the pears ripen. The cider barn is listed above the farm shop on "
    "the map.",
    "The altos stand ahead of the tenors in the procession. The soprano section ranks higher "
    "than the bass section in the competition.",
]


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Apples are picked below the pears ripen.", 1),
        ("The cider barn is listed after the farm shop on the map.", 1),
        ("The altos stand below the tenors in the procession.", 2),
        ("The soprano section ranks later than the bass section in the competition.", 2),
    ],
)
def test_an_order_of_another_sense_turned_is_refused(sentence: str, block: int) -> None:
    # each was shown on 422bf4b: "below" and "after" are stop words and no rule read them
    ok, why = verdict(SENSED, sentence, block)
    assert not ok, why
    assert turned(sentence, [SENSED[block - 1]]), why


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Apples are picked before the pears ripen.", 1),
        ("The cider barn is listed before the farm shop on the map.", 1),
        ("The altos stand above the tenors in the procession.", 2),
        ("The soprano section ranks ahead of the bass section in the competition.", 2),
        # said from the other side, each word of order turned and the sides traded
        ("The tenors stand below the altos in the procession.", 2),
    ],
)
def test_an_order_of_another_sense_kept_passes(sentence: str, block: int) -> None:
    assert turned(sentence, SENSED) == ""
    if "tenors stand" not in sentence:  # the converse is still refused by gate/roles.py
        ok, why = verdict(SENSED, sentence, block)
        assert ok, why


@given(
    pair=st.sampled_from(
        SENTENCES
        + [(n, s) for n, text in enumerate(SENSED, start=1) for s in block_sentences(text)]
    )
)
def test_a_time_word_as_a_place_word_the_other_way_is_refused(pair: tuple[int, str]) -> None:
    _, sentence = pair
    swaps = {"before": "below", "after": "above", "above": "after", "ahead": "below"}
    words = sentence.split()
    hits = [i for i, w in enumerate(words) if w in swaps]
    for i in hits:
        edited = " ".join([*words[:i], swaps[words[i]], *words[i + 1 :]])
        assert turned(edited, [sentence]), edited
