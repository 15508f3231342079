"""The prompt: numbered blocks `[1]..[n]` and the rule to cite only those numbers."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..retrieve.hybrid import Block
from ..types import Message
from .conversation import PROMPT_TURNS, Turn

SYSTEM = """\
You answer questions using only the numbered sources you are given.
Rules:
- Every sentence must end with the number of the source it comes from, in square brackets,
  for example: "Refunds take 5 to 10 business days [2]." Cite several as [1][3].
- Cite only the numbers listed under Sources ({numbers}). Never invent a number.
- State only what the cited source says; keep numbers, dates and amounts exactly as written.
- If the sources do not answer the question, say so in one sentence without a citation.
- Answer in the language of the question, in a few short sentences."""

HISTORY_HEADER = (
    "Earlier in this conversation (context for the question only: not a source, never cite it):"
)
# The block header line; the fake model and the local generator parse it back.
HEADER_RE = re.compile(r"^\[(\d+)\] (.*) \(id: (\S+), version (\d+)\)$", re.MULTILINE)


def format_blocks(blocks: Sequence[Block]) -> str:
    parts = [
        f"[{b.n}] {b.name} (id: {b.doc_id}, version {b.version})\n{b.text.strip()}" for b in blocks
    ]
    return "\n\n".join(parts)


def format_history(history: Sequence[Turn]) -> str:
    """Earlier turns, one line each (collapsed, so no text can pass for a block header)."""
    lines = [HISTORY_HEADER]
    for turn in history:
        lines.append(f"Q: {' '.join(turn.question.split())}")
        if turn.answer.strip():
            lines.append(f"A: {' '.join(turn.answer.split())}")
    return "\n".join(lines) + "\n\n"


def build_messages(
    question: str,
    blocks: Sequence[Block],
    feedback: str | None = None,
    history: Sequence[Turn] = (),
) -> list[Message]:
    """System rules, then earlier turns, sources and question; `feedback` asks for a
    corrected draft."""
    numbers = ", ".join(f"[{b.n}]" for b in blocks) or "none"
    earlier = format_history(history[-PROMPT_TURNS:]) if history else ""
    user = f"{earlier}Sources:\n\n{format_blocks(blocks)}\n\nQuestion: {question.strip()}"
    messages = [Message("system", SYSTEM.format(numbers=numbers)), Message("user", user)]
    if feedback:
        messages.append(Message("user", feedback))
    return messages


def parse_blocks(prompt: str) -> dict[int, str]:
    """Block texts by number, read back from a prompt made by `build_messages`."""
    headers = list(HEADER_RE.finditer(prompt))
    blocks: dict[int, str] = {}
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else prompt.find("\n\nQuestion:")
        body = prompt[header.end() : end if end > header.end() else len(prompt)]
        blocks[int(header.group(1))] = body.strip()
    return blocks


def parse_history(prompt: str) -> list[Turn]:
    """Earlier turns, read back from a prompt made by `build_messages`."""
    if not prompt.startswith(HISTORY_HEADER):
        return []
    section = prompt[len(HISTORY_HEADER) : prompt.find("\n\nSources:\n\n")]
    turns: list[Turn] = []
    for line in section.splitlines():
        if line.startswith("Q: "):
            turns.append(Turn(line[3:]))
        elif line.startswith("A: ") and turns:
            turns[-1] = Turn(turns[-1].question, line[3:])
    return turns


def parse_question(prompt: str) -> str:
    _, _, question = prompt.rpartition("\n\nQuestion: ")
    return question.strip()
