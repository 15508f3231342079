"""Issue 29's low findings: X-Forwarded-For believed only from configured proxies, look-alike
document names marked (or refused), private data files, one optimize at a time."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.cli.commands import main
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.http.names import MARKER
from stream_rag.http.serving import server_config
from stream_rag.index.edge import EdgeIndex

from .helpers import HANG_GUARD_S, HTTP_GUARD_S, free_port, serving_thread

LOOK_ALIKE = "pr\u0456cing.md"  # a Cyrillic i


@contextmanager
def serving(settings: Settings, **kwargs: Any) -> Iterator[str]:
    port = free_port()
    app = create_app(settings, **kwargs)
    with serving_thread(server_config(app, settings, host="127.0.0.1", port=port)):
        yield f"http://127.0.0.1:{port}"


@pytest.mark.parametrize(("proxies", "limited"), [((), True), (("127.0.0.1",), False)])
def test_x_forwarded_for_is_believed_only_from_listed_proxies(
    tmp_path: Path, minilm: MiniLMEmbedder, proxies: tuple[str, ...], limited: bool
) -> None:
    """Unknown keys are limited per address; a spoofed X-Forwarded-For from loopback got a
    fresh address each time (uvicorn trusts 127.0.0.1 by default)."""
    settings = Settings(data_dir=tmp_path / "data", rate_limit_rpm=2, trusted_proxies=proxies)
    KeyStore(settings.data_dir).create(name="ops", scopes=["admin"])
    with serving(settings, embedder=minilm) as base:
        codes = [
            httpx.get(
                f"{base}/v1/documents",
                headers={
                    "Authorization": "Bearer sr_unknown",
                    "X-Forwarded-For": f"198.51.100.{i}",
                },
                timeout=HTTP_GUARD_S,
            ).status_code
            for i in range(4)
        ]
    assert (429 in codes) is limited, codes
    assert set(codes) <= {401, 429}


def test_look_alike_names_are_marked_or_refused(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with TestClient(create_app(settings, embedder=minilm)) as client:
        for name in (LOOK_ALIKE, "pricing.md", "\u043f\u0440\u0430\u0439\u0441.md"):
            made = client.post("/v1/documents", files={"file": (name, name.encode() + b" list.")})
            assert made.status_code == 201, made.text
        shown = {d["name"] for d in client.get("/v1/documents").json()["documents"]}
        assert shown == {MARKER + LOOK_ALIKE, "pricing.md", "\u043f\u0440\u0430\u0439\u0441.md"}
    strict = settings.with_overrides(data_dir=tmp_path / "strict", refuse_confusable_names=True)
    with TestClient(create_app(strict, embedder=minilm)) as client:
        refused = client.post("/v1/documents", files={"file": (LOOK_ALIKE, b"Prices.")})
        assert refused.status_code == 400
        assert "mixes scripts" in refused.json()["error"]["message"]


def test_data_files_are_private(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)  # as `mkdir` makes it under the usual umask
    before = os.umask(0o022)
    try:
        assert main(["--data-dir", str(data), "keys", "create", "--scope", "admin"]) == 0
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        assert "now 0700" in capsys.readouterr().err
        for path in data.rglob("*"):
            mode = stat.S_IMODE(path.stat().st_mode)
            assert mode & 0o077 == 0, (path, oct(mode))
    finally:
        os.umask(before)


class HeldIndex(EdgeIndex):
    """The embedded index, whose HNSW build waits until the test lets it go."""

    started = threading.Event()
    release = threading.Event()

    def build_hnsw(self, *args: Any, **kwargs: Any) -> dict[str, float]:
        self.started.set()
        assert self.release.wait(HANG_GUARD_S)
        return super().build_hnsw(*args, **kwargs)


def test_one_optimize_at_a_time(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    index = HeldIndex.open(tmp_path / "data" / "index" / "held", minilm.dim)
    _, admin = KeyStore(settings.data_dir).create(name="ops", scopes=["admin"])
    auth = {"Authorization": f"Bearer {admin}"}
    with serving(settings, embedder=minilm, index=index) as base, ThreadPoolExecutor(1) as pool:
        first = pool.submit(
            httpx.post, f"{base}/v1/index/optimize", headers=auth, timeout=HTTP_GUARD_S
        )
        assert HeldIndex.started.wait(HANG_GUARD_S)
        second = httpx.post(f"{base}/v1/index/optimize", headers=auth, timeout=HTTP_GUARD_S)
        assert second.status_code == 409
        assert second.json()["error"]["code"] == "optimize_running"
        HeldIndex.release.set()
        assert first.result().status_code == 200
        again = httpx.post(f"{base}/v1/index/optimize", headers=auth, timeout=HTTP_GUARD_S)
        assert again.status_code == 200
