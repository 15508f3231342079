"""Start-up waits for a Qdrant server with bounded retries: a port that refuses, then one that
comes up (a real HTTP server answering Qdrant's collections route), and a refused key."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from stream_rag.config import Settings
from stream_rag.index.base import IndexUnavailableError
from stream_rag.index.qdrant import wait_for_server

from .helpers import free_port, serving_thread

KEY = "qdrant-test-key"
# qdrant-client warns of a key sent over plain HTTP: the test server is on loopback.
pytestmark = pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")


def qdrant_collections() -> Starlette:
    """Qdrant's REST `GET /collections`, with its API-key check."""

    async def collections(request: Request) -> JSONResponse:
        if request.headers.get("api-key") != KEY:
            return JSONResponse({"status": {"error": "Must provide an API key"}}, 401)
        return JSONResponse({"result": {"collections": []}, "status": "ok", "time": 0.0})

    return Starlette(routes=[Route("/collections", collections)])


def settings_for(port: int, tmp_path: Path, key: str = KEY, attempts: int = 50) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        qdrant_url=f"http://127.0.0.1:{port}",
        qdrant_api_key=key,
        store_wait_attempts=attempts,
        store_wait_s=0.0,
    )


def test_waits_until_the_server_comes_up(tmp_path: Path) -> None:
    port = free_port()
    said: list[str] = []
    with ExitStack() as servers:

        def say(line: str) -> None:
            said.append(line)
            if len(said) == 2:  # refused twice: now the server comes up on that port
                config = uvicorn.Config(
                    qdrant_collections(), host="127.0.0.1", port=port, log_level="warning"
                )
                servers.enter_context(serving_thread(config))

        wait_for_server(settings_for(port, tmp_path), say)
    assert len(said) == 3, said
    assert all(line.startswith("waiting for Qdrant at http://127.0.0.1:") for line in said[:2])
    assert "(attempt 1/50: " in said[0]
    assert said[2] == f"Qdrant at http://127.0.0.1:{port} answered (attempt 3/50)"


def test_a_refused_key_fails_at_once(tmp_path: Path) -> None:
    said: list[str] = []
    config = uvicorn.Config(qdrant_collections(), host="127.0.0.1", port=free_port())
    with serving_thread(config), pytest.raises(IndexUnavailableError, match="API key"):
        wait_for_server(settings_for(config.port, tmp_path, key="wrong"), said.append)
    assert said == []


def test_serve_gives_up_in_one_line_and_exit_1(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "STREAM_RAG_DATA_DIR": str(tmp_path / "data"),
        "STREAM_RAG_QDRANT_URL": f"http://127.0.0.1:{free_port()}",  # nothing listens
        "STREAM_RAG_STORE_WAIT_ATTEMPTS": "3",
        "STREAM_RAG_STORE_WAIT_S": "0",
    }
    command = [sys.executable, "-m", "stream_rag.cli", "serve", "--port", str(free_port())]
    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr
    assert [line.split(" (attempt")[0] for line in lines[:2]] == [
        f"waiting for Qdrant at {env['STREAM_RAG_QDRANT_URL']}"
    ] * 2
    assert lines[2].startswith(
        f"stream-rag: error: Qdrant at {env['STREAM_RAG_QDRANT_URL']} did not answer after 3 "
    )
    assert len(lines) == 3, done.stderr
