"""Which part of a question asks (`language/asking.py`): one reading for the question's focus,
the names the sources must hold and the conflict check."""

from __future__ import annotations

import pytest

from stream_rag.language.asking import asked, asking
from stream_rag.language.focus import focus_words


@pytest.mark.parametrize(
    ("question", "what"),
    [
        # A situation told before the question is not what it asks.
        ("My boiler broke down in March, who pays for the repair?", "who pays for the repair?"),
        ("If I move house; can I keep my number?", "can I keep my number?"),
        ("Our kitchen flooded. What does the policy cover?", "What does the policy cover?"),
        # A question before the turn asks too: both halves are what it asks.
        (
            "Does the annual licence include support, can I try it first?",
            "Does the annual licence include support, can I try it first?",
        ),
        # Two asking sentences: each without its own situation.
        (
            "Is parking free? As a member, do I get a locker?",
            "Is parking free? do I get a locker?",
        ),
        # No sentence ends in "?": all of it asks.
        ("tell me the  opening hours", "tell me the opening hours"),
    ],
)
def test_what_a_question_asks(question: str, what: str) -> None:
    assert asked(question) == what


def test_the_asking_sentences_keep_their_situation_words() -> None:
    question = "I ordered the wrong size. Can I exchange it, and how long does it take?"
    assert asking(question) == "Can I exchange it, and how long does it take?"


def test_a_question_asked_before_the_turn_keeps_its_nouns_in_focus() -> None:
    # The second clause asks too; the first one's nouns are what the question is about.
    focus = focus_words("Does the annual licence come with phone support, can I try it first?")
    assert {"licence", "support"} <= set(focus)
