"""The HTTP edge: malformed input is a 4xx with a JSON error, truncated uploads are refused,
streams always end with `done` or `error`, and reads stay consistent under concurrent writes."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncGenerator, Iterator, Sequence
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.sse import EventStreamParser
from stream_rag.store.documents import DocumentStore
from stream_rag.types import Message

from .conftest import store_snapshot, wait_indexed
from .test_api import multipart

POLICY = (
    b"Refunds for annual plans are possible within 30 days of purchase. "
    b"Refunds for monthly plans are not possible."
)
OTHER = b"Annual plans renew every year; refunds follow the annual plan policy of the shop."

MALFORMED: list[tuple[str, str, str | bytes]] = [
    ("POST", "/v1/chat", '{"question": "refund \\ud800 plans"}'),
    ("POST", "/v1/answer", '{"question": "refund \\udfff"}'),
    ("POST", "/v1/search", '{"query": "refund \\ud800"}'),
    ("POST", "/v1/search", '{"query": "x", "collection": "\\udc80"}'),
    ("POST", "/v1/search", "[" * 100_000 + "]" * 100_000),
    ("POST", "/v1/answer", '{"question": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    ("POST", "/v1/search", '{"query": "refund", "weights": {"dense": 1e308, "bm25": 1e308}}'),
    ("POST", "/v1/search", '{"query": "refund", "weights": {"dense": 1e999}}'),
    ("POST", "/v1/search", '{"query": "refund", "weights": {"dense": NaN}}'),
    ("POST", "/v1/search", '{"query": "refund", "weights": {"bm25": -Infinity}}'),
    ("POST", "/v1/search", '{"query": "refund", "weights": {"dense": ' + "9" * 400 + "}}"),
    ("POST", "/v1/search", '{"query": "refund", "top_k": ' + "9" * 5000 + "}"),
    ("POST", "/v1/answer", '{"question": "refund", "min_evidence": NaN}'),
    ("POST", "/v1/search", b'{"query": "refund \xff"}'),
    ("GET", "/v1/chat?q=refund&top_k=%C2%B2", ""),
    ("GET", "/v1/chat?q=refund&top_k=%EF%BC%95", ""),  # fullwidth five
    ("GET", "/v1/documents/doc_x/versions/%C2%B2", ""),
    ("GET", "/v1/documents/doc_x/versions/99999999999999999999999", ""),
    (
        "POST",
        "/v1/chat/completions",
        '{"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}',
    ),
    ("POST", "/v1/chat/completions", '{"messages": [{"role": "user", "content": [7]}]}'),
    ("POST", "/v1/chat/completions", '{"messages": [{"role": 3, "content": "refund?"}]}'),
    ("POST", "/v1/chat/completions", '{"messages": ["refund?"]}'),
    ("POST", "/v1/chat/completions", '{"messages": [{"role": "user", "content": {"a": 1}}]}'),
    ("POST", "/v1/chat/completions", '{"messages": [{"role": "user", "content": "x\\ud800"}]}'),
    (
        "POST",
        "/v1/chat/completions",
        '{"messages": [{"role": "user", "content": "refund?"}], "stream": "yes"}',
    ),
    (
        "POST",
        "/v1/chat/completions",
        '{"messages": [{"role": "user", "content": "refund?"}], "collection": 5, "stream": true}',
    ),
]


@pytest.fixture
def loaded(settings: Settings, minilm: MiniLMEmbedder) -> Iterator[TestClient]:
    with TestClient(create_app(settings, embedder=minilm), raise_server_exceptions=False) as c:
        for name, data in (("policy.txt", POLICY), ("other.txt", OTHER)):
            doc = c.post("/v1/documents", files={"file": (name, data)}).json()
            wait_indexed(c, doc["document"]["id"])
        yield c


@pytest.mark.parametrize(("method", "path", "body"), MALFORMED)
def test_malformed_input_is_a_json_4xx(
    loaded: TestClient, method: str, path: str, body: str | bytes
) -> None:
    response = loaded.request(
        method, path, content=body or None, headers={"content-type": "application/json"}
    )
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    error = response.json()["error"]
    assert isinstance(error["code"], str)
    assert isinstance(error["message"], str)


def test_truncated_multipart_is_refused_and_stores_nothing(
    client: TestClient, settings: Settings
) -> None:
    data = b"".join(b"line %d of a long policy text about refunds.\n" % i for i in range(2000))
    body, content_type = multipart({"file": ("policy.txt", data)})
    before = store_snapshot(settings.data_dir)
    for cut in (len(body) // 2, len(body) - len(b"--\r\n") - 30, len(body) - 4):
        response = client.post(
            "/v1/documents", content=body[:cut], headers={"content-type": content_type}
        )
        assert response.status_code == 400, response.text
        assert "truncated" in response.json()["error"]["message"]
        assert store_snapshot(settings.data_dir) == before
    assert client.post(
        "/v1/documents", content=body, headers={"content-type": content_type}
    ).status_code == (201)


class BrokenModel:
    """A chat model with a bug: it writes half a sentence, then raises."""

    name = "broken"

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        yield "Refunds for annual plans are possible"
        raise RuntimeError("a bug in the model adapter")


def sse_events(text: str) -> list[tuple[str, dict[str, object]]]:
    return [(event.event, event.json()) for event in EventStreamParser().feed(text)]


def test_an_unexpected_exception_ends_the_stream_with_an_error_event(
    settings: Settings, minilm: MiniLMEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(settings, embedder=minilm, model=BrokenModel())
    with TestClient(app) as client:
        doc = client.post("/v1/documents", files={"file": ("policy.txt", POLICY)}).json()
        wait_indexed(client, doc["document"]["id"])
        question = {"question": "Are refunds for annual plans possible?", "min_evidence": 0}
        events = sse_events(client.post("/v1/chat", json=question).text)
        assert events[0][0] == "sources"
        assert events[-1][0] == "error"
        assert events[-1][1]["code"] == "internal_error"
        chat = {"messages": [{"role": "user", "content": question["question"]}], "stream": True}
        chunks = client.post("/v1/chat/completions", json=chat).text.split("\n\n")
        payloads = [json.loads(c[6:]) for c in chunks if c.startswith("data: {")]
        assert payloads[-1]["stream_rag"]["error"]["code"] == "internal_error"
        assert payloads[-1]["choices"][0]["finish_reason"] == "error"
        assert chunks[-2] == "data: [DONE]"
    assert "a bug in the model adapter" in caplog.text  # logged with its traceback


def test_concurrent_identical_versions_make_one_version(tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "data")
    first = store.blobs.stager(10**6)
    first.write(b"Refunds within 30 days.")
    doc_id = store.add(first.finish(), filename="policy.txt").document.id
    barrier = threading.Barrier(8)
    results: list[bool] = []

    def add_version() -> None:
        stager = store.blobs.stager(10**6)
        stager.write(b"Refunds within 14 days. " * 2000)
        staged = stager.finish()
        barrier.wait()
        results.append(store.add_version(doc_id, staged, filename="policy.txt").duplicate)

    threads = [threading.Thread(target=add_version) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] + [True] * 7
    assert [v.version for v in store.get(doc_id).versions] == [1, 2]
    store.close()


def test_listing_and_search_stay_whole_while_documents_are_deleted(loaded: TestClient) -> None:
    ids = []
    for i in range(40):
        text = f"Policy {i}: refunds for annual plans are possible within {i + 1} days."
        ids.append(loaded.post("/v1/documents", files={"file": (f"p{i}.txt", text)}).json())
    for body in ids:
        wait_indexed(loaded, body["document"]["id"])
    statuses: list[int] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            statuses.append(loaded.get("/v1/documents").status_code)
            found = loaded.post("/v1/search", json={"query": "refunds annual plans", "top_k": 20})
            statuses.append(found.status_code)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for body in ids:
            assert loaded.delete(f"/v1/documents/{body['document']['id']}").status_code == 200
    finally:
        done.set()
        reader.join()
    assert statuses
    assert set(statuses) == {200}
    for document in loaded.get("/v1/documents").json()["documents"]:
        assert document["versions"]
