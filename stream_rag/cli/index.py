"""`stream-rag optimize`, `reindex` and `doctor`: the index as a whole."""

from __future__ import annotations

import argparse
import sys

from ..counts import counted
from ..ingest.progress import Progress
from ..services import Services
from . import remote
from .keys import error_message


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`optimize`, `reindex`, `doctor`."""
    optimize = commands.add_parser(
        "optimize",
        help="give the embedded index HNSW graphs (large collections), while serving",
        description="Build HNSW graphs for large segments of the embedded index on a copy, in "
        "a child process, and swap it in; searches and writes go on meanwhile (the writes are "
        "re-applied to the copy). With --url a running server does it (POST "
        "/v1/index/optimize, admin).",
    )
    optimize.add_argument(
        "--url", type=remote.server_url, help="ask this running server to optimise its index"
    )
    optimize.add_argument("--api-key", help="admin key for --url (default: STREAM_RAG_API_KEY)")

    commands.add_parser(
        "reindex",
        help="rebuild the index from the stored documents",
        description="Re-index every document's newest version (after changing the embedder).",
    )

    doctor = commands.add_parser(
        "doctor",
        help="compare the index with the stored documents; --repair fixes the differences",
        description="Compare index points with the live chunks and the BM25 statistics of "
        "the index with the store; print the differences. Exits 1 if any remain.",
    )
    doctor.add_argument(
        "--repair",
        action="store_true",
        help="drop extra points, index missing chunks, recount BM25 statistics, vacuum",
    )


def optimize(services: Services) -> int:
    build = getattr(services.index, "build_hnsw", None)
    if build is None:
        print("stream-rag: error: a Qdrant server builds its own HNSW graphs", file=sys.stderr)
        return 2
    timings = build()
    print(
        " ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in timings.items())
    )
    return 0


def optimize_remote(args: argparse.Namespace) -> int:
    import os

    import httpx

    key = args.api_key or os.environ.get("STREAM_RAG_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    url = f"{args.url.rstrip('/')}/v1/index/optimize"
    try:
        response = httpx.post(url, headers=headers, timeout=httpx.Timeout(30.0, read=None))
    except httpx.InvalidURL as exc:
        return remote.fail(remote.RemoteFailed(f"--url {args.url} is not a URL: {exc}"))
    except httpx.HTTPError as exc:
        return remote.fail(remote.RemoteFailed(f"cannot reach {args.url}: {exc}"))
    if response.status_code != 200:
        return remote.fail(remote.RemoteFailed(error_message(response)))
    print(response.text)
    return 0


def reindex(services: Services) -> int:
    work = services.indexer.current_versions()
    services.store.set_indexing(work)
    progress = Progress(len(work))
    for doc_id, version in work:
        services.indexer.index_version(doc_id, version)
        progress.advance(doc_id)
    progress.close()
    services.store.set_meta("index_fingerprint", services.indexer.fingerprint)
    failed = [d for d in services.store.list_documents() if d.latest.status == "failed"]
    print(f"reindexed {counted(len(work) - len(failed), 'document')}, {len(failed)} failed")
    for document in failed:
        print(f"failed     {document.id}: {document.latest.status_reason}")
    return 1 if failed else 0


def doctor(services: Services, args: argparse.Namespace) -> int:
    from ..index.doctor import command

    return command(services.indexer, fix=args.repair)
