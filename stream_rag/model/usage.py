"""Token counts the upstream chat model reports, summed over one answer's model calls.

The model backends are shared by concurrent answers, so the counts travel in a context
variable: each answer starts its own `Usage` in its task, and the backend adds the `usage`
object of its reply to whatever answer it is serving.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reported: bool = False  # whether any call reported counts (the local generator never does)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, report: Mapping[str, object]) -> None:
        prompt, completion = report.get("prompt_tokens"), report.get("completion_tokens")
        if isinstance(prompt, int) and isinstance(completion, int):
            self.prompt_tokens += max(0, prompt)
            self.completion_tokens += max(0, completion)
            self.reported = True

    def to_json(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


_CURRENT: ContextVar[Usage | None] = ContextVar("stream_rag_usage", default=None)


def start() -> Usage:
    """A fresh count for the answer running in this task."""
    usage = Usage()
    _CURRENT.set(usage)
    return usage


def record(report: object) -> None:
    """Add a model reply's `usage` object to the current answer's count, if there is one."""
    usage = _CURRENT.get()
    if usage is not None and isinstance(report, Mapping):
        usage.add(report)
