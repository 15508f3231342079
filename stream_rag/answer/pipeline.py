"""Answers: retrieve, check the evidence, prompt, generate, gate every sentence.

Nothing reaches the client unverified: a sentence is emitted only after the gate passed it
against the ORIGINAL text of the blocks it cites; a failing sentence is dropped whole. Weak or
contradictory evidence is refused before the model is called. The streaming and the
non-streaming paths share retrieval, the pre-generation checks, the prompt and the verdicts.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Hashable,
    Sequence,
)
from contextlib import aclosing
from dataclasses import replace
from typing import Protocol

import anyio

from ..config import Settings
from ..errors import StreamRagError
from ..events import Done, Dropped, Error, Event, Refusal, SentenceOut, Sources
from ..gate.citations import extract
from ..gate.judge import Stages
from ..gate.lexical import GateContext, Verdict, check_sentence
from ..gate.normalise import Readable, normalise_unit, readable
from ..gate.segment import Segment, SentenceBuffer, split_segments
from ..language.followups import resolve
from ..language.question import read_question
from ..lifecycle import Drain
from ..model.llm import ChatModel, ModelError
from ..model.usage import Usage
from ..model.usage import start as start_usage
from ..prompt_format import CONDENSE_PROMPT, condense_request
from ..retrieve.hybrid import Block, Retriever, SearchResult
from ..types import Message
from .conflicts import ConflictDetector, LexicalConflictDetector
from .contexts import ContextCache, Kept, KeptVerdicts
from .evidence import Similarity
from .limits import MAX_QUESTION_CHARS
from .preparing import Preparation, Refused
from .prompt import build_messages
from .refusals import not_answered as said_not_answered
from .results import (
    AnswerResult,
    Attempt,
    Judged,
    Options,
    Prepared,
    Tally,
    revision_request,
)
from .wording import Wording

__all__ = [
    "AnswerResult",
    "Answerer",
    "Attempt",
    "Judged",
    "Options",
    "Prepared",
    "Watcher",
    "revision_request",
]

log = logging.getLogger("stream_rag")
NOTHING_SUPPORTED = (
    "I could not give an answer that the sources support, so I am not answering. "
    "Try rephrasing the question, or read the sources listed."
)
UNSUPPORTED_ANSWER = (
    "Two drafts of the answer failed verification against the sources, so I am not answering."
)


class Watcher(Protocol):
    """Sees every answer's events pass: the app's metrics (http/telemetry.py's `Telemetry`)."""

    def watch(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]: ...


class Answerer(Preparation):
    """The answer pipelines: streamed events (`stream`) and a whole result (`answer`)."""

    def __init__(
        self,
        retriever: Retriever,
        model: ChatModel,
        settings: Settings,
        *,
        detector: ConflictDetector | None = None,
        telemetry: Watcher | None = None,
        stages: Stages | None = None,
        entries: Similarity | None = None,
        ranking: Similarity | None = None,
        ranking_question: Callable[[str], Awaitable[object]] | None = None,
    ) -> None:
        self.retriever = retriever
        self.model = model
        self.settings = settings
        self.detector = detector or LexicalConflictDetector()
        self.telemetry = telemetry
        self.stages = stages or Stages()
        # Cosines of a block's FAQ entries to the question (see `entry_evidence`).
        self.entries = entries
        # Cosines of sentences to the question for the answerability check: the local
        # generator's own (one cache of sentence vectors), else the entries'.
        self.ranking = ranking or entries
        # Embeds a question for `ranking` ahead of the worker-thread checks, where it can be
        # batched with other requests' questions (a chat model's ranking; None: in the checks).
        self.ranking_question = ranking_question
        self.contexts = ContextCache()
        # The checks' outcome for a question over the same blocks (lexical detector only: a
        # plugged-in one may not be a pure function of its input).
        self.prechecks: Kept[Hashable, Refused] = Kept()
        # Retrieval, checks and gate context for a question, while the store and the index
        # are unchanged (see `_prepared_key`).
        self.prepared: Kept[Hashable, Prepared] = Kept()
        self.verdicts = KeptVerdicts()
        # Refusal messages in the question's language (a bad wording file fails here, at start).
        self.wording = Wording.build(
            settings.language, settings.refusal_texts, settings.not_answered_text
        )
        # The app replaces this with its own, which SIGTERM sets off.
        self.drain = Drain(settings.drain_s)

    # -- shared steps -----------------------------------------------------------------------

    async def retrieve(self, question: str, options: Options) -> SearchResult:
        return await self.retriever.search(
            read_question(question), collection=options.collection, top_k=options.top_k
        )

    async def resolve(self, question: str, options: Options) -> str:
        """What to search for: a follow-up resolved with the earlier turns."""
        history, how = options.history, self.settings.condense
        if not history or how == "off":
            return question
        if how == "llm" and self.model.name != "local-extractive":
            messages = [
                Message("system", CONDENSE_PROMPT),
                Message("user", condense_request(question, history)),
            ]
            with contextlib.suppress(ModelError):
                rewritten = " ".join((await self._complete(messages)).split())[:MAX_QUESTION_CHARS]
                if rewritten:
                    return rewritten
        return resolve(question, history)

    def _judge(
        self, context: GateContext | None, blocks: Sequence[Block]
    ) -> Callable[[str], Awaitable[Verdict]]:
        """Every gate stage for this request; without a context (the ungated load-test
        baseline) `_verdict`'s pass-through."""
        if context is None:

            async def unchecked(sentence: str) -> Verdict:
                return _verdict(sentence, None, blocks)

            return unchecked
        judge = self.stages.judge(context, [b.chunk_id for b in blocks])
        if self.stages.verifier is not None:
            return judge  # a remote opinion within a time budget: not a pure function
        return self.verdicts.remembering(context, judge)

    # -- streaming --------------------------------------------------------------------------

    def stream(self, question: str, options: Options | None = None) -> AsyncIterator[Event]:
        """The gated answer as events (counted in the telemetry, when there is one)."""
        events = self._guarded(question, options or Options())
        return events if self.telemetry is None else self.telemetry.watch(events)

    async def _guarded(self, question: str, options: Options) -> AsyncGenerator[Event, None]:
        """The answer's events; the last is always `done` or `error`, whatever happens inside
        (a deadline, the server shutting down, a bug)."""
        deadline = anyio.current_time() + self.settings.answer_timeout_s
        last: Event | None = None
        try:
            async with aclosing(self._stream(question, options)) as events:
                while True:
                    # The guard spans one wait for the next event, never a yield.
                    with self.drain.guard(deadline) as scope:
                        try:
                            last = await events.__anext__()
                        except StopAsyncIteration:
                            break
                    if scope.cancelled_caught:
                        error = self.drain.reason()
                        yield Error(error.code, error.message)
                        return
                    yield last
        except StreamRagError as exc:
            yield Error(exc.code, exc.message)
            return
        except Exception:
            log.exception("the answer to %r failed", question[:200])
            yield Error("internal_error", "the answer failed on the server")
            return
        if not isinstance(last, Done | Error):
            yield Error("internal_error", "the answer ended without a result")

    async def _stream(self, question: str, options: Options) -> AsyncGenerator[Event, None]:
        started = time.perf_counter()
        usage = start_usage()
        prepared = await self.prepare(await self.resolve(question, options), options)
        blocks = prepared.blocks
        yield Sources(blocks, self.model.name)
        if prepared.refusal is not None:
            _report(question, prepared.refusal)
            yield self.worded(question, prepared.refusal)
            yield Done(0, 0, None, _ms(started), 0, _reported(usage))
            return
        context = prepared.context
        judge = self._judge(context, blocks)
        texts = [b.text for b in blocks]
        buffer = SentenceBuffer()
        text = Readable()
        tally = Tally()
        units: list[Judged] = []

        async def judged(segment: Segment) -> SentenceOut | Dropped:
            # Sentences go out in order: a grey one holds back those behind it only for as
            # long as its second stage takes.
            units.append(await judge_unit(judge, tally.units, segment, texts))
            return tally.count(units[-1].event(blocks))

        try:
            messages = build_messages(question, prepared.offered or blocks, history=options.history)
            async with aclosing(self.model.stream(messages)) as pieces:
                async for piece in pieces:
                    tally.tokens += 1
                    for segment in buffer.feed(text.feed(piece)):
                        yield await judged(segment)
            for segment in [*buffer.feed(text.close()), *buffer.close()]:
                yield await judged(segment)
        except ModelError as exc:
            yield Error(exc.code, exc.message)
            return
        emitted = tally.units - tally.dropped
        if not emitted:
            refused = said_not_answered(units) or Refusal(
                "no_supported_sentences", NOTHING_SUPPORTED
            )
            yield self.worded(question, refused)
        ttfs = None if tally.first is None else (tally.first - started) * 1000
        yield Done(
            emitted,
            tally.dropped,
            ttfs,
            _ms(started),
            tally.tokens,
            _reported(usage),
            uncovered=prepared.uncovered if emitted else (),
        )

    # -- non-streaming ----------------------------------------------------------------------

    async def answer(self, question: str, options: Options | None = None) -> AnswerResult:
        """One verified answer. A draft passes when every sentence passes; a failing draft is
        regenerated once with the concrete reasons, and a second failure is a refusal."""
        deadline = anyio.current_time() + self.settings.answer_timeout_s
        with self.drain.guard(deadline):
            return await self._answer(question, options or Options())
        raise self.drain.reason()  # reached only when the guard cut the answer short

    async def _answer(self, question: str, options: Options) -> AnswerResult:
        started = time.perf_counter()
        usage = start_usage()
        query = await self.resolve(question, options)
        prepared = await self.prepare(query, options)
        blocks = prepared.blocks
        timings = {"retrieve": prepared.retrieve_ms, "checks": prepared.checks_ms}
        base = AnswerResult(
            question, self.model.name, tuple(blocks), query, usage=usage, timings_ms=timings
        )
        if prepared.refusal is not None:
            _report(question, prepared.refusal)
            return replace(base, refusal=self.worded(question, prepared.refusal))
        context = prepared.context
        judge = self._judge(context, blocks)
        attempts: list[Attempt] = []
        feedback: str | None = None
        offered = prepared.offered or blocks
        for _ in range(2):
            draft = await self._complete(
                build_messages(question, offered, feedback, history=options.history)
            )
            judged = tuple(
                [
                    await judge_unit(judge, i, s, [b.text for b in blocks])
                    for i, s in enumerate(split_segments(draft))
                ]
            )
            attempt = Attempt(draft, judged)
            attempts.append(attempt)
            if attempt.passed:
                sentences = tuple(j.event(blocks) for j in judged)
                timings["total"] = _ms(started)
                return replace(
                    base,
                    sentences=tuple(s for s in sentences if isinstance(s, SentenceOut)),
                    attempts=tuple(attempts),
                    uncovered=prepared.uncovered,
                )
            feedback = revision_request(attempt, len(blocks))
        timings["total"] = _ms(started)
        # A second draft that again says the sources do not answer is refused as the stream
        # refuses it, saying so; any other failing draft is an unsupported answer.
        refusal = said_not_answered(attempts[-1].judged) or Refusal(
            "unsupported_answer", UNSUPPORTED_ANSWER
        )
        return replace(base, refusal=self.worded(question, refusal), attempts=tuple(attempts))

    def worded(self, question: str, refusal: Refusal) -> Refusal:
        """`refusal` in the language `question` is written in, where that has wording."""
        return self.wording.localise(refusal, read_question(question).language)

    async def _complete(self, messages: list[Message]) -> str:
        parts: list[str] = []
        async with aclosing(self.model.stream(messages)) as pieces:
            async for piece in pieces:
                parts.append(piece)
        return readable("".join(parts))


async def judge_unit(
    judge: Callable[[str], Awaitable[Verdict]],
    index: int,
    segment: Segment,
    blocks: Sequence[str] = (),
) -> Judged:
    """`segment` normalised (gate/normalise.py) against the issued `blocks`' texts and judged:
    the client is shown exactly the string the gate read, or nothing when normalising it would
    change what a reader sees."""
    seen = normalise_unit(segment.text, blocks)
    unit = segment if seen.text == segment.text else replace(segment, text=seen.text)
    if seen.refused is not None:
        _, citations = extract(seen.text)
        cited = tuple(dict.fromkeys(c.n for c in citations))
        return Judged(index, unit, Verdict(False, "hidden_text", cited, 0.0, seen.refused))
    return Judged(index, unit, await judge(unit.text))


def _verdict(sentence: str, context: GateContext | None, blocks: Sequence[Block]) -> Verdict:
    """The gate's verdict; without a context (`STREAM_RAG_UNGATED_BASELINE`, a load-test
    baseline only) every unit passes, citing whichever issued blocks it names."""
    if context is not None:
        return check_sentence(sentence, context)
    _, citations = extract(sentence)
    cited = tuple(dict.fromkeys(c.n for c in citations if 1 <= c.n <= len(blocks)))
    return Verdict(True, "ok", cited, 0.0, "not checked (ungated baseline)")


def _report(question: str, refusal: Refusal) -> None:
    """Sources that disagree are the team's to settle, not only the visitor's to read: each
    such refusal is logged with both sides (the admin listing is `GET /v1/insights`)."""
    if refusal.reason != "conflicting_sources":
        return
    pairs = [
        f"{_logged(d['a'], d.get('stale') == 'a')} vs {_logged(d['b'], d.get('stale') == 'b')}"
        for d in refusal.details
        if isinstance(d.get("a"), dict) and isinstance(d.get("b"), dict)
    ]
    log.warning("conflicting sources for %r: %s", question[:200], "; ".join(pairs))


def _logged(side: dict[str, object], stale: bool) -> str:
    """One side of a conflict as the log names it: document, version, date, values."""
    dated = f" updated {side['dated']}" if side.get("dated") else " undated"
    older = " (older)" if stale else ""
    return f"{side['name']} v{side['version']}{dated}{older} {side['values']}"


def _reported(usage: Usage) -> dict[str, int] | None:
    return usage.to_json() if usage.reported else None


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
