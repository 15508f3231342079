"""`POST /v1/answer` latency on the bundled sample knowledge base, for one or more checkouts of
the code side by side (interleaved request by request, so machine load hits all alike).

    python -m loadtests.bench_answer --code /path/to/baseline --code . --rounds 5

Each `--code` directory runs `stream-rag serve --sample` as a subprocess in that directory
(so its `stream_rag` is the one imported), on its own throwaway data directory. The
questions are the dev set's (`loadtests/answers/sample_questions.jsonl`), asked with their
history when they have one (a server that does not know `history` ignores it). Prints
p50/p95 per checkout and the ratio of each to the first, for all rounds and for the rounds
after the first (every block already seen once).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from stream_rag.retrieve.metrics import percentile
from tests.helpers import free_port

QUESTIONS = Path(__file__).parent / "answers" / "sample_questions.jsonl"


def start(code: Path, data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(code.resolve()), "STREAM_RAG_LOG_LEVEL": "warning"}
    command = [sys.executable, "-m", "stream_rag.cli", "--data-dir", str(data_dir), "serve"]
    process = subprocess.Popen(
        [*command, "--sample", "--port", str(port)],
        env=env,
        cwd=code,  # `-m` puts the working directory first on sys.path, before PYTHONPATH
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return process, f"http://127.0.0.1:{port}"


def wait_ready(url: str, timeout_s: float = 180.0) -> None:
    """Until the server answers and every sample document is indexed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            documents = httpx.get(f"{url}/v1/documents", timeout=5).json()["documents"]
            if documents and all(d["versions"][-1]["status"] == "ready" for d in documents):
                return
        except (httpx.HTTPError, KeyError, ValueError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not get ready")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, action="append", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    bodies = [{"question": r["question"], "history": r.get("history") or []} for r in rows]
    servers: list[tuple[subprocess.Popen[bytes], str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-answer-") as tmp:
        try:
            for i, code in enumerate(args.code):
                servers.append(start(code, Path(tmp) / str(i)))
            for _, url in servers:
                wait_ready(url)
            latency: list[list[float]] = [[] for _ in servers]
            with httpx.Client(timeout=60) as client:
                for _, url in servers:  # warm-up: first requests load lazily built state
                    client.post(f"{url}/v1/answer", json=bodies[0])
                for _ in range(args.rounds):
                    for body in bodies:
                        for i, (_, url) in enumerate(servers):
                            t0 = time.perf_counter()
                            response = client.post(f"{url}/v1/answer", json=body)
                            latency[i].append((time.perf_counter() - t0) * 1000)
                            response.raise_for_status()
        finally:
            for process, _ in servers:
                process.terminate()
                process.wait(timeout=30)
    header = f"{'code':<36} {'rounds':>6} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8}"
    print(f"{header} {'p95/first':>9}")
    for label, skip in (("all", 0), ("2+", len(bodies))):
        base = percentile(latency[0][skip:], 0.95)
        for code, values in zip(args.code, latency, strict=True):
            values = values[skip:]
            if not values:
                continue
            p95 = percentile(values, 0.95)
            print(
                f"{code!s:<36} {label:>6} {len(values):>8} {statistics.median(values):8.1f} "
                f"{p95:8.1f} {p95 / base:9.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
