"""The prompt: the rule to cite only the numbers of the blocks given (the layout of blocks,
turns and question is prompt_format.py's)."""

from __future__ import annotations

from collections.abc import Sequence

from ..prompt_format import user_message
from ..retrieve.hybrid import Block
from ..types import Message, Turn

SYSTEM = """\
You answer questions using only the numbered sources you are given.
Rules:
- Every sentence must end with the number of the source it comes from, in square brackets,
  for example: "Refunds take 5 to 10 business days [2]." Cite several as [1][3].
- Cite only the numbers listed under Sources ({numbers}). Never invent a number.
- State only what the cited source says; keep numbers, dates and amounts exactly as written.
- If the sources do not answer the question, say so in one sentence without a citation.
- Answer in the language of the question, in a few short sentences."""


def build_messages(
    question: str,
    blocks: Sequence[Block],
    feedback: str | None = None,
    history: Sequence[Turn] = (),
) -> list[Message]:
    """System rules, then earlier turns, sources and question; `feedback` asks for a
    corrected draft."""
    numbers = ", ".join(f"[{b.n}]" for b in blocks) or "none"
    user = user_message(question, blocks, history)
    messages = [Message("system", SYSTEM.format(numbers=numbers)), Message("user", user)]
    if feedback:
        messages.append(Message("user", feedback))
    return messages
