"""What a clause adds to the span it restates (gate/unsaid.py): a qualifier, a list item, a
subject of another statement, a universal opening; on blocks of other domains than the
fixtures, each edit failing and a faithful restatement passing."""

from __future__ import annotations

import pytest

from .gating import verdict

FERRY = (
    "Foot passengers board through gate B. Cars are loaded two hours before departure. "
    "Bicycles travel free on weekday crossings. The morning ferry carries cars, vans and "
    "motorbikes. Cabins are available for overnight crossings."
)
BAKERY = (
    "Members get 10% off all bread. The Main Street shop opens at 7 am. Everyone can join "
    "the loyalty club at the till. Sourdough loaves are baked every morning."
)
BLOCKS = (FERRY, BAKERY)


def judge(sentence: str, block: int) -> tuple[bool, str]:
    return verdict(BLOCKS, sentence, block)


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        # a qualifier the span does not write, at the end or in front
        ("Bicycles travel free on weekday crossings for the first year.", 1),
        ("On overnight crossings, foot passengers board through gate B.", 1),
        ("Foot passengers board through gate B outside business hours.", 1),
        # a list extended with an item another statement names, or none does
        ("The morning ferry carries cars, vans, motorbikes and bicycles.", 1),
        ("The morning ferry carries cars, vans, motorbikes and caravans.", 1),
        # another statement's subject joined to this one's predicate
        ("Foot passengers are loaded two hours before departure.", 1),
        ("Sourdough loaves get 10% off all bread.", 2),
        # a claim of some said of everyone, where the block says "everyone" elsewhere
        ("Everyone gets 10% off all bread.", 2),
        ("Any shop opens at 7 am.", 2),
        # a word of a block the sentence does not cite, in the place of the span's
        ("Bicycles travel free on loyalty crossings.", 1),
    ],
)
def test_what_the_span_does_not_say_fails(sentence: str, block: int) -> None:
    ok, detail = judge(sentence, block)
    assert not ok, detail


@pytest.mark.parametrize(
    ("sentence", "block"),
    [
        ("Bicycles travel free on weekday crossings.", 1),
        ("On weekday crossings, bicycles travel free.", 1),
        ("The morning ferry carries cars, motorbikes and vans.", 1),
        ("Cars are loaded two hours before departure.", 1),
        ("Members get 10% off all bread.", 2),
        ("Everyone can join the loyalty club at the till.", 2),
        ("The Main Street shop opens at 7 am.", 2),
    ],
)
def test_a_faithful_restatement_passes(sentence: str, block: int) -> None:
    ok, detail = judge(sentence, block)
    assert ok, detail


GYM = (
    "The Basic membership includes 2 classes a week, a locker and towel service. The Plus "
    "membership adds 4 personal training sessions and sauna access. Day passes are not "
    "eligible for a discount. Discounts are given to students."
)


@pytest.mark.parametrize(
    "sentence",
    [
        # a list item of another statement, counting what this one does not
        "The Basic membership includes 2 classes a week, a locker, towel service and 4 personal "
        "training sessions.",
        # the span's own noun, from its predicate, made its subject
        "Discounts are not eligible for a discount.",
    ],
)
def test_an_item_or_a_subject_of_the_wrong_statement_fails(sentence: str) -> None:
    ok, why = verdict((GYM,), sentence, 1)
    assert not ok, why


@pytest.mark.parametrize(
    "sentence",
    [
        "The Basic membership includes towel service, a locker and 2 classes a week.",
        "Day passes are not eligible for a discount.",
    ],
)
def test_the_statements_own_items_and_subject_pass(sentence: str) -> None:
    ok, why = verdict((GYM,), sentence, 1)
    assert ok, why


TRANSIT = (
    "Bicycles over 20 kg cost 15 euros more than the 20 kg fare on every route except the "
    "night bus, which does not carry them. Day tickets are sold at every stop."
)


@pytest.mark.parametrize(
    ("sentence", "faithful"),
    [
        # a qualifier made of the statement's own words, said a second time of what it does not
        # qualify: no word of it moved from elsewhere in the statement
        (
            "Bicycles over 20 kg cost 15 euros more than the 20 kg fare on every route except "
            "the night bus, which does not carry them on every route.",
            False,
        ),
        ("Day tickets are sold at every stop on the day.", False),
        (
            "Bicycles over 20 kg cost 15 euros more than the 20 kg fare on every route except "
            "the night bus.",
            True,
        ),
        ("At every stop, day tickets are sold.", True),
    ],
)
def test_a_qualifier_of_the_statements_words_said_again_fails(
    sentence: str, faithful: bool
) -> None:
    ok, why = verdict((TRANSIT,), sentence, 1)
    assert ok == faithful, why


PARK = (
    "Garden parties, picnics and barbecues in parks or gardens need a permit. Dogs on leads "
    "are welcome in every park."
)


@pytest.mark.parametrize(
    ("sentence", "faithful"),
    [
        # another statement's noun in the place of the subject's, the subject's word still
        # written once later in the clause where the span writes it twice
        ("Dog parties, picnics and barbecues in parks or gardens need a permit.", False),
        ("Garden parties, picnics and barbecues in parks or gardens need a permit.", True),
        ("Picnics and barbecues in parks or gardens need a permit.", True),
    ],
)
def test_a_subject_of_another_statement_fails_though_its_word_is_written_again(
    sentence: str, faithful: bool
) -> None:
    ok, why = verdict((PARK,), sentence, 1)
    assert ok == faithful, why
