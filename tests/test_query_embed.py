"""Query embeddings batched across concurrent callers, cached, one embedding call at a time."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence

import anyio
import anyio.lowlevel
import anyio.to_thread
import numpy as np
import pytest

from stream_rag.embed.backends import Vectors
from stream_rag.embed.minilm import SMALL_CALL_TOKENS, MiniLMEmbedder
from stream_rag.embed.queries import QueryEmbedder


class RecordingEmbedder:
    """Deterministic vectors from a hash; records each call, can hold a call until released."""

    name = "recording"
    dim = 8

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.release = threading.Event()
        self.release.set()
        self.fail = False

    def vector(self, text: str) -> Vectors:
        raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[:32], dtype=np.uint8)
        v = raw[: self.dim].astype(np.float32) + 1
        out: Vectors = v / np.linalg.norm(v)
        return out

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        self.release.wait(30)
        if self.fail:
            raise RuntimeError("backend down")
        return np.stack([self.vector(t) for t in texts])


async def until(condition: Callable[[], bool]) -> None:
    """Yield to the other tasks until `condition` holds (a checkpoint loop, not a timed wait)."""
    with anyio.fail_after(30):
        while not condition():
            await anyio.lowlevel.checkpoint()


@pytest.mark.anyio
async def test_overlapping_queries_share_one_call_and_get_their_own_vectors() -> None:
    embedder = RecordingEmbedder()
    sizes: list[int] = []
    queries = QueryEmbedder(embedder, on_batch=sizes.append)
    results: dict[str, Vectors] = {}

    async def ask(text: str) -> None:
        results[text] = await queries.embed(text)

    embedder.release.clear()  # the first call blocks: later questions pile up behind it
    async with anyio.create_task_group() as group:
        group.start_soon(ask, "first")
        await until(lambda: len(embedder.calls) == 1)
        for i in range(5):
            group.start_soon(ask, f"q{i}")
        group.start_soon(ask, "q0")  # the same question twice in one batch: embedded once
        await until(lambda: queries._open is not None and queries._open.callers == 6)
        embedder.release.set()
    assert embedder.calls == [["first"], ["q0", "q1", "q2", "q3", "q4"]]
    assert sizes == [1, 5]
    for text, vector in results.items():
        np.testing.assert_array_equal(vector, embedder.vector(text))


@pytest.mark.anyio
async def test_a_question_already_being_embedded_is_waited_for_not_embedded_again() -> None:
    embedder = RecordingEmbedder()
    queries = QueryEmbedder(embedder)
    results: list[tuple[str, Vectors]] = []

    async def ask(text: str) -> None:
        results.append((text, await queries.embed(text)))

    embedder.release.clear()  # "peak" is in the running call when its repeats arrive
    async with anyio.create_task_group() as group:
        group.start_soon(ask, "peak")
        await until(lambda: len(embedder.calls) == 1)
        for _ in range(3):
            group.start_soon(ask, "peak")
        group.start_soon(ask, "other")
        await until(lambda: queries._open is not None and queries._open.texts == ["other"])
        await until(lambda: queries._pending["peak"].callers == 4)
        embedder.release.set()
    assert embedder.calls == [["peak"], ["other"]]
    assert sorted(text for text, _ in results) == ["other"] + ["peak"] * 4
    for text, vector in results:
        np.testing.assert_array_equal(vector, embedder.vector(text))
    assert queries._pending == {}


@pytest.mark.anyio
async def test_repeated_question_comes_from_the_cache_and_the_cache_is_bounded() -> None:
    embedder = RecordingEmbedder()
    queries = QueryEmbedder(embedder, cache_size=2, wait_s=0)
    await queries.embed("a")
    await queries.embed("a")
    assert embedder.calls == [["a"]]
    assert (queries.hits, queries.misses) == (1, 1)
    await queries.embed("b")
    await queries.embed("c")  # evicts "a", the least recently used
    await queries.embed("a")
    assert embedder.calls == [["a"], ["b"], ["c"], ["a"]]


@pytest.mark.anyio
async def test_a_failed_call_fails_every_caller_in_its_batch_and_is_not_cached() -> None:
    embedder = RecordingEmbedder()
    queries = QueryEmbedder(embedder)
    embedder.fail = True
    errors: list[str] = []

    async def ask(text: str) -> None:
        try:
            await queries.embed(text)
        except RuntimeError as exc:
            errors.append(f"{text}: {exc}")

    async with anyio.create_task_group() as group:
        group.start_soon(ask, "x")
        group.start_soon(ask, "y")
    assert sorted(errors) == ["x: backend down", "y: backend down"]
    embedder.fail = False
    np.testing.assert_array_equal(await queries.embed("x"), embedder.vector("x"))


@pytest.mark.anyio
async def test_a_leader_that_leaves_still_serves_the_rest_of_its_batch() -> None:
    embedder = RecordingEmbedder()
    queries = QueryEmbedder(embedder)
    embedder.release.clear()
    got: list[Vectors] = []

    async def follower() -> None:
        got.append(await queries.embed("follower"))

    scopes: list[anyio.CancelScope] = []

    async def leader() -> None:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            await queries.embed("leader")

    async with anyio.create_task_group() as group:
        group.start_soon(leader)
        await until(lambda: queries._open is not None)
        group.start_soon(follower)
        await until(lambda: queries._open is None or len(queries._open.texts) == 2)
        scopes[0].cancel()
        embedder.release.set()
    assert len(got) == 1
    np.testing.assert_array_equal(got[0], embedder.vector("follower"))
    assert embedder.calls == [["follower", "leader"]] or embedder.calls == [["leader", "follower"]]


def wait_for(condition: Callable[[], bool]) -> None:
    """Poll `condition` from this thread (other threads make it true), up to 30 s."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.001)


