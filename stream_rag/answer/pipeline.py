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
from ..events import Done, Dropped, Error, Event, Refusal, SentenceOut, Sources, Uncovered
from ..gate.citations import extract
from ..gate.judge import Stages
from ..gate.lexical import DEFAULT_THRESHOLD, GateContext, Verdict, check_sentence
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
from .answerable import answering_order, not_answered, read_blocks
from .conflicts import ConflictDetector, LexicalConflictDetector
from .contexts import ContextCache, Kept, KeptVerdicts, precheck_key
from .evidence import Similarity
from .limits import MAX_QUESTION_CHARS
from .prechecks import NO_SOURCES, refusal, stale_or_current, uncovered
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
# What the checks before the model give: a refusal, or the gate context, the uncovered parts
# and the order the prompt offers the blocks in; and blocks a refusal cites that retrieval did
# not return (sent on after the sources).
Checked = tuple[
    Refusal | None,
    GateContext | None,
    float,
    tuple[Uncovered, ...],
    tuple[Block, ...],
    tuple[Block, ...],
]
# A refusal (None: go on) and the blocks it cites beyond the retrieved ones.
Refused = tuple[Refusal | None, tuple[Block, ...]]

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


class Answerer:
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

    async def prepare(self, question: str, options: Options) -> Prepared:
        """Retrieval, the pre-generation checks and the gate context, in one worker call, or
        what they gave the same question while nothing they read has changed since; `question`
        is what to search for (a follow-up already resolved)."""
        key = self._prepared_key(question, options)
        if key is not None and (kept := self.prepared.find(key)) is not None:
            return replace(kept, retrieve_ms=0.0, checks_ms=0.0)
        prepared = await self._prepare(question, options)
        if key is not None:
            self.prepared.put(key, prepared)
        return prepared

    def _prepared_key(self, question: str, options: Options) -> Hashable | None:
        """What `prepare` is a pure function of: the question, the options, and the store's
        and the index's generations, read before the search (a write during it moves them
        on, so what it found is never kept as current). None when that is not all: with a
        reranker (a remote service), a plugged-in conflict detector, or an index that counts
        no generation (a Qdrant server, which other processes may write)."""
        retriever = self.retriever
        index = getattr(getattr(retriever, "index", None), "generation", None)
        store = getattr(getattr(retriever, "store", None), "generation", None)
        if (
            not isinstance(index, int)
            or not isinstance(store, int)
            or retriever.reranker is not None
            or type(self.detector) is not LexicalConflictDetector
        ):
            return None
        # The history is not read here: `question` is already resolved with it.
        asked = (options.collection, options.top_k, options.min_evidence)
        return (question, store, index, *asked, options.check_conflicts, options.gate_threshold)

    async def _prepare(self, question: str, options: Options) -> Prepared:

        # In the worker thread that searched: ordering the blocks may embed the question.
        def checks(result: SearchResult) -> Checked:
            if self.settings.ungated_baseline:
                if not result.blocks:
                    return Refusal("no_sources", NO_SOURCES), None, 0.0, (), (), ()
                return None, None, 0.0, (), self._offered(question, result.blocks), ()
            t0 = time.perf_counter()
            refusal, added = self.checked(question, result.blocks, options)
            if refusal is not None:
                return refusal, None, _ms(t0), (), (), added
            context = self.gate_context_sync(result.blocks, options)
            offered = self._offered(question, result.blocks)
            return None, context, _ms(t0), uncovered(question, result.blocks), offered, ()

        if self.ranking_question is not None:
            await self.ranking_question(question)
        result, checked = await self.retriever.search_then(
            read_question(question), checks, collection=options.collection, top_k=options.top_k
        )
        refusal, context, checks_ms, gaps, offered, added = checked
        total = result.timings_ms.get("total", 0.0)
        blocks = (*result.blocks, *added)
        return Prepared(blocks, refusal, context, total, checks_ms, gaps, offered)

    def precheck(self, question: str, blocks: Sequence[Block], options: Options) -> Refusal | None:
        """Refuse before any model call when the evidence is weak or contradicts itself."""
        return self.checked(question, blocks, options)[0]

    def checked(self, question: str, blocks: Sequence[Block], options: Options) -> Refused:
        """`precheck`'s refusal, with the blocks it cites that are not among `blocks` (a
        document retrieval left out, looked up for the value the answer would give)."""
        if not blocks:
            return Refusal("no_sources", NO_SOURCES), ()
        floor = self.settings.min_evidence if options.min_evidence is None else options.min_evidence
        check = (
            self.settings.check_conflicts
            if options.check_conflicts is None
            else (options.check_conflicts)
        )
        collection = options.collection
        if check and type(self.detector) is not LexicalConflictDetector:
            return self._refusal(question, blocks, floor, check, collection)
        # The names check reads the whole collection: its index generation is in the key (an
        # index that counts none, a Qdrant server, is read every time).
        index = getattr(self.retriever, "index", None)
        generation = getattr(index, "generation", None)
        if index is not None and not isinstance(generation, int):
            return self._refusal(question, blocks, floor, check, collection)
        key = (precheck_key(question, blocks, floor, check), collection, generation)
        return self.prechecks.get(
            key, lambda: self._refusal(question, blocks, floor, check, collection)
        )

    def _refusal(
        self,
        question: str,
        blocks: Sequence[Block],
        floor: float,
        check: bool,
        collection: str | None = None,
    ) -> Refused:
        retriever = self.retriever
        refused = refusal(
            question,
            blocks,
            floor,
            check,
            detector=self.detector,
            entries=self.entries,
            mentions=None if retriever is None else lambda n: retriever.mentions(n, collection),
            ranking=self.ranking,
        )
        if refused is not None or floor <= 0 or not (check or self.settings.check_answered):
            return refused, ()
        asked = read_question(question)
        reading = read_blocks(asked, blocks, self.ranking)
        top = reading.top
        if check and retriever is not None and asked.asks_value and top and top.on_kind:
            # The value the answer would lead with, against the documents retrieval left out.
            lead = next(b for b in blocks if b.n == top.n)
            compared = {b.doc_id for b in blocks[: getattr(self.detector, "top_n", 4)]}
            others = retriever.look_up(top.text, collection, compared, len(blocks) + 1)
            retrieved = {b.chunk_id: b for b in blocks}
            others = [retrieved.get(b.chunk_id, b) for b in others]
            elsewhere = stale_or_current(asked, lead, others, self.detector, blocks)
            if elsewhere[0] is not None:
                return elsewhere
        if not self.settings.check_answered:
            return None, ()
        return not_answered(reading, self.settings.not_answered_text), ()

    def gate_context_sync(self, blocks: Sequence[Block], options: Options) -> GateContext:
        """The gate context over `blocks`: one built for the same blocks before, or new."""
        threshold = options.gate_threshold or self.settings.gate_threshold or DEFAULT_THRESHOLD
        return self.contexts.get(blocks, threshold, self.settings.gate_mode)

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

    def _offered(self, question: str, blocks: Sequence[Block]) -> tuple[Block, ...]:
        """The blocks in the order a chat model's prompt offers them: the answering block
        first (`answering_order`, blocking); the local generator ranks them itself."""
        if self.model.name == "local-extractive" or len(blocks) < 2:
            return tuple(blocks)
        return tuple(answering_order(question, blocks, self.ranking))

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
