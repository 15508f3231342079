"""Big uploads end to end against real `stream-rag serve` processes (embedded defaults).

    python -m loadtests.bench_big_upload --kilobytes 400 --pairs 2 \\
        --python /path/to/old/.venv/bin/python --python .venv/bin/python

For each kind (txt, md, html, pdf, docx) a generated manual of about `--kilobytes` KB of
text (loadtests/big_documents.py) is uploaded to a fresh server on a throwaway data directory,
one server per upload, and the bench prints: the upload's response time (POST to 201:
extraction and chunking in a worker process, rows committed), the time until the document is
searchable (GET /v1/documents/{id} until its version is `ready`: embedded and in the index),
CPU seconds of the extraction workers and of the server process over that time, and peak RSS
(VmHWM) of the server and of its largest worker. With several `--python` (one per venv, e.g.
an old and a new checkout), runs alternate between them, pair after pair, and the summary
gives each one's range and median. Each server starts from a temporary folder, so `-m` never
imports a checkout from the current directory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from loadtests.big_documents import KINDS, document
from loadtests.server_proc import descendants, free_port

TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Run:
    python: str
    kind: str
    chars: int
    upload_s: float
    searchable_s: float
    chunks: int
    worker_cpu_s: float
    server_cpu_s: float
    server_hwm_mb: float
    worker_hwm_mb: float
    status: str
    chunks_sha: str  # of the chunks' ids, spans and texts: equal across checkouts


def cpu_s(pid: int) -> float:
    """User + system CPU of `pid` so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def hwm_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def start_server(python: str, folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "STREAM_RAG_DATA_DIR": str(folder / "data"),
        "STREAM_RAG_LOG_LEVEL": "warning",
        "STREAM_RAG_ACCESS_LOG": "false",
    }
    env.pop("PYTHONPATH", None)
    log = (folder / "serve.log").open("ab")
    process = subprocess.Popen(
        [python, "-m", "stream_rag.cli", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=log,
        cwd=folder,
    )
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited; see {folder / 'serve.log'}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server did not get ready within 300 s")


def latest(client: httpx.Client, doc_id: str) -> dict[str, object]:
    versions: list[dict[str, object]] = client.get(f"/v1/documents/{doc_id}").json()["versions"]
    return versions[-1]


def one(python: str, kind: str, size: int, timeout_s: float) -> Run:
    filename, data = document(kind, size)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        process, url = start_server(python, folder)
        try:
            workers = descendants(process.pid)
            cpu0 = cpu_s(process.pid)
            worker0 = sum(cpu_s(p) for p in workers)
            with httpx.Client(base_url=url, timeout=timeout_s) as client:
                started = time.monotonic()
                response = client.post("/v1/documents", files={"file": (filename, data)})
                upload_s = time.monotonic() - started
                response.raise_for_status()
                body = response.json()
                doc_id = body["document"]["id"]
                status = body["version"]["status"]
                seen_workers = set(descendants(process.pid)) | set(workers)
                worker_cpu = sum(cpu_s(p) for p in seen_workers)
                worker_hwm = max((hwm_mb(p) for p in seen_workers), default=0.0)
                while status == "indexing" and time.monotonic() - started < timeout_s:
                    time.sleep(0.1)
                    status = latest(client, doc_id)["status"]
                searchable_s = time.monotonic() - started
                chunks = int(str(latest(client, doc_id)["chunk_count"]))
                listed = client.get(f"/v1/documents/{doc_id}/versions/1/chunks").json()["chunks"]
                # Chunk ids embed the document id, which is new per upload: compared without it.
                shown = [{k: v for k, v in c.items() if k not in ("id", "doc_id")} for c in listed]
                chunks_sha = hashlib.sha256(json.dumps(shown).encode()).hexdigest()[:12]
            server_cpu = cpu_s(process.pid) - cpu0
            server_hwm = hwm_mb(process.pid)
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return Run(
        python,
        kind,
        size,
        upload_s,
        searchable_s,
        chunks,
        worker_cpu - worker0,
        server_cpu,
        server_hwm,
        worker_hwm,
        status,
        chunks_sha,
    )


def show(run: Run) -> None:
    print(
        f"{run.python[-40:]:>40} {run.kind:>4} {run.chunks:6d} chunks  upload "
        f"{run.upload_s:6.2f} s  searchable {run.searchable_s:7.1f} s  CPU workers "
        f"{run.worker_cpu_s:6.2f} s server {run.server_cpu_s:7.1f} s  peak RSS server "
        f"{run.server_hwm_mb:5.0f} MB worker {run.worker_hwm_mb:4.0f} MB  {run.status} "
        f"chunks {run.chunks_sha}",
        flush=True,
    )


def summary(runs: list[Run]) -> None:
    print("\nmedian [min-max] per python and kind")
    for kind in dict.fromkeys(r.kind for r in runs):
        for python in dict.fromkeys(r.python for r in runs):
            mine = [r for r in runs if r.kind == kind and r.python == python]
            parts = []
            for label, values in (
                ("upload s", [r.upload_s for r in mine]),
                ("searchable s", [r.searchable_s for r in mine]),
                ("server CPU s", [r.server_cpu_s for r in mine]),
                ("server MB", [r.server_hwm_mb for r in mine]),
            ):
                parts.append(
                    f"{label} {statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"
                )
            print(f"{kind:>4} {python[-40:]:>40}  " + "  ".join(parts))
        hashes = {r.chunks_sha for r in runs if r.kind == kind}
        same = "the same" if len(hashes) == 1 else "DIFFER"
        print(f"{kind:>4} chunks (ordinals, spans, texts) {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kilobytes", type=int, default=400, help="text per document")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--pairs", type=int, default=1, help="rounds over every --python")
    parser.add_argument("--python", action="append", help="a venv's python (repeatable)")
    parser.add_argument("--timeout-s", type=float, default=1800.0)
    args = parser.parse_args()
    pythons = args.python or [str(Path(".venv/bin/python").absolute())]
    runs: list[Run] = []
    for _ in range(args.pairs):
        for kind in args.kinds.split(","):
            for python in pythons:
                runs.append(one(python, kind, args.kilobytes * 1024, args.timeout_s))
                show(runs[-1])
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    summary(runs)


if __name__ == "__main__":
    main()
