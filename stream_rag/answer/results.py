"""What an answer is made of: per-request options, the prepared retrieval, each unit with its
verdict, the drafts of a non-streaming answer and its result."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..events import Dropped, Refusal, SentenceOut, Uncovered, block_ref
from ..gate.citations import strip_markers
from ..gate.lexical import GateContext, Verdict
from ..gate.segment import Segment
from ..model.usage import Usage
from ..retrieve.hybrid import Block
from ..types import Turn


@dataclass(frozen=True, slots=True)
class Options:
    """Per-request knobs; None falls back to the settings."""

    collection: str | None = None
    top_k: int | None = None
    min_evidence: float | None = None
    check_conflicts: bool | None = None
    gate_threshold: float | None = None
    history: tuple[Turn, ...] = ()  # earlier questions and verified answers


@dataclass(frozen=True, slots=True)
class Prepared:
    """What an answer needs before the model is called: blocks, a refusal or a gate context."""

    blocks: tuple[Block, ...]
    refusal: Refusal | None
    context: GateContext | None
    retrieve_ms: float
    checks_ms: float
    uncovered: tuple[Uncovered, ...] = ()  # parts of the question no block covers
    # The blocks in the order a chat model's prompt offers them (empty: retrieval's order).
    offered: tuple[Block, ...] = ()


@dataclass(frozen=True, slots=True)
class Judged:
    """A unit of the model's output with its verdict."""

    index: int
    segment: Segment
    verdict: Verdict

    def event(self, blocks: Sequence[Block]) -> SentenceOut | Dropped:
        if not self.verdict.ok:
            return Dropped(self.index, self.verdict.reason, self.verdict.stage)
        cited = [blocks[n - 1] for n in self.verdict.cited]
        return SentenceOut(self.index, strip_markers(self.segment.text), cited, self.segment.kind)

    def to_json(self) -> dict[str, object]:
        return {
            "index": self.index,
            "text": self.segment.text,
            "ok": self.verdict.ok,
            "reason": self.verdict.reason,
            "detail": self.verdict.detail,
            "cited": list(self.verdict.cited),
            "score": round(self.verdict.score, 4),
            "stage": self.verdict.stage,
            "scores": self.verdict.scores_json(),
        }


@dataclass(frozen=True, slots=True)
class Attempt:
    draft: str
    judged: tuple[Judged, ...]

    @property
    def passed(self) -> bool:
        return bool(self.judged) and all(j.verdict.ok for j in self.judged)

    def to_json(self) -> dict[str, object]:
        return {
            "draft": self.draft,
            "passed": self.passed,
            "verdicts": [j.to_json() for j in self.judged],
        }


@dataclass(frozen=True, slots=True)
class AnswerResult:
    """The non-streaming answer: verified sentences or a refusal, and every attempt."""

    question: str
    generator: str
    blocks: tuple[Block, ...]
    query: str = ""  # what retrieval searched: the question, or a follow-up resolved
    sentences: tuple[SentenceOut, ...] = ()
    refusal: Refusal | None = None
    attempts: tuple[Attempt, ...] = ()
    usage: Usage = field(default_factory=Usage)  # the upstream model's counts, all calls
    timings_ms: dict[str, float] = field(default_factory=dict)
    uncovered: tuple[Uncovered, ...] = ()  # parts of an answered question no source covers

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)

    def to_json(self) -> dict[str, object]:
        return {
            "question": self.question,
            "query": self.query or self.question,
            "generator": self.generator,
            "answer": self.text if self.refusal is None else None,
            "sentences": [s.data() for s in self.sentences],
            "refusal": None if self.refusal is None else self.refusal.data(),
            "uncovered": [u.data() for u in self.uncovered],
            "sources": [block_ref(b) for b in self.blocks],
            "attempts": [a.to_json() for a in self.attempts],
            "usage": self.usage.to_json() if self.usage.reported else None,
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }


def revision_request(attempt: Attempt, issued: int) -> str:
    """The concrete reasons a draft failed, as the user turn that asks for a new one."""
    lines = ["Your previous answer failed verification against the sources:"]
    if not attempt.judged:
        lines.append("- it contained no sentence.")
    for judged in attempt.judged:
        if not judged.verdict.ok:
            lines.append(
                f'- sentence {judged.index + 1} "{strip_markers(judged.segment.text)}": '
                f"{judged.verdict.reason} ({judged.verdict.detail})"
            )
    lines.append(
        f"Write the answer again. Cite only [1] to [{issued}], after every sentence; state only "
        "what the cited source says, with its numbers exactly as written; leave out anything "
        "the sources do not support. If the sources do not answer the question, say so in one "
        "sentence without a citation."
    )
    return "\n".join(lines)


@dataclass(slots=True)
class Tally:
    """What a streamed answer emitted and dropped, and when its first sentence went out."""

    units: int = 0
    dropped: int = 0
    tokens: int = 0
    first: float | None = None

    def count(self, event: SentenceOut | Dropped) -> SentenceOut | Dropped:
        self.units += 1
        if isinstance(event, Dropped):
            self.dropped += 1
        elif self.first is None:
            self.first = time.perf_counter()
        return event
