"""Resumable answers in one process: a `/v1/chat` answer's events are recorded, and `GET
/v1/streams/{id}` (or `GET /v1/chat`) with `Last-Event-ID` replays the rest, byte for byte;
another key, an unknown id and a stream past its keep are 404 (or 204 for EventSource)."""

from __future__ import annotations

import time
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


def test_a_client_that_leaves_stops_the_answer_and_a_resume_says_so(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """The answer is not produced for nobody (a client leaving cancels the model request):
    resuming it replays what was sent, then `error` `stopped`, never a hang."""
    fake = create_fake_llm(FakeConfig(stall_after=12, stall_s=60))
    with running_server(fake) as llm_url:
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        app = create_app(
            Settings(data_dir=tmp_path / "d", min_evidence=0), embedder=minilm, model=model
        )
        with running_server(app) as url, httpx.Client(base_url=url, timeout=120) as http:
            body = (
                b"The gym opens at 6 am. Guests need a badge from reception. Lockers close at 9 pm."
            )
            made = http.post("/v1/documents", files={"file": ("gym.txt", body)}).json()
            doc_id = made["document"]["id"]
            deadline = time.monotonic() + 120
            while http.get(f"/v1/documents/{doc_id}").json()["versions"][0]["status"] != "ready":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            question = {"question": "When does the gym open and what do guests need?"}
            with http.stream("POST", "/v1/chat", json=question) as stream:
                parser, first = EventStreamParser(), None
                for line in stream.iter_lines():
                    for event in parser.feed(line + "\n"):
                        first = first or event.id
                        if event.event == "sentence":
                            break
                    else:
                        continue
                    break
            assert first is not None
            stream_id = first.rpartition(".")[0]
            while True:  # the server notices the client left, then records the end
                rest = events(http.get(f"/v1/streams/{stream_id}?after=0").text)
                if rest and rest[-1].event == "error":
                    break
                assert time.monotonic() < deadline, rest
                time.sleep(0.05)
            assert [e.event for e in rest][:2] == ["sources", "sentence"]
            assert '"stopped"' in (rest[-1].data or "")


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
