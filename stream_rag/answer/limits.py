"""How long a question and a conversation may be, in characters, on every endpoint (and in
every pipeline step) that takes them."""

from __future__ import annotations

from ..errors import InvalidFieldError

MAX_QUESTION_CHARS = 4000
# All earlier turns together (`history`, or `messages` before the last user message).
MAX_HISTORY_CHARS = 16000


def check_question(question: str, field: str = "question") -> str:
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidFieldError(f"'{field}' is longer than {MAX_QUESTION_CHARS} characters")
    return question


def check_history_chars(total: int, field: str) -> None:
    if total > MAX_HISTORY_CHARS:
        raise InvalidFieldError(
            f"'{field}' holds more than {MAX_HISTORY_CHARS} characters in total"
        )
