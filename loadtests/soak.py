"""A bounded soak on loopback: mixed traffic, one kill -9 and restart, then the audit.

    python -m loadtests.soak [--minutes 10] [--clients 4]
    python -m loadtests.soak --postgres --replicas 2 [--minutes 10] [--clients 4]

Runs `stream-rag serve` on a fresh data directory; client threads upload documents (.txt,
.md, .pdf, .docx), add versions, delete documents, search and ask `/v1/chat`, at random. Half
way through the server is killed with SIGKILL and started again on the same data directory.
At the end it waits for the indexing queue to drain, checks that every acknowledged upload
(that no acknowledged delete removed) downloads with the SHA-256 of the bytes sent, stops the
server (SIGTERM) and runs `stream-rag doctor`, which must report zero differences. Exits 1 if
any check fails.

With `--postgres` the replicas share one PostgreSQL database and one Qdrant server
(loadtests/shared_stack.py), clients spread over them, and the first replica is the one
killed and restarted; the audit and the doctor then read the shared store.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from loadtests.server_proc import Server, descendants
from loadtests.shared_stack import shared_stack
from tests.helpers import make_docx, make_pdf

WORDS = (
    "refund plan annual monthly billing invoice sync device offline note notebook export "
    "import markdown security password key account team seat admin storage limit upload "
    "attachment support email response region backup restore trash version history share "
    "link permission folder tag search filter calendar reminder"
).split()
QUESTIONS = ["How long is the refund window?", "How do I restore a backup?", "What is a seat?"]


@dataclass
class Ledger:
    """What the server acknowledged: (doc_id, version) -> sha256, and deleted documents."""

    uploads: dict[tuple[str, int], str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    maybe_deleted: set[str] = field(default_factory=set)  # a delete whose answer was lost
    ops: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def live_docs(self) -> list[str]:
        with self.lock:
            docs = {d for d, _ in self.uploads} - self.deleted - self.maybe_deleted
            return sorted(docs)


def document(rng: random.Random, serial: int) -> tuple[str, bytes]:
    sentences = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize()
        + f" {rng.randint(1, 90)} days."
        for _ in range(rng.randint(3, 40))
    ]
    text = f"Note {serial}. " + " ".join(sentences)
    kind = rng.choice(["txt", "txt", "md", "pdf", "docx"])
    if kind == "pdf":
        return f"n{serial}.pdf", make_pdf([text[i : i + 300] for i in range(0, len(text), 300)])
    if kind == "docx":
        return f"n{serial}.docx", make_docx([text])
    return f"n{serial}.{kind}", text.encode()


def client(url: str, ledger: Ledger, seed: int, stop: threading.Event) -> None:
    rng = random.Random(seed)
    serial = seed * 1_000_000
    with httpx.Client(base_url=url, timeout=60) as http:
        while not stop.is_set():
            op = rng.choices(["upload", "version", "delete", "search", "chat"], [4, 2, 1, 3, 2])[0]
            try:
                if op in ("upload", "version"):
                    serial += 1
                    name, data = document(rng, serial)
                    docs = ledger.live_docs()
                    if op == "version" and docs:
                        path = f"/v1/documents/{rng.choice(docs)}/versions"
                    else:
                        op, path = "upload", "/v1/documents"
                    reply = http.post(path, files={"file": (name, data)})
                    if reply.status_code in (200, 201):
                        body = reply.json()
                        key = (body["document"]["id"], body["version"]["version"])
                        with ledger.lock:
                            ledger.uploads[key] = hashlib.sha256(data).hexdigest()
                elif op == "delete":
                    docs = ledger.live_docs()
                    if not docs:
                        continue
                    victim = rng.choice(docs)
                    with ledger.lock:
                        ledger.maybe_deleted.add(victim)
                    reply = http.delete(f"/v1/documents/{victim}")
                    if reply.status_code == 200:
                        with ledger.lock:
                            ledger.deleted.add(victim)
                elif op == "search":
                    reply = http.post("/v1/search", json={"query": " ".join(rng.sample(WORDS, 3))})
                else:
                    reply = http.post("/v1/chat", json={"question": rng.choice(QUESTIONS)})
                ledger.ops[f"{op} {reply.status_code}"] += 1
            except httpx.HTTPError as exc:
                ledger.ops[f"{op} {type(exc).__name__}"] += 1
                time.sleep(0.2)  # the server is down (the kill): retry soon
            time.sleep(rng.uniform(0.02, 0.2))


def wait_indexed(url: str, timeout_s: float) -> int:
    """Wait until no version is `indexing`; returns how many still are at the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        documents = httpx.get(f"{url}/v1/documents", timeout=60).json()["documents"]
        busy: int = sum(v["status"] == "indexing" for d in documents for v in d["versions"])
        if not busy or time.monotonic() > deadline:
            return busy
        time.sleep(1)


