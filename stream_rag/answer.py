"""The streaming answer: retrieve, prompt, stream the model, gate each sentence, emit events.

Nothing reaches the client unverified: a sentence is emitted only after the gate passed it
against the ORIGINAL text of the blocks it cites; a failing sentence is dropped whole.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from functools import partial

import anyio.to_thread

from .citations import strip_markers
from .config import Settings
from .events import Done, Dropped, Error, Event, Refusal, SentenceOut, Sources
from .gate import DEFAULT_THRESHOLD, GateContext, Verdict, check_sentence
from .llm import ChatModel, ModelError
from .prompt import build_messages
from .retrieve import Block, Retriever
from .segment import Segment, SentenceBuffer

NO_SOURCES = "Nothing in the knowledge base matches this question."
NOTHING_SUPPORTED = (
    "I could not give an answer that the sources support, so I am not answering. "
    "Try rephrasing the question, or read the sources listed."
)


@dataclass(frozen=True, slots=True)
class Judged:
    """A unit of the model's output with its verdict."""

    index: int
    segment: Segment
    verdict: Verdict

    def event(self, blocks: Sequence[Block]) -> SentenceOut | Dropped:
        if not self.verdict.ok:
            return Dropped(self.index, self.verdict.reason)
        cited = [blocks[n - 1] for n in self.verdict.cited]
        return SentenceOut(self.index, strip_markers(self.segment.text), cited, self.segment.kind)


class Answerer:
    def __init__(self, retriever: Retriever, model: ChatModel, settings: Settings) -> None:
        self.retriever = retriever
        self.model = model
        self.settings = settings

    @property
    def threshold(self) -> float:
        return self.settings.gate_threshold or DEFAULT_THRESHOLD

    async def stream(
        self, question: str, *, collection: str | None = None, top_k: int | None = None
    ) -> AsyncIterator[Event]:
        started = time.perf_counter()
        result = await self.retriever.search(question, collection=collection, top_k=top_k)
        blocks = result.blocks
        yield Sources(blocks, self.model.name)
        if not blocks:
            yield Refusal("no_sources", NO_SOURCES)
            yield Done(0, 0, None, _ms(started), 0)
            return
        # Building the context tokenises every block (~10 ms for 8 blocks): not on the loop.
        context = await anyio.to_thread.run_sync(
            partial(
                GateContext,
                [b.text for b in blocks],
                [b.doc_id for b in blocks],
                threshold=self.threshold,
            )
        )
        buffer = SentenceBuffer()
        tally = _Tally()

        def judge(segments: list[Segment]) -> list[SentenceOut | Dropped]:
            events = []
            for segment in segments:
                verdict = check_sentence(segment.text, context)
                events.append(tally.count(Judged(tally.units, segment, verdict).event(blocks)))
            return events

        try:
            async with aclosing(self.model.stream(build_messages(question, blocks))) as pieces:
                async for piece in pieces:
                    tally.tokens += 1
                    for event in judge(buffer.feed(piece)):
                        yield event
            for event in judge(buffer.close()):
                yield event
        except ModelError as exc:
            yield Error(exc.code, exc.message)
            return
        emitted = tally.units - tally.dropped
        if not emitted:
            yield Refusal("no_supported_sentences", NOTHING_SUPPORTED)
        ttfs = None if tally.first is None else (tally.first - started) * 1000
        yield Done(emitted, tally.dropped, ttfs, _ms(started), tally.tokens)


@dataclass(slots=True)
class _Tally:
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


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
