"""Two `stream-rag serve` replicas and a `stream-rag worker` as real processes on one PostgreSQL
(tests/postgres.py) and one Qdrant (tests/qdrant_server.py): what is stored through one is
answered by the other, access state is shared, and a worker killed mid-job loses nothing."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from stream_rag.access.keys import KeyStore
from stream_rag.sse import EventStreamParser

from .helpers import free_port

HANG_GUARD_S = 180.0  # only against a hang: no assertion depends on the machine's speed
BIN = Path(sys.executable).parent


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.1)


@contextmanager
def process(
    command: list[str], log: Path, env: dict[str, str]
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        child = subprocess.Popen(command, env={**os.environ, **env}, stdout=out, stderr=out)
    try:
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def answering(url: str, child: subprocess.Popen[bytes], log: Path) -> Callable[[], bool]:
    def check() -> bool:
        assert child.poll() is None, log.read_text()
        try:
            return httpx.get(url, timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    return check


@pytest.fixture
def qdrant(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "tests.qdrant_server", "--path", str(tmp_path / "q")]
    log = tmp_path / "qdrant.log"
    with process([*command, "--port", str(port)], log, {}) as child:
        wait_for(answering(url, child, log), "the Qdrant test server")
        yield url


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    """The box may be loaded (uploads, answers and indexing side by side): no short timeouts."""
    with httpx.Client(timeout=HANG_GUARD_S) as client:
        yield client


def statuses(http: httpx.Client, base: str, doc_id: str, headers: dict[str, str]) -> list[str]:
    document = http.get(f"{base}/v1/documents/{doc_id}", headers=headers).json()
    return [v["status"] for v in document["versions"]]


def test_two_replicas_and_a_worker(
    tmp_path: Path, postgres_url: str, qdrant: str, http: httpx.Client
) -> None:
    keys = KeyStore(tmp_path / "keys", postgres_url)
    admin = {"Authorization": "Bearer " + keys.create(name="a", scopes=["admin"])[1]}
    chat = {"Authorization": "Bearer " + keys.create(name="w", scopes=["chat"])[1]}
    limited, secret = keys.create(name="r", scopes=["read"], rpm=4)
    reader = {"Authorization": f"Bearer {secret}"}
    keys.close()
    env = {
        "STREAM_RAG_DATABASE_URL": postgres_url,
        "STREAM_RAG_QDRANT_URL": qdrant,
        "STREAM_RAG_INDEX_IN_PROCESS": "false",
        "STREAM_RAG_JOB_LEASE_S": "3",
        "STREAM_RAG_JOB_POLL_S": "0.2",
        "STREAM_RAG_INDEX_BATCH": "4",
        "STREAM_RAG_MIN_EVIDENCE": "0",
        "STREAM_RAG_ACCESS_LOG": "false",
    }

    def replica(name: str) -> tuple[list[str], Path, dict[str, str], str]:
        port = free_port()
        command = [str(BIN / "stream-rag"), "serve", "--port", str(port)]
        return (
            command,
            tmp_path / f"{name}.log",
            {**env, "STREAM_RAG_DATA_DIR": str(tmp_path / name)},
            f"http://127.0.0.1:{port}",
        )

    def worker(n: int) -> tuple[list[str], Path, dict[str, str]]:
        data = {**env, "STREAM_RAG_DATA_DIR": str(tmp_path / f"worker{n}")}
        return [str(BIN / "stream-rag"), "worker"], tmp_path / f"worker{n}.log", data

    a_cmd, a_log, a_env, a = replica("a")
    b_cmd, b_log, b_env, b = replica("b")
    uploaded: dict[str, bytes] = {}
    with process(a_cmd, a_log, a_env) as a_proc, process(b_cmd, b_log, b_env) as b_proc:
        wait_for(answering(f"{a}/healthz", a_proc, a_log), "replica A")
        wait_for(answering(f"{b}/healthz", b_proc, b_log), "replica B")
        with process(*worker(1)) as first_worker:
            # Uploaded on A, indexed by the worker, answered on B.
            body = b"The office gym opens at 6 am and closes at 10 pm on weekdays."
            made = http.post(f"{a}/v1/documents", files={"file": ("gym.txt", body)}, headers=admin)
            doc_id = made.json()["document"]["id"]
            uploaded[doc_id] = body
            wait_for(lambda: statuses(http, b, doc_id, admin) == ["ready"], "the worker to index")
            stream = http.post(
                f"{b}/v1/chat",
                json={"question": "When does the gym open?"},
                headers=chat,
            )
            cited = {
                (c["doc_id"], c["version"])
                for e in EventStreamParser().feed(stream.text)
                if e.event == "sentence"
                for c in e.json()["citations"]
            }
            assert (doc_id, 1) in cited, stream.text
            # Cited on B, downloaded on A.
            got = http.get(f"{a}/v1/documents/{doc_id}/versions/1/content", headers=chat)
            assert got.content == body
            # One limit of 4 a minute across both replicas.
            codes = [
                http.get(f"{(a, b)[i % 2]}/v1/documents", headers=reader).status_code
                for i in range(5)
            ]
            assert codes == [200, 200, 200, 200, 429]
            # Revoked on A, refused on B.
            assert http.delete(f"{a}/v1/keys/{limited.id}", headers=admin).status_code == 200
            wait_for(
                lambda: http.get(f"{b}/v1/documents", headers=reader).status_code == 401,
                "B to refuse the revoked key",
            )
            # A long document; the worker is killed once it holds the version's lease.
            paragraphs = [
                f"Paragraph {i} says the plan costs {i} dollars a month." for i in range(400)
            ]
            long = "\n\n".join(paragraphs).encode()
            made = http.post(f"{a}/v1/documents", files={"file": ("long.txt", long)}, headers=admin)
            long_id = made.json()["document"]["id"]
            uploaded[long_id] = long

            def leased() -> bool:
                with psycopg.connect(postgres_url) as db:
                    row = db.execute(
                        "SELECT lease_owner FROM jobs WHERE doc_id = %s", (long_id,)
                    ).fetchone()
                return row is not None and row[0] is not None

            wait_for(leased, "the worker to claim the long document")
            first_worker.send_signal(signal.SIGKILL)
            first_worker.wait()
        assert statuses(http, a, long_id, admin) == ["indexing"]
        with process(*worker(2)):
            wait_for(
                lambda: statuses(http, b, long_id, admin) == ["ready"], "a new worker to finish"
            )
        # Nothing lost: every acknowledged upload downloads with its hash, from either replica.
        for doc_id, data in uploaded.items():
            for base in (a, b):
                got = http.get(f"{base}/v1/documents/{doc_id}/content", headers=admin)
                assert hashlib.sha256(got.content).hexdigest() == hashlib.sha256(data).hexdigest()
    doctor = subprocess.run(
        [str(BIN / "stream-rag"), "doctor"],
        env={**os.environ, **env, "STREAM_RAG_DATA_DIR": str(tmp_path / "doctor")},
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
