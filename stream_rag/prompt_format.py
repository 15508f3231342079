"""The layout of the chat prompt: numbered source blocks, earlier turns and the question,
written by the answer pipeline (answer/prompt.py) and read back by the local models
(model/extractive.py, model/fake.py); also the request that asks a model to condense a
follow-up. The writers and readers live together so that they cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from .types import Turn

__all__ = [
    "CONDENSE_PROMPT",
    "HEADER_RE",
    "PROMPT_TURNS",
    "Source",
    "condense_request",
    "format_blocks",
    "format_history",
    "parse_blocks",
    "parse_history",
    "parse_question",
    "user_message",
]

PROMPT_TURNS = 3  # turns shown to the model and used to resolve a follow-up


class Source(Protocol):
    """What the prompt shows of a retrieved block (retrieve/hybrid.py's `Block`)."""

    @property
    def n(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def doc_id(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def framed(self) -> str: ...


HISTORY_HEADER = (
    "Earlier in this conversation (context for the question only: not a source, never cite it):"
)
# The block header line; the fake model and the local generator parse it back.
HEADER_RE = re.compile(r"^\[(\d+)\] (.*) \(id: (\S+), version (\d+)\)$", re.MULTILINE)


def format_blocks(blocks: Sequence[Source]) -> str:
    parts = [
        f"[{b.n}] {b.name} (id: {b.doc_id}, version {b.version})\n{b.framed.strip()}"
        for b in blocks
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


def user_message(question: str, blocks: Sequence[Source], history: Sequence[Turn] = ()) -> str:
    """Earlier turns (the last `PROMPT_TURNS`), the numbered sources, then the question."""
    earlier = format_history(history[-PROMPT_TURNS:]) if history else ""
    return f"{earlier}Sources:\n\n{format_blocks(blocks)}\n\nQuestion: {question.strip()}"


def parse_blocks(prompt: str) -> dict[int, str]:
    """Block texts by number, read back from a prompt made by `user_message`."""
    headers = list(HEADER_RE.finditer(prompt))
    blocks: dict[int, str] = {}
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else prompt.find("\n\nQuestion:")
        body = prompt[header.end() : end if end > header.end() else len(prompt)]
        blocks[int(header.group(1))] = body.strip()
    return blocks


def parse_history(prompt: str) -> list[Turn]:
    """Earlier turns, read back from a prompt made by `user_message`."""
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
