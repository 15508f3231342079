"""`/healthz` answers whatever the worker threads are doing; `/readyz` names what is down."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio.to_thread
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.model.fake import create_fake_llm
from stream_rag.model.llm import OpenAIChatModel

from .helpers import free_port, running_server

GUARD_S = 60.0  # only against a hang


def test_healthz_needs_no_worker_thread(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    app = create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm)
    release = threading.Event()
    holding = threading.Event()

    async def occupy_every_worker(request: Request) -> JSONResponse:
        # What 42 heavy uploads did: every worker thread busy for a long time.
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = 1

        def hold() -> None:
            holding.set()
            release.wait()

        await anyio.to_thread.run_sync(hold)
        return JSONResponse({})

    app.router.routes.append(Route("/test/occupy", occupy_every_worker))
    with running_server(app) as base_url:
        blocker = threading.Thread(
            target=lambda: httpx.get(f"{base_url}/test/occupy", timeout=GUARD_S)
        )
        blocker.start()
        try:
            assert holding.wait(GUARD_S)
            reply = httpx.get(f"{base_url}/healthz", timeout=GUARD_S)
            assert reply.status_code == 200
            assert reply.json() == {"status": "ok"}
        finally:
            release.set()
            blocker.join()


def test_readyz_reports_each_dependency(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    with running_server(create_fake_llm()) as llm_url:
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        app = create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm, model=model)
        with running_server(app) as base_url:
            reply = httpx.get(f"{base_url}/readyz", timeout=GUARD_S)
            assert reply.status_code == 200, reply.text
            body = reply.json()
            assert body["status"] == "ready"
            assert body["failed"] == []
            assert set(body["checks"]) == {"store", "index", "embedder", "model"}
            assert all(check["ok"] for check in body["checks"].values())
            assert body["checks"]["embedder"]["value"] == 384
            assert body["indexing_queue"] == 0

            app.state.drain.request()  # what SIGTERM does

            def draining() -> httpx.Response:
                return httpx.get(f"{base_url}/readyz", timeout=GUARD_S)

            reply = draining()
            while reply.status_code == 200:  # the drain starts on the server's loop
                reply = draining()
            assert reply.status_code == 503
            assert reply.json()["failed"] == ["shutting_down"]


def test_readyz_is_503_naming_the_model_when_it_is_down(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    model = OpenAIChatModel(f"http://127.0.0.1:{free_port()}/v1", "gone", timeout_s=2)
    app = create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm, model=model)
    with running_server(app) as base_url:
        reply = httpx.get(f"{base_url}/readyz", timeout=GUARD_S)
        assert reply.status_code == 503
        body = reply.json()
        assert body["status"] == "not_ready"
        assert body["failed"] == ["model"]
        assert body["checks"]["model"]["ok"] is False
        assert "Connection" in body["checks"]["model"]["detail"]
        assert body["checks"]["store"]["ok"] is True