def audit_downloads(url: str, ledger: Ledger) -> tuple[int, list[str]]:
    checked, problems = 0, []
    with httpx.Client(base_url=url, timeout=60) as http:
        for (doc_id, version), sha in sorted(ledger.uploads.items()):
            reply = http.get(f"/v1/documents/{doc_id}/versions/{version}/content")
            if doc_id in ledger.deleted or doc_id in ledger.maybe_deleted:
                if doc_id in ledger.deleted and reply.status_code != 404:
                    problems.append(f"{doc_id} was deleted but answers {reply.status_code}")
                continue
            checked += 1
            if reply.status_code != 200:
                problems.append(f"{doc_id} v{version}: HTTP {reply.status_code}")
            elif hashlib.sha256(reply.content).hexdigest() != sha:
                problems.append(f"{doc_id} v{version}: sha256 differs")
    return checked, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--postgres", action="store_true", help="replicas on PostgreSQL and a Qdrant server"
    )
    parser.add_argument("--replicas", type=int, default=1, help="with --postgres")
    args = parser.parse_args()
    if args.replicas > 1 and not args.postgres:
        parser.error("--replicas needs --postgres (one embedded store belongs to one process)")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        env: dict[str, str] = {}
        if args.postgres:
            database_url, qdrant_url = stack.enter_context(shared_stack(Path(tmp)))
            env = {"STREAM_RAG_DATABASE_URL": database_url, "STREAM_RAG_QDRANT_URL": qdrant_url}
        return soak(args, Path(tmp), env)


def soak(args: argparse.Namespace, tmp: Path, env: dict[str, str]) -> int:
    duration = args.minutes * 60
    ok = True
    servers = [Server(tmp / f"data{i}", env) for i in range(max(1, args.replicas))]
    server, data_dir = servers[0], servers[0].data_dir
    for each in servers:
        print(f"# server up in {each.start():.1f} s")
    print(f"# {len(servers)} replica(s); soak for {duration:.0f} s, one kill -9")
    ledger, stop = Ledger(), threading.Event()
    threads = [
        threading.Thread(
            target=client, args=(servers[i % len(servers)].url, ledger, args.seed + i, stop)
        )
        for i in range(args.clients)
    ]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(duration / 2)
    workers = descendants(server.pid)
    server.kill9()
    killed_at = time.monotonic() - started
    time.sleep(5)
    orphans = [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    restart_s = server.start()
    print(
        f"# kill -9 at {killed_at:.0f} s; restarted in {restart_s:.1f} s; extraction "
        f"processes left behind by the killed server: {len(orphans)}"
    )
    time.sleep(max(0.0, duration - (time.monotonic() - started)))
    stop.set()
    for thread in threads:
        thread.join()
    busy = wait_indexed(server.url, 600)
    checked, problems = audit_downloads(servers[-1].url, ledger)
    code = server.stop()
    for other in servers[1:]:
        other.stop()
    doctor = subprocess.run(
        [sys.executable, "-m", "stream_rag.cli", "--data-dir", str(data_dir), "doctor"],
        capture_output=True,
        text=True,
        env=server.env,
        check=False,
    )
    print("operations:", ", ".join(f"{k} {v}" for k, v in sorted(ledger.ops.items())))
    errors = sum(v for k, v in ledger.ops.items() if k.split()[1].startswith("5"))
    print(f"5xx answers: {errors}; versions still indexing at the end: {busy}")
    print(
        f"acknowledged uploads: {len(ledger.uploads)}; deleted documents: {len(ledger.deleted)} "
        f"(+{len(ledger.maybe_deleted - ledger.deleted)} deletes cut by the kill); downloads "
        f"checked: {checked}, sha256 mismatches or missing: {len(problems)}"
    )
    for problem in problems[:20]:
        print(f"  {problem}")
    print(f"server exit code after SIGTERM: {code}")
    print("stream-rag doctor:")
    print("  " + doctor.stdout.strip().replace("\n", "\n  "))
    ok = not problems and doctor.returncode == 0 and not busy and not orphans
    print("SOAK", "PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
