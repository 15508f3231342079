"""What a question asks about (`language/focus.py`), and a question about something no
retrieved block speaks of refused as `not_answered` (`answerable._unfound`), while one asking
of the same things in the customer's own words is answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_rag.answer.results import AnswerResult
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.language.focus import focus_words
from stream_rag.language.question import read_question

from .answering import extractive_answers


@pytest.mark.parametrize(
    ("question", "focus"),
    [
        ("Can I bring my dog on the train?", ("dog", "train")),
        ("How much is a dental crown?", ("crown",)),
        ("Can I pay by cheque?", ("cheque",)),
        (
            "What is the penalty fare for travelling without a ticket?",
            ("fare", "penalty", "ticket"),
        ),
        # A verb taking its object is not the phrase's head; how it asks is no focus.
        ("How long until a refund reaches my card?", ("refund", "card")),
        ("The kettle lid won't pop open, any tips?", ("lid", "kettle")),
        ("When can I use the Student Railcard?", ("Railcard", "Student")),
        ("Is it right for me?", ()),
        # The situation told before the question says who asks, not what about.
        ("I use a wheelchair, is there a lift at the hotel?", ("lift", "hotel")),
    ],
)
def test_focus_is_the_head_nouns_of_the_questions_phrases(
    question: str, focus: tuple[str, ...]
) -> None:
    assert focus_words(question) == focus
    assert read_question(question).focus == focus


FILES = {
    "faq.txt": (
        "Hotel Seeblick - your questions answered\n\n"
        "Are dogs allowed?\n"
        "Dogs are welcome in our ground-floor rooms for 15 euros a night. They may not come "
        "into the restaurant or the spa.\n\n"
        "Can I leave my luggage after check-out?\n"
        "Yes. Reception keeps bags in a locked room until 20:00 on the day you leave.\n\n"
        "Do you hire out bicycles?\n"
        "Guests can hire bikes at reception for 12 euros a day; helmets are lent free.\n\n"
        "Is the hotel accessible?\n"
        "A lift serves every floor, and two ground-floor rooms are step-free with a walk-in "
        "shower.\n"
    ),
}


def ask(tmp_path: Path, minilm: MiniLMEmbedder, questions: list[str]) -> list[AnswerResult]:
    return extractive_answers(FILES, tmp_path, minilm, questions)


def test_a_question_about_what_nothing_retrieved_speaks_of_is_refused(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    hairdresser, bikes, wheelchair = ask(
        tmp_path,
        minilm,
        [
            "Is there a hairdresser at the hotel?",
            "Can we rent bikes at the hotel?",
            "I use a wheelchair, is there a lift at the hotel?",
        ],
    )
    assert hairdresser.refusal is not None
    assert hairdresser.refusal.reason == "not_answered"
    assert hairdresser.refusal.details[0]["not_found_nearby"] == ["hairdresser"]
    assert bikes.refusal is None
    assert "12 euros a day" in bikes.text
    assert wheelchair.refusal is None
    assert "lift" in wheelchair.text