def test_embed_here_shares_the_cache_and_a_running_call_across_threads() -> None:
    embedder = RecordingEmbedder()
    sizes: list[int] = []
    queries = QueryEmbedder(embedder, on_batch=sizes.append)
    embedder.release.clear()  # the first thread's call blocks until released
    got: list[Vectors] = []
    threads = [threading.Thread(target=lambda: got.append(queries.embed_here("peak")))]
    threads[0].start()
    wait_for(lambda: len(embedder.calls) == 1)
    threads.append(threading.Thread(target=lambda: got.append(queries.embed_here("peak"))))
    threads[1].start()
    wait_for(lambda: queries.misses == 2)  # the second found the first's call running
    embedder.release.set()
    for thread in threads:
        thread.join(30)
    assert embedder.calls == [["peak"]]
    assert sizes == [1]
    assert len(got) == 2
    for vector in got:
        np.testing.assert_array_equal(vector, embedder.vector("peak"))
    np.testing.assert_array_equal(queries.embed_here("peak"), embedder.vector("peak"))
    assert queries.cached("peak") is not None
    assert (queries.hits, queries.misses, len(embedder.calls)) == (1, 2, 1)
    assert queries._here == {}


@pytest.mark.anyio
async def test_embed_here_and_embed_fill_one_cache() -> None:
    embedder = RecordingEmbedder()
    queries = QueryEmbedder(embedder, wait_s=0)
    vector = await anyio.to_thread.run_sync(queries.embed_here, "from a worker")
    np.testing.assert_array_equal(await queries.embed("from a worker"), vector)
    await queries.embed("from the loop")
    np.testing.assert_array_equal(
        queries.embed_here("from the loop"), embedder.vector("from the loop")
    )
    assert embedder.calls == [["from a worker"], ["from the loop"]]


def test_embed_here_failure_reaches_the_caller_and_is_not_cached() -> None:
    embedder = RecordingEmbedder()
    queries = QueryEmbedder(embedder)
    embedder.fail = True
    with pytest.raises(RuntimeError, match="backend down"):
        queries.embed_here("x")
    assert queries._here == {}
    embedder.fail = False
    np.testing.assert_array_equal(queries.embed_here("x"), embedder.vector("x"))
    assert len(embedder.calls) == 2


class PreparingEmbedder(RecordingEmbedder):
    """Embeds in two steps, as the local MiniLM can: the tokens, then the model."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def prepare(self, texts: Sequence[str]) -> Callable[[], Vectors]:
        self.events.append("tokens")

        def run() -> Vectors:
            self.events.append("model")
            return self.embed(texts)

        return run


def test_embed_here_calls_meanwhile_between_the_tokens_and_the_model() -> None:
    embedder = PreparingEmbedder()
    queries = QueryEmbedder(embedder)
    vector = queries.embed_here("q", lambda: embedder.events.append("meanwhile"))
    assert embedder.events == ["tokens", "meanwhile", "model"]
    np.testing.assert_array_equal(vector, embedder.vector("q"))
    # A cache hit embeds nothing and calls nothing.
    queries.embed_here("q", lambda: embedder.events.append("meanwhile"))
    assert embedder.events == ["tokens", "meanwhile", "model"]
    # An embedder that cannot prepare: meanwhile, then its one call.
    plain = RecordingEmbedder()
    order: list[str] = []
    QueryEmbedder(plain).embed_here("q", lambda: order.append(f"meanwhile {len(plain.calls)}"))
    assert order == ["meanwhile 0"]
    assert plain.calls == [["q"]]


@pytest.mark.anyio
async def test_batches_run_on_the_worker_threads_of_the_limiter_given() -> None:
    limiter = anyio.CapacityLimiter(1)
    borrowed: list[float] = []

    class Borrowing(RecordingEmbedder):
        def embed(self, texts: Sequence[str]) -> Vectors:
            borrowed.append(limiter.borrowed_tokens)
            return super().embed(texts)

    queries = QueryEmbedder(Borrowing(), limiter=lambda: limiter)
    await queries.embed("how long is the warranty?")
    assert borrowed == [1]
    # While the limiter's one thread is busy (a search, the checks), no batch starts.
    embedder = RecordingEmbedder()
    queries = QueryEmbedder(embedder, limiter=lambda: limiter)
    async with anyio.create_task_group() as tg:
        await limiter.acquire()
        tg.start_soon(queries.embed, "can I return it?")
        await until(lambda: limiter.statistics().tasks_waiting == 1)
        assert embedder.calls == []
        limiter.release()
    assert embedder.calls == [["can I return it?"]]


@pytest.mark.anyio
async def test_a_question_batched_with_others_gets_its_vector_alone(minilm: MiniLMEmbedder) -> None:
    """MiniLM's batches of questions run where a question alone does (onnxruntime), whatever
    their size: a question's vector does not depend on who asked at the same moment."""
    questions = [f"How long does a refund for order {i} take to reach my card?" for i in range(16)]
    assert sum(len(ids) for ids in minilm.tokenize(questions)) > SMALL_CALL_TOKENS
    queries = QueryEmbedder(minilm, cache_size=0)
    sizes: list[int] = []
    queries.on_batch = sizes.append
    results: dict[str, Vectors] = {}

    async def ask(text: str) -> None:
        results[text] = await queries.embed(text)

    async with anyio.create_task_group() as tg:
        for question in questions:
            tg.start_soon(ask, question)
    assert sizes == [16]
    for question in questions:
        assert np.array_equal(results[question], minilm.embed([question])[0]), question
