"""The container setup: the app needs a key (made on first start, printed once), Qdrant has
an API key and is not published. No Docker engine here, so the files are read and the
first-start behaviour runs as a real `stream-rag serve` process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml  # type: ignore[import-untyped]  # no stubs installed; only safe_load is used

from .helpers import free_port

ROOT = Path(__file__).resolve().parent.parent


def test_compose_keeps_qdrant_private_and_keyed() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    qdrant, app = compose["services"]["qdrant"], compose["services"]["app"]
    assert "ports" not in qdrant
    assert re.fullmatch(
        r"\$\{QDRANT_API_KEY:\?.+\}", qdrant["environment"]["QDRANT__SERVICE__API_KEY"]
    )
    assert app["environment"]["STREAM_RAG_QDRANT_API_KEY"].startswith("${QDRANT_API_KEY:?")
    assert compose["networks"][qdrant["networks"][0]]["internal"] is True
    for published in app["ports"]:
        assert str(published).startswith("127.0.0.1:"), published
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert '"--init-key"' in dockerfile
    assert re.search(r"^USER (?!root)", dockerfile, re.M)


def test_first_start_creates_one_admin_key_and_requires_it(tmp_path: Path) -> None:
    env = {**os.environ, "STREAM_RAG_DATA_DIR": str(tmp_path / "data")}
    port = free_port()
    command = [sys.executable, "-m", "stream_rag.cli", "serve", "--init-key", "--port", str(port)]
    log = tmp_path / "stderr.log"
    with log.open("w") as sink:
        server = subprocess.Popen(command, env=env, stderr=sink, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while "serving on" not in log.read_text():
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        printed = re.findall(r"^\s+(sr_\S+)$", log.read_text(), re.M)
        assert len(printed) == 1, log.read_text()
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                status = httpx.get(f"{base}/v1/documents").status_code
                break
            except httpx.TransportError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        assert status == 401
        auth = {"Authorization": f"Bearer {printed[0]}"}
        assert httpx.get(f"{base}/v1/documents", headers=auth).status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
    # Exactly one key was made, and only its hash is stored.
    again = subprocess.run(
        [sys.executable, "-m", "stream_rag.cli", "keys", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert again.stdout.count('"id"') == 1
    assert printed[0].encode() not in (tmp_path / "data" / "stream_rag.sqlite3").read_bytes()
