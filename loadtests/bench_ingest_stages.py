"""Where a big document's indexing CPU goes, stage by stage, in process.

    python -m loadtests.bench_ingest_stages --kind md --kilobytes 400

Opens the configured services (embedded defaults) on a throwaway data directory, stores one
generated manual (loadtests/big_documents.py; extraction in process) and indexes it with
`Indexer.index_version`, wrapping the indexer's stages to add up their process CPU (the
embedder's batches run on its own threads, so thread CPU would miss them): MiniLM calls by
caller (passages, FAQ questions, the gate's sentences, the answer warm-up) with their token
counts, stored features, chunk readers, heading context and index writes. A measuring
harness only: the wrappers replace module attributes for this process.
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from loadtests.big_documents import KINDS, document

CALLERS = ("embed_questions", "store_chunk_vectors", "warm")
cpu: dict[str, float] = collections.defaultdict(float)
tokens: collections.Counter[str] = collections.Counter()


def timed(label: str, f: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return f(*args, **kwargs)
        finally:
            cpu[label] += time.process_time() - start

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=KINDS, default="md")
    parser.add_argument("--kilobytes", type=int, default=400)
    args = parser.parse_args()
    os.environ.setdefault("STREAM_RAG_LOG_LEVEL", "warning")
    from stream_rag import services
    from stream_rag.config import Settings
    from stream_rag.embed import minilm
    from stream_rag.index import indexing
    from stream_rag.store.documents import DocumentStore

    embed_ids = minilm.MiniLMEmbedder._embed_ids

    def counted(self: minilm.MiniLMEmbedder, ids: list[list[int]], *rest: Any) -> Any:
        names = [frame.name for frame in traceback.extract_stack()[-8:-1]]
        label = "MiniLM: " + next((n for n in CALLERS if n in names), "passages")
        tokens[label] += sum(map(len, ids))
        return timed(label, embed_ids)(self, ids, *rest)

    setattr(minilm.MiniLMEmbedder, "_embed_ids", counted)  # noqa: B010
    for name in ("store_features", "heading_context", "document_vector", "chunk_questions"):
        setattr(indexing, name, timed(name, getattr(indexing, name)))
    filename, data = document(args.kind, args.kilobytes * 1024)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / filename
        source.write_bytes(data)
        settings = replace(Settings.from_env(), data_dir=Path(tmp) / "data")
        opened = services.open_store

        def in_process(settings: Settings, *, processes: bool = True) -> DocumentStore:
            return opened(settings, processes=False)

        services.open_store = in_process
        built = services.open_services(settings)
        try:
            indexer = built.indexer
            indexer.readers = tuple(
                indexing.ChunkReader(r.format, timed("chunk readers", r.store))
                for r in indexer.readers
            )
            upsert: Callable[[Sequence[Any]], None] = built.index.upsert
            built.index.upsert = timed("index upsert", upsert)  # type: ignore[method-assign]
            staged = built.store.blobs.stage_file(source, 1 << 30)
            start, wall = time.process_time(), time.perf_counter()
            result = built.store.add(staged, filename=filename)
            added, added_wall = time.process_time(), time.perf_counter()
            indexer.index_version(result.document.id, result.version.version)
            done, done_wall = time.process_time(), time.perf_counter()
            status = built.store.version(result.document.id, result.version.version).status
        finally:
            built.close()
    print(
        f"{filename} {len(data):,} bytes, {result.version.chunk_count:,} chunks, {status}: "
        f"store.add {added - start:.2f} s CPU ({added_wall - wall:.2f} s wall), indexing "
        f"{done - added:.2f} s CPU ({done_wall - added_wall:.2f} s wall), load "
        f"{os.getloadavg()[0]:.1f}"
    )
    for label, seconds in sorted(cpu.items(), key=lambda item: -item[1]):
        counted_tokens = f"  {tokens[label]:,} tokens" if label in tokens else ""
        print(f"  {label:<32} {seconds:8.2f} s CPU{counted_tokens}")


if __name__ == "__main__":
    main()
