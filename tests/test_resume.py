"""Resumable answers in one process: a `/v1/chat` answer's events are recorded, and `GET
/v1/streams/{id}` (or `GET /v1/chat`) with `Last-Event-ID` replays the rest, byte for byte;
another key, an unknown id and a stream past its keep are 404 (or 204 for EventSource)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import OpenAIChatModel
from stream_rag.sse import EventStreamParser, ReceivedEvent
from stream_rag.store.database import Database
from stream_rag.store.streams import StreamLog

from .conftest import wait_indexed
from .helpers import running_server

POLICY = (
    b"The office gym opens at 6 am and closes at 10 pm on weekdays. "
    b"Guests need a badge from reception and a signed waiver form."
)


def events(text: str) -> list[ReceivedEvent]:
    return [e for e in EventStreamParser().feed(text) if e.data is not None]


def test_an_answer_resumes_after_any_event(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    keys = KeyStore(tmp_path / "data")
    admin = {"Authorization": "Bearer " + keys.create(name="a", scopes=["admin"])[1]}
    chat = {"Authorization": "Bearer " + keys.create(name="w", scopes=["chat"])[1]}
    other = {"Authorization": "Bearer " + keys.create(name="o", scopes=["chat"])[1]}
    keys.close()
    with TestClient(create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm)) as client:
        made = client.post("/v1/documents", files={"file": ("gym.txt", POLICY)}, headers=admin)
        client.headers.update(admin)
        wait_indexed(client, made.json()["document"]["id"])
        del client.headers["Authorization"]
        question = {"question": "When does the gym open and what do guests need?"}
        original = events(client.post("/v1/chat", json=question, headers=chat).text)
        assert original[-1].event == "done"
        assert any(e.event == "sentence" for e in original)
        stream_id = original[0].id.rpartition(".")[0] if original[0].id else ""
        for i, seen in enumerate(original):
            resumed = client.get(
                f"/v1/streams/{stream_id}", headers={**chat, "Last-Event-ID": seen.id or ""}
            )
            # After the last event there is nothing more: 204, which stops an EventSource.
            assert resumed.status_code == (204 if i == len(original) - 1 else 200)
            assert events(resumed.text) == original[i + 1 :]
        from_start = client.get(f"/v1/streams/{stream_id}?after=0", headers=chat)
        assert events(from_start.text) == original
        # EventSource reconnecting to /v1/chat gets the rest too.
        again = client.get("/v1/chat", headers={**chat, "Last-Event-ID": original[0].id or ""})
        assert events(again.text) == original[1:]
        # Another key, an unknown stream: nothing to resume.
        assert client.get(f"/v1/streams/{stream_id}", headers=other).status_code == 404
        assert client.get("/v1/streams/nope", headers=chat).status_code == 404
        unknown = client.get("/v1/chat", headers={**chat, "Last-Event-ID": "nope.3"})
        assert unknown.status_code == 204


def test_nothing_is_recorded_when_keep_is_zero(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    settings = Settings(data_dir=tmp_path / "data", stream_keep_s=0)
    with TestClient(create_app(settings, embedder=minilm)) as client:
        made = client.post("/v1/documents", files={"file": ("gym.txt", POLICY)})
        wait_indexed(client, made.json()["document"]["id"])
        original = events(client.post("/v1/chat", json={"question": "When?"}).text)
        stream_id = (original[0].id or "").rpartition(".")[0]
        assert client.get(f"/v1/streams/{stream_id}").status_code == 404


GYM = b"The gym opens at 6 am. Guests need a badge from reception. Lockers close at 9 pm."
QUESTION = {"question": "When does the gym open and what do guests need?"}


@contextmanager
def gym_server(tmp_path: Path, minilm: MiniLMEmbedder, grace_s: float) -> Iterator[httpx.Client]:
    """A real server whose model pauses 5 s after its first sentence (the asker leaves then)."""
    fake = create_fake_llm(FakeConfig(stall_after=12, stall_s=5))
    with running_server(fake) as llm_url:
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        settings = Settings(data_dir=tmp_path / "d", min_evidence=0, resume_grace_s=grace_s)
        app = create_app(settings, embedder=minilm, model=model)
        with running_server(app) as url, httpx.Client(base_url=url, timeout=120) as http:
            doc_id = http.post("/v1/documents", files={"file": ("gym.txt", GYM)}).json()
            deadline = time.monotonic() + 120
            path = f"/v1/documents/{doc_id['document']['id']}"
            while http.get(path).json()["versions"][0]["status"] != "ready":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            yield http


def asked_and_left(http: httpx.Client) -> list[ReceivedEvent]:
    """Ask, read up to the first sentence, and close the connection."""
    seen: list[ReceivedEvent] = []
    with http.stream("POST", "/v1/chat", json=QUESTION) as stream:
        parser = EventStreamParser()
        for line in stream.iter_lines():
            seen += [e for e in parser.feed(line + "\n") if e.data is not None]
            if seen and seen[-1].event == "sentence":
                return seen
    raise AssertionError(f"the answer ended before a sentence: {seen}")


def test_a_client_whose_connection_dropped_resumes_the_answer_to_its_end(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """The answer goes on after its asker left (STREAM_RAG_RESUME_GRACE_S), recorded: the
    client reconnects and gets the replay, then the rest live, to `done`."""
    with gym_server(tmp_path, minilm, grace_s=600) as http:
        seen = asked_and_left(http)
        last = seen[-1].id or ""
        resumed = http.get(
            f"/v1/streams/{last.rpartition('.')[0]}", headers={"Last-Event-ID": last}
        )
        assert resumed.status_code == 200, resumed.text
        rest = events(resumed.text)
        assert rest[-1].event == "done", rest
        assert any(e.event == "sentence" for e in rest)
        ids = [e.id for e in seen + rest]
        assert ids == [f"{last.rpartition('.')[0]}.{n}" for n in range(1, len(ids) + 1)]


def test_an_answer_nobody_resumes_stops_after_the_grace(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """No model tokens for nobody past the grace: its record ends with `error` `stopped`, and
    a client resuming after that gets what was produced, then that error, never a hang."""
    with gym_server(tmp_path, minilm, grace_s=0.05) as http:
        seen = asked_and_left(http)
        stream_id = (seen[-1].id or "").rpartition(".")[0]
        # Watched in the database (a resume would follow it, and so keep it going).
        log = StreamLog(Database(tmp_path / "d" / "stream_rag.sqlite3"), 600)
        deadline = time.monotonic() + 120
        while not (record := log.read(stream_id, 0)) or not record.finished:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert record.events[-1][1] == "error"
        assert '"stopped"' in record.events[-1][2]
        rest = events(http.get(f"/v1/streams/{stream_id}?after=0").text)
        assert [e.event for e in rest][:2] == ["sources", "sentence"]
        assert [e.event for e in rest].count("done") == 0
        assert '"stopped"' in (rest[-1].data or "")


def test_a_stopped_answer_stops_at_once_not_after_the_grace(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """`DELETE /v1/streams/{id}` (the widget's Stop) ends an answer whose asker left, though
    the grace is ten minutes: its record ends with `error` `stopped`."""
    with gym_server(tmp_path, minilm, grace_s=600) as http:
        seen = asked_and_left(http)
        stream_id = (seen[-1].id or "").rpartition(".")[0]
        assert http.delete("/v1/streams/nope").status_code == 404
        assert http.delete(f"/v1/streams/{stream_id}").status_code == 204
        log = StreamLog(Database(tmp_path / "d" / "stream_rag.sqlite3"), 600)
        deadline = time.monotonic() + 120
        while not (record := log.read(stream_id, 0)) or not record.finished:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert record.events[-1][1] == "error"
        assert '"stopped"' in record.events[-1][2]
        assert http.delete(f"/v1/streams/{stream_id}").status_code == 204


def test_a_resume_position_out_of_range_is_refused_not_a_crash(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    huge = "9" * 20  # past a 64-bit integer: the database cannot compare it
    with TestClient(create_app(Settings(data_dir=tmp_path / "data"), embedder=minilm)) as client:
        made = client.post("/v1/documents", files={"file": ("gym.txt", POLICY)})
        wait_indexed(client, made.json()["document"]["id"])
        original = events(client.post("/v1/chat", json={"question": "When?"}).text)
        stream_id = (original[0].id or "").rpartition(".")[0]
        by_query = client.get(f"/v1/streams/{stream_id}?after={huge}")
        assert by_query.status_code == 404, by_query.text
        assert by_query.json()["error"]["code"] == "not_found"
        position = {"Last-Event-ID": f"{stream_id}.{huge}"}
        by_header = client.get(f"/v1/streams/{stream_id}", headers=position)
        assert by_header.status_code == 404, by_header.text
        assert by_header.json()["error"]["code"] == "not_found"
        reconnect = client.get("/v1/chat", headers=position)
        assert reconnect.status_code == 204, reconnect.text
