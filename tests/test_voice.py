"""The writer's own voice (gate/voice.py): first person, questions, judgements."""

from __future__ import annotations

import pytest

from stream_rag.gate.voice import asks, first_person, judges, not_a_claim, speaks_for_itself


@pytest.mark.parametrize(
    "text",
    [
        "I agree, it is a great sport.",
        "i have too.",
        "I 've heard that skiing started in Scandinavia.",
        "I'm sure the warranty covers it.",
        "It makes me wonder what they ate.",
        "My favourite colour is green.",
        "He told the story to me.",
    ],
)
def test_first_person_singular_is_found(text: str) -> None:
    assert first_person(text)


@pytest.mark.parametrize(
    "text",
    [
        "World War I ended in 1918.",
        "Elizabeth I was queen of England.",
        "The I-95 runs along the coast.",
        "See section 1.i and (i) above.",
        "The coal mine closed in 1990.",
        "We offer refunds within 30 days.",
        "You can cancel at any time.",
    ],
)
def test_numerals_and_other_persons_are_not(text: str) -> None:
    assert not first_person(text)


def test_a_block_in_the_first_person_may_support_one() -> None:
    sentence = "I was born in Compton, he said."
    assert speaks_for_itself(sentence, ["Kendrick was born in Compton, California."])
    assert not speaks_for_itself(sentence, ["'I was born in Compton,' Kendrick said."])
    assert not speaks_for_itself("Kendrick was born in Compton.", ["He was born there."])


@pytest.mark.parametrize(
    "text",
    [
        "Do you like the music accompanying video games?",
        "Goldendoodles are referred to as designer dogs, do you like them?",
        "Do you do accounting and/or financial reporting ?",
        "Have you ever tried cod liver oil ? It is a source of vitamin A.",
        'Have you read "Matilda?"',
    ],
)
def test_a_question_is_no_claim(text: str) -> None:
    assert asks(text)
    assert not_a_claim(text, ["Video game music accompanies video games."]) is not None


def test_a_question_the_block_asks_and_a_statement_pass() -> None:
    faq = "How do I cancel my plan? Open Settings and choose Cancel."
    assert not_a_claim("How do I cancel my plan?", [faq]) is None
    assert not_a_claim("Open Settings and choose Cancel.", [faq]) is None
    assert not asks('The "?" key opens help, and `?` matches one character.')
    assert not asks("Refunds take 5 days.")


def test_first_person_is_no_claim_unless_the_block_speaks_so() -> None:
    block = "Regarded as one of the most significant icons of the century, he is called the king."
    assert not_a_claim("I think he was the most significant icon of the century.", [block])
    assert not_a_claim("He was one of the most significant icons of the century.", [block]) is None


@pytest.mark.parametrize(
    "sentence",
    [
        "It's funny that the bridge was built twice.",
        "The harbour is an important port for grain.",
        "Sadly, the bridge was closed in 1990.",
        "The bridge is famous for its two towers.",
    ],
)
def test_a_judgement_no_block_makes_is_no_claim(sentence: str) -> None:
    block = (
        "The bridge was built twice and closed in 1990. The harbour ships grain. It has two towers."
    )
    assert not_a_claim(sentence, [block]) is not None


def test_a_judgement_the_block_makes_passes() -> None:
    block = "The harbour is of great importance for grain, and the bridge is a famous landmark."
    assert judges("The harbour is important for grain.", [block]) == []
    assert judges("The bridge is famous.", [block]) == []
    assert not_a_claim("The bridge is a landmark.", [block]) is None
    assert judges("The best bridge.", [block]) == ["best"]
