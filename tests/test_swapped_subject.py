"""An entry worded as the question but of another subject ("How long is someone infectious?"
in chickenpox.md, asked of mumps) is refused as `not_answered`; the same entry asked of its
own subject, or asked in other words ("delivery" for "shipping"), is answered."""

from __future__ import annotations

from pathlib import Path

from stream_rag.answer.results import AnswerResult
from stream_rag.embed.minilm import MiniLMEmbedder

from .answering import extractive_answers

FILES = {
    "chickenpox.md": (
        "# Chickenpox\n\n"
        "## How long is someone infectious?\n"
        "A person with chickenpox is infectious from 2 days before the spots appear until all "
        "the spots have crusted over.\n\n"
        "## Is there a vaccine?\n"
        "A chickenpox vaccine is available for people in close contact with someone with a "
        "weakened immune system.\n"
    ),
    "measles.md": (
        "# Measles\n\n"
        "## How is measles prevented?\n"
        "The MMR vaccine protects against measles, mumps and rubella. Two doses are given in "
        "childhood.\n"
    ),
    "club.md": (
        "# Do club members get free shipping?\n\n"
        "Club members get free standard shipping on every order, whatever its value.\n"
    ),
}


def ask(tmp_path: Path, minilm: MiniLMEmbedder, questions: list[str]) -> list[AnswerResult]:
    return extractive_answers(FILES, tmp_path, minilm, questions)


def test_an_entry_asked_of_another_subject_is_refused(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    mumps, chickenpox, delivery = ask(
        tmp_path,
        minilm,
        [
            "How long is someone with mumps infectious?",
            "How long is someone with chickenpox infectious?",
            "Do club members get free delivery?",
        ],
    )
    assert mumps.refusal is not None
    assert mumps.refusal.reason == "not_answered"
    assert mumps.refusal.details[0]["asked_of_other"] == ["mumps", "chickenpox"]
    assert chickenpox.refusal is None
    assert "crusted over" in chickenpox.text
    assert delivery.refusal is None
    assert "free standard shipping" in delivery.text
