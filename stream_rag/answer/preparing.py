"""Retrieval and the checks before the model is called, for `Answerer` (pipeline.py): weak
or contradictory evidence refused, a question the blocks do not answer refused, the gate
context built, the blocks put in the order the prompt offers them; kept per question while
nothing they read has changed."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import replace

from ..config import Settings
from ..events import Refusal, Uncovered
from ..gate.lexical import DEFAULT_THRESHOLD, GateContext
from ..language.question import read_question
from ..model.llm import ChatModel
from ..retrieve.hybrid import Block, Retriever, SearchResult
from .answerable import answering_order, not_answered, read_blocks
from .conflicts import ConflictDetector, LexicalConflictDetector
from .contexts import ContextCache, Kept, precheck_key
from .evidence import Similarity
from .prechecks import NO_SOURCES, refusal, stale_or_current, uncovered
from .results import Options, Prepared

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


class Preparation:
    """`Answerer`'s steps before the model: set up by its constructor."""

    retriever: Retriever
    model: ChatModel
    settings: Settings
    detector: ConflictDetector
    entries: Similarity | None
    ranking: Similarity | None
    ranking_question: Callable[[str], Awaitable[object]] | None
    contexts: ContextCache
    prechecks: Kept[Hashable, Refused]
    prepared: Kept[Hashable, Prepared]

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
        if reading.unfound and retriever is not None:
            # A name the knowledge base has in a document retrieval left out ("Kestrel" in
            # about.md, asked with the price block alone) is asked about somewhere: the names
            # check in `refusal` reads the whole collection the same way.
            named = set(asked.names)
            unfound = tuple(
                w
                for w in reading.unfound
                if w not in named or not retriever.mentions(w, collection)
            )
            reading = replace(reading, unfound=unfound)
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

    def _offered(self, question: str, blocks: Sequence[Block]) -> tuple[Block, ...]:
        """The blocks in the order a chat model's prompt offers them: the answering block
        first (`answering_order`, blocking); the local generator ranks them itself."""
        if self.model.name == "local-extractive" or len(blocks) < 2:
            return tuple(blocks)
        return tuple(answering_order(question, blocks, self.ranking))


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
