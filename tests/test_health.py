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
from stream_rag.index.folders import ingest_paths
from stream_rag.model.fake import create_fake_llm
from stream_rag.model.llm import OpenAIChatModel
from stream_rag.services import open_store

from .helpers import HANG_GUARD_S, HTTP_GUARD_S, free_port, running_server
from .test_lifecycle import hashed_embeddings


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
            target=lambda: httpx.get(f"{base_url}/test/occupy", timeout=HTTP_GUARD_S)
        )
        blocker.start()
        try:
            assert holding.wait(HANG_GUARD_S)
            reply = httpx.get(f"{base_url}/healthz", timeout=HTTP_GUARD_S)
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
            reply = httpx.get(f"{base_url}/readyz", timeout=HTTP_GUARD_S)
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
                return httpx.get(f"{base_url}/readyz", timeout=HTTP_GUARD_S)

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
        reply = httpx.get(f"{base_url}/readyz", timeout=HTTP_GUARD_S)
        assert reply.status_code == 503
        body = reply.json()
        assert body["status"] == "not_ready"
        assert body["failed"] == ["model"]
        assert body["checks"]["model"]["ok"] is False
        assert "Connection" in body["checks"]["model"]["detail"]
        assert body["checks"]["store"]["ok"] is True


def test_readyz_waits_for_the_versions_queued_at_startup(tmp_path: Path) -> None:
    """`serve --sample` stores the sample files, then the server indexes them: until it has,
    answers would miss them, so the process is not ready. Later uploads do not count."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "policy.md").write_text("HOLD Refunds for annual plans are possible within 30 days.")
    settings = Settings(data_dir=tmp_path / "data")
    store = open_store(settings, processes=False)
    try:
        assert len(ingest_paths(store, [kb], settings, quiet=True).added) == 1
    finally:
        store.close()
    hold = threading.Event()
    try:
        with running_server(hashed_embeddings(hold)) as embed_url:
            remote = settings.with_overrides(embed_base_url=f"{embed_url}/v1")
            with running_server(create_app(remote)) as base_url:
                reply = httpx.get(f"{base_url}/readyz", timeout=HTTP_GUARD_S)
                assert reply.status_code == 503, reply.text
                assert reply.json()["failed"] == ["startup_indexing"]
                assert reply.json()["startup_indexing"] == 1

                hold.set()
                while reply.status_code == 503:  # the queue indexes on the server's loop
                    reply = httpx.get(f"{base_url}/readyz", timeout=HTTP_GUARD_S)
                assert reply.json()["startup_indexing"] == 0

                hold.clear()
                try:
                    later = httpx.post(
                        f"{base_url}/v1/documents",
                        files={"file": ("later.md", b"HOLD Support answers within a day.")},
                        timeout=HTTP_GUARD_S,
                    )
                    assert later.status_code == 201, later.text
                    reply = httpx.get(f"{base_url}/readyz", timeout=HTTP_GUARD_S)
                    assert reply.status_code == 200, reply.text
                    assert reply.json()["indexing_queue"] == 1
                finally:
                    # Before the server stops: its held batch would keep it from stopping
                    # until the test helper's hang guard gave up (minutes).
                    hold.set()
    finally:
        hold.set()  # let a held indexing batch end, so the server can stop
