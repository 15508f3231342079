from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from stream_rag.app import create_app
from stream_rag.config import Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def store_snapshot(data_dir: Path) -> tuple[list[str], list[str]]:
    """What a user could observe of the store: its rows and its stored files."""
    import sqlite3

    db = sqlite3.connect(data_dir / "stream_rag.sqlite3")
    try:
        rows = [
            repr(row)
            for table in ("documents", "versions", "chunks")
            for row in db.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
        ]
    finally:
        db.close()
    files = sorted(
        str(p.relative_to(data_dir))
        for p in data_dir.rglob("*")
        if p.is_file() and "sqlite3" not in p.name
    )
    return rows, files
