"""Follow-up questions: earlier turns (questions and their verified answers), checked, and a
follow-up resolved into a question retrieval can answer on its own.

Without a model, a follow-up ("And how do I claim it?") carries the subject terms of the
question before it; with `STREAM_RAG_CONDENSE=llm` the chat model rewrites it. Either way the
rewritten question only steers retrieval and the pre-generation checks: the gate judges each
sentence against this turn's blocks alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidFieldError
from ..text import tokenize
from .limits import MAX_QUESTION_CHARS, check_history_chars

MAX_TURNS = 50  # turns accepted in a request
PROMPT_TURNS = 3  # turns shown to the model and used to resolve a follow-up
MAX_ANSWER_CHARS = 8000

# A question leaning on the one before: a pronoun or a "what about", or too few words of its
# own to be searched alone.
_LEANS = re.compile(
    r"^\W*(?:and|but|also|so|then|what about|how about|and what about)\b"
    r"|\b(?:it|its|it's|they|them|their|theirs|this|that|these|those|there|one|ones|same)\b",
    re.IGNORECASE,
)
# Words of how a question is asked rather than what it is about.
_ASKING = frozenset(
    "how what when where which who whom whose why can could would should may might will shall "
    "do does did is are was were am be been get got tell know please need want like way "
    "long much many often soon far use take make go".split()
)


@dataclass(frozen=True, slots=True)
class Turn:
    """An earlier question and the verified answer it got ("" if it got none)."""

    question: str
    answer: str = ""

    def to_json(self) -> dict[str, str]:
        return {"question": self.question, "answer": self.answer}


def history_of(value: object, field: str = "history") -> tuple[Turn, ...]:
    """`[{"question": str, "answer"?: str}, ...]` checked; None or absent is no history."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidFieldError(f"'{field}' must be a list of {{question, answer}} objects")
    if len(value) > MAX_TURNS:
        raise InvalidFieldError(f"'{field}' holds more than {MAX_TURNS} turns")
    turns: list[Turn] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise InvalidFieldError(f"'{field}[{i}]' must be an object")
        question, answer = item.get("question"), item.get("answer", "")
        if not isinstance(question, str) or not question.strip():
            raise InvalidFieldError(f"'{field}[{i}].question' must be a non-empty string")
        if answer is None:
            answer = ""
        if not isinstance(answer, str):
            raise InvalidFieldError(f"'{field}[{i}].answer' must be a string")
        if len(question) > MAX_QUESTION_CHARS or len(answer) > MAX_ANSWER_CHARS:
            raise InvalidFieldError(f"'{field}[{i}]' is too long")
        turns.append(Turn(question, answer))
    check_history_chars(sum(len(t.question) + len(t.answer) for t in turns), field)
    return tuple(turns)


def turns_from_messages(messages: Sequence[tuple[str, str]]) -> tuple[Turn, ...]:
    """Earlier turns of an OpenAI-style conversation `[(role, text), ...]` whose last user
    message is the question: each user message with the assistant reply that follows it."""
    last_user = max((i for i, (role, _) in enumerate(messages) if role == "user"), default=0)
    turns: list[Turn] = []
    pending: str | None = None
    for role, text in messages[:last_user]:
        if role == "user" and text.strip():
            if pending is not None:
                turns.append(Turn(pending))
            pending = text
        elif role == "assistant" and pending is not None:
            turns.append(Turn(pending, text))
            pending = None
    if pending is not None:
        turns.append(Turn(pending))
    return tuple(turns[-MAX_TURNS:])


def subject_words(question: str) -> list[str]:
    """The question's content words, as written, in order: "Nimbus Blender warranty cover"."""
    words = re.findall(r"[^\W_][\w'’-]*", question)
    kept = {t for t in tokenize(question)}
    out: list[str] = []
    for word in words:
        lowered = word.casefold()
        # "Wi-Fi" and "pour-over" tokenise in parts: one content part keeps the word.
        parts = {lowered} if lowered in kept else set(tokenize(word)) & kept
        if parts and lowered not in _ASKING and word not in out:
            out.append(word)
    return out


def leans_on_history(question: str) -> bool:
    """Whether the question needs the turn before it to be understood."""
    own = [w for w in subject_words(question) if w.casefold() not in _ASKING]
    return bool(_LEANS.search(question)) or len(own) <= 1


def resolve(question: str, history: Sequence[Turn]) -> str:
    """A follow-up with the subject words of the earlier questions it leans on appended, for
    retrieval; a question that stands alone is returned unchanged."""
    recent = [t.question for t in history[-PROMPT_TURNS:]]
    if not recent or not leans_on_history(question):
        return question
    context = resolve(recent[-1], [Turn(q) for q in recent[:-1]])
    present = {w.casefold() for w in subject_words(question)}
    carried = [w for w in subject_words(context) if w.casefold() not in present]
    if not carried:
        return question
    # The question's own words twice: what it adds outweighs the subject carried over.
    own = " ".join(subject_words(question))
    return f"{question} {own} ({' '.join(carried)})" if own else f"{question} ({' '.join(carried)})"


CONDENSE_PROMPT = """\
Rewrite the last question of this conversation as one standalone question that names what it \
is about, using the earlier turns. Reply with the question only, in the language of the \
question. If it already stands alone, repeat it unchanged."""


def condense_request(question: str, history: Sequence[Turn]) -> str:
    """The user message of the optional model rewrite (`STREAM_RAG_CONDENSE=llm`)."""
    lines = []
    for turn in history[-PROMPT_TURNS:]:
        lines.append(f"Q: {turn.question.strip()}")
        if turn.answer.strip():
            lines.append(f"A: {turn.answer.strip()}")
    lines.append(f"Last question: {question.strip()}")
    return "\n".join(lines)
