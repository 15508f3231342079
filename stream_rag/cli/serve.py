"""`stream-rag serve`: the HTTP API under uvicorn, optionally with the sample knowledge base."""

from __future__ import annotations

import argparse
import sys

from ..access.principals import KeyRing, check_open_mode
from ..config import Settings
from ..index.folders import ingest_paths, sample_kb_dir
from ..services import open_store
from . import keys


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`serve`."""
    serve = commands.add_parser(
        "serve", help="run the HTTP API and web page", description="Run the HTTP API."
    )
    serve.add_argument("--host", help="interface to bind (STREAM_RAG_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind (STREAM_RAG_PORT, default 8000)")
    serve.add_argument(
        "--sample",
        action="store_true",
        help="first ingest the bundled sample knowledge base (skipped if already stored)",
    )
    serve.add_argument(
        "--init-key",
        action="store_true",
        help="if no API key exists yet, create an admin key and print it once (containers)",
    )


def run(settings: Settings, args: argparse.Namespace) -> int:
    from ..http.app import create_app
    from ..http.serving import build_server

    settings = settings.with_overrides(host=args.host, port=args.port)
    ring = KeyRing.open(settings)
    if args.init_key and ring.empty:
        keys.print_first_key(settings)
        ring.reload()
    check_open_mode(settings, ring)  # before loading anything
    if args.sample:
        store = open_store(settings)
        try:
            report = ingest_paths(store, [sample_kb_dir()], settings, quiet=True)
        finally:
            store.close()
        print(
            f"sample knowledge base: {len(report.added)} added, "
            f"{len(report.duplicates)} already stored",
            file=sys.stderr,
        )
    print(f"serving on http://{settings.host}:{settings.port}", file=sys.stderr)
    if settings.ungated_baseline:
        print("WARNING: STREAM_RAG_UNGATED_BASELINE: answers are NOT verified", file=sys.stderr)
    if settings.access_log:
        json_request_log()
    build_server(create_app(settings), settings).run()
    return 0


def json_request_log() -> None:
    """Send the JSON request log (`stream_rag.access`) to stderr, one line per request."""
    import logging

    from ..http.telemetry import access_log

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    access_log.propagate = False
