"""Query embeddings for concurrent requests: batched, cached, one embedding call at a time.

MiniLM on one short question is all tiny matrix multiplies: ten questions in one call cost
about what two cost alone. Requests that arrive while a call runs (or within `wait_s` of the
first) are embedded together in the next call, at most `max_batch` per call: past ~16 a batch
costs as much per question as 16 do, and a smaller one releases its questions to retrieval
sooner (a burst of 100 goes through in a pipeline of batches, not one long call). Only one
call runs at a time, so embedding never takes more than one worker thread. Recent questions
are answered from an LRU cache, and a question already on its way (in the open batch or the
running call) is waited for, not embedded again: at a peak many users ask the same thing at
once, before the first of them has filled the cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial

import anyio
import anyio.to_thread
import numpy as np

from .backends import Embedder, Vectors

Observer = Callable[[int], None]


@dataclass(slots=True)
class _Batch:
    texts: list[str] = field(default_factory=list)  # distinct, in the order they came
    callers: int = 0  # everyone waiting on this batch, repeats of a text included
    done: anyio.Event = field(default_factory=anyio.Event)
    vectors: Vectors | None = None
    error: BaseException | None = None


class QueryEmbedder:
    """Embeds one query per call; calls that overlap share one `embedder.embed` batch."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        cache_size: int = 1024,
        wait_s: float = 0.0015,
        max_batch: int = 16,
        on_batch: Observer | None = None,
        limiter: Callable[[], anyio.CapacityLimiter] | None = None,
    ) -> None:
        self.embedder = embedder
        self.cache_size = cache_size
        self.wait_s = wait_s
        self.max_batch = max_batch
        self.on_batch = on_batch
        # The worker threads the batches run on (anyio's default pool when None): the answers'
        # own, so that embedding takes no core more than retrieval and the checks do.
        self.limiter = limiter
        self.hits = 0
        self.misses = 0
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._open: _Batch | None = None
        self._pending: dict[str, _Batch] = {}  # texts of the open batch and the running call
        # One embedding call at a time: the next batch fills while this one runs. Made on
        # first use, inside the event loop.
        self._running: anyio.Lock | None = None
        # `embed_here` runs on worker threads: the cache and its own in-flight questions are
        # touched under this lock (the event loop takes it too).
        self._lock = threading.Lock()
        self._here: dict[str, Future[Vectors]] = {}

    def cached(self, text: str) -> Vectors | None:
        """The vector of `text` if a recent query embedded it (from any thread; no LRU touch)."""
        return self._cache.get(text)

    def embed_here(self, text: str, meanwhile: Callable[[], object] | None = None) -> Vectors:
        """`embed` on the calling (worker) thread, in one call of its own: from the cache, or
        waiting for another thread already embedding `text`, or embedding it here. For a
        search that does its other work in the same thread: no hand-off, no batch to wait on
        (int8 runs one text per call anyway, see ort.py). `meanwhile` is called when this
        thread embeds or waits (not on a cache hit): with an embedder that can `prepare`,
        once the tokens are ready and before the model runs without the GIL."""
        with self._lock:
            cached = self._hit(text)
            if cached is not None:
                return cached
            running = self._here.get(text)
            if running is None:
                mine: Future[Vectors] = Future()
                self._here[text] = mine
        if running is not None:
            if meanwhile is not None:
                meanwhile()
            return running.result()
        try:
            if self.on_batch is not None:
                self.on_batch(1)
            prepare = getattr(self.embedder, "prepare", None)
            run = prepare([text]) if callable(prepare) else partial(self.embedder.embed, [text])
            if meanwhile is not None:
                meanwhile()
            vector: Vectors = np.asarray(run(), dtype=np.float32)[0]
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        finally:
            with self._lock:
                del self._here[text]
        self._remember(text, vector)
        mine.set_result(vector)
        return vector

    def _hit(self, text: str) -> Vectors | None:
        """The cached vector (an LRU touch) or None, counting the hit or miss; under `_lock`."""
        cached = self._cache.get(text)
        if cached is None:
            self.misses += 1
            return None
        self._cache.move_to_end(text)
        self.hits += 1
        return cached

    async def embed(self, text: str) -> Vectors:
        """The L2-normalised vector of `text` (1-D)."""
        with self._lock:
            cached = self._hit(text)
        if cached is not None:
            return cached
        batch = self._pending.get(text)
        if batch is None and self._open is not None and len(self._open.texts) < self.max_batch:
            batch = self._open
            batch.texts.append(text)
            self._pending[text] = batch
        if batch is not None:
            batch.callers += 1
            await batch.done.wait()
        else:
            batch = _Batch([text], callers=1)
            self._open = batch
            self._pending[text] = batch
            # The leader runs the batch to the end even if its own client leaves: the others
            # in the batch wait for it.
            with anyio.CancelScope(shield=True):
                await self._run(batch)
        if batch.error is not None:
            raise batch.error
        assert batch.vectors is not None
        vector: Vectors = batch.vectors[batch.texts.index(text)]
        self._remember(text, vector)
        return vector

    async def _run(self, batch: _Batch) -> None:
        try:
            await anyio.sleep(self.wait_s)
            if self._running is None:
                self._running = anyio.Lock()
            async with self._running:
                if self._open is batch:
                    self._open = None  # closed: later arrivals start the next batch
                texts = list(batch.texts)
                if self.on_batch is not None:
                    self.on_batch(len(texts))
                limiter = None if self.limiter is None else self.limiter()
                # An embedder with a call of its own for a batch of questions is asked with it.
                embed = getattr(self.embedder, "embed_queries", self.embedder.embed)
                vectors = await anyio.to_thread.run_sync(embed, texts, limiter=limiter)
            batch.vectors = np.asarray(vectors, dtype=np.float32)
        except Exception as exc:
            batch.error = exc
        finally:
            if self._open is batch:
                self._open = None
            for text in batch.texts:
                if self._pending.get(text) is batch:
                    del self._pending[text]
            batch.done.set()

    def _remember(self, text: str, vector: Vectors) -> None:
        if self.cache_size <= 0:
            return
        with self._lock:
            self._cache[text] = vector
            self._cache.move_to_end(text)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
