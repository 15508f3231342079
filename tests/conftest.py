from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from starlette.testclient import TestClient

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app

from .browser import browser, console, context, page  # noqa: F401  (the browser tests' fixtures)
from .postgres import postgres_server, postgres_url  # noqa: F401  (PostgreSQL's fixtures)

# No machine-speed limits: on a loaded machine an example may take seconds. The same examples
# every run (derived from each test), so the suite is never red by chance on an example nobody
# has seen; `pytest --hypothesis-profile explore` draws new ones to look for bugs.
hypothesis_settings.register_profile(
    "stream_rag",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
)
hypothesis_settings.register_profile(
    "explore", parent=hypothesis_settings.get_profile("stream_rag"), derandomize=False
)
hypothesis_settings.load_profile("stream_rag")


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real local embedder, loaded once (the suite installs its model package)."""
    return MiniLMEmbedder()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
def client(settings: Settings, minilm: MiniLMEmbedder) -> Iterator[TestClient]:
    with TestClient(create_app(settings, embedder=minilm)) as test_client:
        yield test_client


def wait_indexed(client: TestClient, doc_id: str, version: int | None = None) -> dict[str, Any]:
    """Poll a document until the given (default: newest) version has left `indexing`."""
    deadline = time.monotonic() + 60
    while True:
        document: dict[str, Any] = client.get(f"/v1/documents/{doc_id}").json()
        record = document["versions"][(version or len(document["versions"])) - 1]
        if record["status"] != "indexing":
            return document
        assert time.monotonic() < deadline, f"{doc_id} v{record['version']} never got indexed"
        time.sleep(0.02)


def store_snapshot(data_dir: Path) -> tuple[list[str], list[str]]:
    """What a user could observe of the store: its rows and its stored files."""
    import sqlite3

    db = sqlite3.connect(data_dir / "stream_rag.sqlite3")
    try:
        rows = [
            repr(row)
            for table in ("documents", "versions", "chunks", "meta")
            for row in db.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
        ]
    finally:
        db.close()
    files = sorted(
        str(p.relative_to(data_dir))
        for folder in ("blobs", "tmp")
        for p in (data_dir / folder).rglob("*")
        if p.is_file() and p.name != ".lock"  # a staging folder's lock: no data
    )
    return rows, files


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
