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

from .helpers import HANG_GUARD_S, HTTP_GUARD_S, free_port

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
    with httpx.Client(timeout=HTTP_GUARD_S) as client:
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


@pytest.fixture
def fake_llm(tmp_path: Path) -> Iterator[str]:
    """The scripted OpenAI-compatible server, pausing 20 s after its 12th piece: an answer is
    mid-stream (a sentence out, more to come) for long enough to resume it elsewhere."""
    port = free_port()
    command = [str(BIN / "stream-rag"), "fake-llm", "--port", str(port)]
    command += ["--stall-after", "12", "--stall-s", "20"]
    log = tmp_path / "fake.log"
    with process(command, log, {}) as child:
        wait_for(answering(f"http://127.0.0.1:{port}/v1/models", child, log), "the fake LLM")
        yield f"http://127.0.0.1:{port}/v1"


def test_answers_resume_on_the_other_replica(
    tmp_path: Path, postgres_url: str, qdrant: str, fake_llm: str, http: httpx.Client
) -> None:
    keys = KeyStore(tmp_path / "keys", postgres_url)
    admin = {"Authorization": "Bearer " + keys.create(name="a", scopes=["admin"])[1]}
    chat = {"Authorization": "Bearer " + keys.create(name="w", scopes=["chat"])[1]}
    one = {"Authorization": "Bearer " + keys.create(name="1", scopes=["chat"], max_streams=1)[1]}
    keys.close()
    env = {
        "STREAM_RAG_DATABASE_URL": postgres_url,
        "STREAM_RAG_QDRANT_URL": qdrant,
        "STREAM_RAG_LLM_BASE_URL": fake_llm,
        "STREAM_RAG_LLM_STALL_S": "60",
        # A dropped asker's answer goes on this long for a resume: not a race on a busy box.
        "STREAM_RAG_RESUME_GRACE_S": "600",
        "STREAM_RAG_MIN_EVIDENCE": "0",
        "STREAM_RAG_CHECK_CONFLICTS": "false",
        "STREAM_RAG_ACCESS_LOG": "false",
    }
    ports = {"a": free_port(), "b": free_port()}
    a, b = (f"http://127.0.0.1:{ports[n]}" for n in "ab")

    def replica(name: str) -> tuple[list[str], Path, dict[str, str]]:
        command = [str(BIN / "stream-rag"), "serve", "--port", str(ports[name])]
        return (
            command,
            tmp_path / f"{name}.log",
            {**env, "STREAM_RAG_DATA_DIR": str(tmp_path / name)},
        )

    body = (
        b"The gym opens at 6 am. Guests need a badge from reception. "
        b"Lockers are cleaned every Friday night. Towels cost two dollars at the desk."
    )
    question = {"question": "When does the gym open, what do guests need, and what about lockers?"}

    def first_sentence(lines: Iterator[str], parser: EventStreamParser) -> list[tuple[str, str]]:
        """Events up to the first sentence (event, id), reading an open stream."""
        seen: list[tuple[str, str]] = []
        for line in lines:
            for event in parser.feed(line + "\n"):
                seen.append((event.event, event.id or ""))
                if event.event == "sentence":
                    return seen
        raise AssertionError(f"the stream ended before a sentence: {seen}")

    def rest(base: str, last_id: str) -> list[tuple[str, str, str]]:
        stream_id = last_id.rpartition(".")[0]
        got = http.get(f"{base}/v1/streams/{stream_id}", headers={**chat, "Last-Event-ID": last_id})
        assert got.status_code == 200, got.text
        return [(e.event, e.id or "", e.data or "") for e in EventStreamParser().feed(got.text)]

    with process(*replica("a")) as a_proc, process(*replica("b")) as b_proc:
        wait_for(answering(f"{a}/healthz", a_proc, tmp_path / "a.log"), "replica A")
        wait_for(answering(f"{b}/healthz", b_proc, tmp_path / "b.log"), "replica B")
        made = http.post(f"{a}/v1/documents", files={"file": ("gym.txt", body)}, headers=admin)
        doc_id = made.json()["document"]["id"]
        wait_for(lambda: statuses(http, b, doc_id, admin) == ["ready"], "indexing")
        # A key with one answer at a time, answering on A (stalled mid-answer): B refuses it
        # a second; stopped, B answers it.
        with http.stream("POST", f"{a}/v1/chat", json=question, headers=one) as on_a:
            seen = first_sentence(on_a.iter_lines(), EventStreamParser())
            refused = http.post(f"{b}/v1/chat", json=question, headers=one)
            assert refused.status_code == 429, refused.text
            assert "at most 1 answers at a time for this key" in refused.text
            stream_id = seen[-1][1].rpartition(".")[0]
            assert http.delete(f"{a}/v1/streams/{stream_id}", headers=one).status_code < 300

        def answers_on_b() -> bool:
            with http.stream("POST", f"{b}/v1/chat", json=question, headers=one) as on_b:
                if on_b.status_code == 429:  # A has not given the slot back yet
                    return False
                assert on_b.status_code == 200
                seen = first_sentence(on_b.iter_lines(), EventStreamParser())
                stream_id = seen[-1][1].rpartition(".")[0]
                assert http.delete(f"{b}/v1/streams/{stream_id}", headers=one).status_code < 300
                return True

        wait_for(answers_on_b, "the key's slot given back on A")
        # Resumed on B while A still generates: the replay, then live to `done`, exactly the
        # events A sends after the client's last one.
        with http.stream("POST", f"{a}/v1/chat", json=question, headers=chat) as on_a:
            parser, lines = EventStreamParser(), on_a.iter_lines()
            seen = first_sentence(lines, parser)
            from_b = rest(b, seen[-1][1])
            from_a = [
                (e.event, e.id or "", e.data or "")
                for line in lines
                for e in parser.feed(line + "\n")
            ]
        assert from_b[-1][0] == "done", from_b
        assert from_b == from_a
        assert any(event == "sentence" for event, _, _ in from_b)
        # The client's connection to A dropped after the first sentence: A goes on with the
        # answer (STREAM_RAG_RESUME_GRACE_S), and B replays it, then follows it live to `done`.
        with http.stream("POST", f"{a}/v1/chat", json=question, headers=chat) as on_a:
            seen = first_sentence(on_a.iter_lines(), EventStreamParser())
        resumed = rest(b, seen[-1][1])
        assert resumed[-1][0] == "done", resumed
        assert any(event == "sentence" for event, _, _ in resumed)
        stream_id = seen[-1][1].rpartition(".")[0]
        ids = [event_id for _, event_id in seen] + [event_id for _, event_id, _ in resumed]
        assert ids == [f"{stream_id}.{n}" for n in range(1, len(ids) + 1)]
        # A killed mid-answer: resumed on B, the replay, then `error` `interrupted`.
        with http.stream("POST", f"{a}/v1/chat", json=question, headers=chat) as on_a:
            seen = first_sentence(on_a.iter_lines(), EventStreamParser())
            a_proc.send_signal(signal.SIGKILL)
            a_proc.wait()
        stream_id = seen[-1][1].rpartition(".")[0]
        replay = rest(b, f"{stream_id}.1")
        names = [event for event, _, _ in replay]
        assert "sentence" in names
        assert names[-1] == "error"
        assert '"interrupted"' in replay[-1][2]
