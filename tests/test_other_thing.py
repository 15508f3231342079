"""An FAQ entry asking about another thing of the kind the question asks about falls behind
(`language/question.other_thing`, `model/passages.OTHER_THING`): "the notice period" is not
"the probation period", however much the two entries share."""

from __future__ import annotations

import pytest

from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.language.question import other_thing, read_question
from stream_rag.model.extractive import SentenceVectors, select

STAFF = (
    "# Working for us: questions from new staff\n\n"
    "## How long is the probation period?\n"
    "Every new member of staff has a probation period of 6 months.\n\n"
    "## How much notice must I give when I resign?\n"
    "During probation you give one week's notice; after it, four weeks.\n\n"
    "## When is payday?\n"
    "Staff are paid on the last working day of each month.\n"
)


@pytest.mark.parametrize(
    ("question", "heading", "other"),
    [
        ("How long is the infectious period?", "What is the incubation period?", True),
        ("What is the annual fee?", "What is the cancellation fee?", True),
        # The heading's thing says no more than the question's, or they name no common kind.
        ("What is the fee?", "What is the cancellation fee?", False),
        ("What is the late payment penalty?", "What is the penalty for paying late?", False),
        ("How long is the infectious period?", "How long is someone infectious?", False),
        ("What is the monthly membership fee?", "How much is the monthly fee?", False),
        ("What is the annual fee?", "Q: What is the cancellation fee?", True),
        # A heading that asks nothing ("Cancellation fee") is no FAQ entry's question.
        ("What is the annual fee?", "The cancellation fee", False),
    ],
)
def test_an_entry_asking_of_another_thing(question: str, heading: str, other: bool) -> None:
    assert other_thing(read_question(question), heading) is other


def test_the_entry_about_the_thing_asked_wins(minilm: MiniLMEmbedder) -> None:
    # The probation entry shares "period" and "probation" with the question; it answers how
    # long probation lasts, not the notice asked about.
    chosen = select(
        "What is the notice period after probation?", {1: STAFF}, dense=SentenceVectors(minilm)
    )
    assert chosen
    assert chosen[0].text.startswith("During probation you give"), [c.text for c in chosen]
