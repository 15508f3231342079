"""Work kept by the blocks it digests, for the requests that retrieve the same ones.

A peak of support questions asks the same few things: each retrieves the same blocks, and a
model at temperature 0 writes the same sentences. A gate context built once (document
frequencies, weights, the cited blocks' term unions, verdicts already given) then serves all of
them, and so does the pre-generation checks' outcome for the same question, so the gate's work
per answer is a lookup. Each is keyed by what it is a pure function of.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Generic, TypeVar
from weakref import WeakKeyDictionary

from ..gate.lexical import GateContext, Verdict
from ..retrieve.hybrid import Block

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def build_context(blocks: Sequence[Block], threshold: float, mode: str = "strict") -> GateContext:
    """A new context over `blocks`, from the features ingest stored with them. A block's spans
    are read at the first sentence citing it, not here: an answer reads few of them
    (docs/decisions/gate-cost-per-block-work-once.md)."""
    return GateContext(
        [b.text for b in blocks],
        [b.doc_id for b in blocks],
        threshold=threshold,
        features=[b.features for b in blocks],
        mode=mode,
    )


class Kept(Generic[K, V]):
    """The `capacity` most recently used values (thread-safe: built in worker threads)."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, build: Callable[[], V]) -> V:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
            self.misses += 1
        value = build()  # two threads may both build it: harmless
        self.put(key, value)
        return value

    def find(self, key: K) -> V | None:
        """The value kept for `key` (counted as a hit), or None (a miss)."""
        with self._lock:
            value = self._items.get(key)
            if value is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: K, value: V) -> None:
        if self.capacity > 0:
            with self._lock:
                self._items[key] = value
                self._items.move_to_end(key)
                while len(self._items) > self.capacity:
                    self._items.popitem(last=False)


class ContextCache:
    """Gate contexts by threshold and each block's chunk id, document id and text."""

    def __init__(self, capacity: int = 256) -> None:
        self._kept: Kept[Hashable, GateContext] = Kept(capacity)

    @property
    def hits(self) -> int:
        return self._kept.hits

    @property
    def misses(self) -> int:
        return self._kept.misses

    def get(self, blocks: Sequence[Block], threshold: float, mode: str = "strict") -> GateContext:
        key = (threshold, mode, tuple((b.chunk_id, b.doc_id, b.text) for b in blocks))
        return self._kept.get(key, lambda: build_context(blocks, threshold, mode))


class KeptVerdicts:
    """Every gate stage's verdicts by sentence, for each gate context still in use: with the
    lexical and semantic stages only, a verdict is a pure function of the context and the
    sentence (the lexical one is kept by the context itself; this keeps the semantic stage's
    too, a model call otherwise). Used on the event loop only."""

    def __init__(self, per_context: int = 256) -> None:
        self.per_context = per_context
        self._by: WeakKeyDictionary[GateContext, dict[str, Verdict]] = WeakKeyDictionary()

    def remembering(
        self, context: GateContext, judge: Callable[[str], Awaitable[Verdict]]
    ) -> Callable[[str], Awaitable[Verdict]]:
        """`judge` (every stage over `context`), giving a sentence judged before its verdict."""
        kept = self._by.setdefault(context, {})

        async def remembered(sentence: str) -> Verdict:
            verdict = kept.get(sentence)
            if verdict is None:
                verdict = await judge(sentence)
                if len(kept) >= self.per_context:
                    kept.clear()
                kept[sentence] = verdict
            return verdict

        return remembered


def precheck_key(question: str, blocks: Sequence[Block], floor: float, conflicts: bool) -> Hashable:
    """What the evidence score and the lexical conflict check read: the question, the floor,
    and every field of the blocks that a refusal's score, message or details can show."""
    return (
        question,
        floor,
        conflicts,
        tuple(_block_key(b) for b in blocks),
    )


def _block_key(b: Block) -> Hashable:
    shown = (b.n, b.chunk_id, b.doc_id, b.version, b.sha256, b.name, b.filename, b.start, b.end)
    # `dated` decides a conflict's older side; `page` is in the refusal's source links.
    return (*shown, b.page, b.dated, b.text, tuple(sorted(b.scores.items())))
