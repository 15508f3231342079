"""Earlier turns of a conversation as a request gives them (`history`, or OpenAI-style
`messages`), checked. A follow-up is then resolved for retrieval: without a model it carries
the subject words of the question before it (language/followups.py); with
`STREAM_RAG_CONDENSE=llm` the chat model rewrites it (prompt_format.py's condense request).
Either way the rewritten question only steers retrieval and the pre-generation checks: the
gate judges each sentence against this turn's blocks alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidFieldError
from ..types import Turn
from .limits import MAX_QUESTION_CHARS, check_history_chars

MAX_TURNS = 50  # turns accepted in a request
MAX_ANSWER_CHARS = 8000


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
