"""The scale-out figures of issue 30, on this machine, side by side in one run:

    python -m loadtests.bench_scale [--answers 40] [--seconds 60] [--clients 4]

1. Server CPU per answer, SQLite vs PostgreSQL: two `stream-rag serve --sample` processes, one
   on SQLite, one on PostgreSQL (both on their own embedded index, so only the store differs),
   asked the same `/v1/chat` questions in turn; the app's CPU per answer from /proc, and the
   PostgreSQL server's own CPU per answer beside it. Target: PostgreSQL <= 1.25x SQLite.
2. Answers per second with one replica, then two, on one PostgreSQL and the Qdrant test server
   (`--clients` clients asking back to back for `--seconds`; with two replicas they alternate).
   Reported, not a target: on a 2-core box two replicas share the same two cores.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import threading
import time
from pathlib import Path

import httpx

from loadtests.server_proc import Server
from loadtests.shared_stack import postgres_server, shared_stack
from stream_rag.loadtest.command import cpu_seconds
from tests.postgres import create_database, drop_database

QUESTIONS = Path(__file__).parent / "answers" / "sample_questions.jsonl"


def questions() -> list[str]:
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    return [str(r["question"]) for r in rows if not r.get("history")]


def wait_ready(url: str) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        documents = httpx.get(f"{url}/v1/documents", timeout=30).json()["documents"]
        if documents and all(d["versions"][-1]["status"] == "ready" for d in documents):
            return
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not index the sample")


def ask(http: httpx.Client, url: str, question: str) -> None:
    reply = http.post(f"{url}/v1/chat", json={"question": question})
    if reply.status_code != 200 or "event: done" not in reply.text:
        raise RuntimeError(f"{url}: {reply.status_code} {reply.text[-300:]}")


def postgres_cpu() -> float:
    """User + system CPU seconds of every PostgreSQL process on the machine (Linux)."""
    total = 0.0
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "comm").read_text().strip() == "postgres":
                total += cpu_seconds(int(proc.name)) or 0.0
        except OSError:
            pass
    return total


def cpu_per_answer(work: Path, answers: int) -> None:
    asked = questions()
    with postgres_server() as pg:
        url = create_database(pg)
        sqlite = Server(work / "sqlite")
        postgres = Server(work / "postgres", {"STREAM_RAG_DATABASE_URL": url})
        try:
            for server in (sqlite, postgres):
                server.start("--sample")
                wait_ready(server.url)
            cpu = {"sqlite": 0.0, "postgres": 0.0, "postgres server": 0.0}
            with httpx.Client(timeout=120) as http:
                for server in (sqlite, postgres):  # a first answer each, not measured
                    ask(http, server.url, asked[0])
                for i in range(answers):
                    question = asked[i % len(asked)]
                    for name, server in (("sqlite", sqlite), ("postgres", postgres)):
                        before, pg_before = cpu_seconds(server.pid) or 0.0, postgres_cpu()
                        ask(http, server.url, question)
                        cpu[name] += (cpu_seconds(server.pid) or 0.0) - before
                        if name == "postgres":
                            cpu["postgres server"] += postgres_cpu() - pg_before
        finally:
            for server in (sqlite, postgres):
                if server.process is not None:
                    server.stop()
            drop_database(pg, url)
    per = {k: 1000 * v / answers for k, v in cpu.items()}
    print(f"## server CPU per answer ({answers} answers each, interleaved)")
    print(f"sqlite app: {per['sqlite']:.1f} ms")
    print(f"postgres app: {per['postgres']:.1f} ms ({per['postgres'] / per['sqlite']:.2f}x)")
    both = per["postgres"] + per["postgres server"]
    print(
        f"postgres app + PostgreSQL server: {both:.1f} ms ({both / per['sqlite']:.2f}x; "
        f"the database's own {per['postgres server']:.1f} ms)"
    )


def run_clients(
    urls: list[str], asked: list[str], seconds: float, clients: int
) -> tuple[int, float]:
    """`clients` threads asking back to back, alternating `urls`: (answers, seconds)."""
    done, stop, lock = [0], threading.Event(), threading.Lock()

    def client(n: int) -> None:
        with httpx.Client(timeout=120) as http:
            for i in itertools.count(n):
                if stop.is_set():
                    return
                ask(http, urls[i % len(urls)], asked[i % len(asked)])
                with lock:
                    done[0] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return done[0], time.monotonic() - started


def answers_per_second(work: Path, seconds: float, clients: int) -> None:
    asked = questions()
    with shared_stack(work) as (url, qdrant):
        env = {"STREAM_RAG_DATABASE_URL": url, "STREAM_RAG_QDRANT_URL": qdrant}
        replicas = [Server(work / f"replica{i}", env) for i in range(2)]
        try:
            replicas[0].start("--sample")
            wait_ready(replicas[0].url)
            replicas[1].start()
            print(f"## answers/s, {clients} clients asking back to back for {seconds:.0f} s")
            for count in (1, 2):
                urls = [r.url for r in replicas[:count]]
                answered, elapsed = run_clients(urls, asked, seconds, clients)
                rate = answered / elapsed
                print(f"{count} replica(s): {rate:.2f} answers/s ({answered} answers)")
        finally:
            for server in replicas:
                if server.process is not None:
                    server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cpu_per_answer(Path(tmp), args.answers)
        answers_per_second(Path(tmp), args.seconds, args.clients)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
