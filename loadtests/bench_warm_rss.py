"""Peak RSS of a start-up backlog whose answer warm-up waits until each version is live.

Stores `--documents` generated manuals (`big_documents.plain`, `--kb` KB each) without indexing
them, then indexes them all through `IndexQueue` (one worker, as at start-up: every version is
begun in turn), with the warm-up deferred as the local generator's is (`warm_after_live`).
The embedder is a stand-in that returns fixed small vectors, so the figure is what the queue
and the store hold, not a model's; the warm-up only counts texts. Prints the peak RSS above
the stored collection's baseline, sampled every 20 ms.

    .venv/bin/python -m loadtests.bench_warm_rss --documents 100 --kb 100
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np

from stream_rag.embed.backends import Vectors
from stream_rag.index.edge import EdgeIndex
from stream_rag.index.indexing import Indexer
from stream_rag.index.jobs import IndexQueue
from stream_rag.store.documents import DocumentStore

from .big_documents import plain

DIM = 16


class FixedEmbedder:
    """Unit vectors, the same for every text: no model's memory or CPU in the figure."""

    name = "fixed-16"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        out[:, 0] = 1.0
        return out


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--kb", type=int, default=100, help="size of each document")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        store = DocumentStore(Path(root) / "data")
        index = EdgeIndex.open(Path(root) / "index", DIM)
        keys = []
        for i in range(args.documents):
            stager = store.blobs.stager(10**8)
            stager.write(plain(args.kb * 1024, seed=i + 1).encode())
            result = store.add(stager.finish(), filename=f"manual-{i}.txt")
            keys.append((result.document.id, result.version.version))
        warmed = [0]

        def warm(name: str, texts: Sequence[str]) -> None:
            warmed[0] += len(texts)

        indexer = Indexer(store, index, FixedEmbedder())
        indexer.on_indexed = warm
        indexer.warm_after_live = True
        queue = IndexQueue(indexer, workers=1)
        baseline = rss_mb()
        peak = [baseline]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss_mb())
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.monotonic()

        async def run() -> None:
            queue.submit_all(keys)
            async with anyio.create_task_group() as group:
                group.start_soon(queue.run)
                await queue.join()
                queue.close()

        anyio.run(run)
        done.set()
        sampler.join()
        chunks = sum(store.version(*k).chunk_count for k in keys)
        print(
            f"{args.documents} documents x {args.kb} KB, {chunks} chunks, {warmed[0]} warmed: "
            f"RSS {baseline:.0f} MB before indexing, peak {peak[0]:.0f} MB "
            f"(+{peak[0] - baseline:.0f} MB), {time.monotonic() - started:.0f} s"
        )
        index.close()
        store.close()


if __name__ == "__main__":
    main()
