"""Gate contexts kept by the blocks they digest, for the requests that retrieve the same ones.

A peak of support questions asks the same few things: each retrieves the same blocks, and a
model at temperature 0 writes the same sentences. A context built once (document frequencies,
weights, the cited blocks' term unions, verdicts already given) then serves all of them, so
the gate's work per answer is a lookup. Keyed by what the context is a pure function of: the
threshold and each block's chunk id, document id and text.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from ..gate.lexical import GateContext
from ..retrieve.hybrid import Block

_Key = tuple[float, tuple[tuple[str, str, str], ...]]


def build_context(blocks: Sequence[Block], threshold: float) -> GateContext:
    """A new context over `blocks`, from the features ingest stored with them."""
    return GateContext(
        [b.text for b in blocks],
        [b.doc_id for b in blocks],
        threshold=threshold,
        features=[b.features for b in blocks],
    )


class ContextCache:
    """The `capacity` most recently used contexts (thread-safe: built in worker threads)."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[_Key, GateContext] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, blocks: Sequence[Block], threshold: float) -> GateContext:
        key: _Key = (threshold, tuple((b.chunk_id, b.doc_id, b.text) for b in blocks))
        with self._lock:
            context = self._items.get(key)
            if context is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return context
            self.misses += 1
        context = build_context(blocks, threshold)  # two threads may both build it: harmless
        if self.capacity > 0:
            with self._lock:
                self._items[key] = context
                while len(self._items) > self.capacity:
                    self._items.popitem(last=False)
        return context
