"""`stream-rag serve`: the HTTP API under uvicorn, optionally with the sample knowledge base."""

from __future__ import annotations

import argparse
import errno
import socket
import sys

from ..access.principals import KeyRing, check_open_mode
from ..config import Settings
from ..errors import StreamRagError
from ..index.folders import ingest_sample
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
        help="first ingest the bundled sample knowledge base, once per collection "
        "(sample documents deleted later stay deleted)",
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
    # Bound before the model and the sample load, so a port in use is said in one line at once
    # (uvicorn found it only after everything had loaded, and exited 3).
    listening = listen(settings.host, settings.port)
    try:
        wait_for_stores(settings)
    except BaseException:
        for sock in listening:
            sock.close()
        raise
    if args.sample:
        store = open_store(settings)
        try:
            report = ingest_sample(store, settings)
        finally:
            store.close()
        if report is None:
            print(
                "sample knowledge base: loaded before; not added again (documents deleted "
                "since stay deleted)",
                file=sys.stderr,
            )
        else:
            failed = f", {len(report.failed)} failed" if report.failed else ""
            print(
                f"sample knowledge base: {len(report.added)} added, "
                f"{len(report.duplicates)} already stored{failed}",
                file=sys.stderr,
            )
    print(f"serving on http://{settings.host}:{settings.port}", file=sys.stderr)
    if settings.ungated_baseline:
        print("WARNING: STREAM_RAG_UNGATED_BASELINE: answers are NOT verified", file=sys.stderr)
    if settings.access_log:
        json_request_log()
    build_server(create_app(settings), settings).run(sockets=listening)
    return 0


def wait_for_stores(settings: Settings) -> None:
    """A store server (Qdrant) started alongside may not answer yet: bounded retries, each
    wait said on stderr, then a one-line error (exit 1) rather than a start-up traceback."""
    if settings.qdrant_url:
        from ..index.qdrant import wait_for_server

        wait_for_server(settings, lambda line: print(line, file=sys.stderr, flush=True))


def listen(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to every address of `host` (as asyncio's server binds them: `localhost`
    is 127.0.0.1 and ::1) at `port`, which uvicorn listens on; or an error naming why not."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StreamRagError(f"--host {host!r} is not an address here: {exc.strerror}") from exc
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # IPv4 has sockets of its own, as in asyncio
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.set_inheritable(True)
    except OSError as exc:
        for sock in bound:
            sock.close()
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound: {exc.strerror}"
        raise StreamRagError(
            f"{host}:{port} {why} (choose another with --port or STREAM_RAG_PORT)"
        ) from exc
    return bound


def json_request_log() -> None:
    """Send the JSON request log (`stream_rag.access`) to stderr, one line per request."""
    import logging

    from ..http.telemetry import access_log

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    access_log.propagate = False
