"""What a `chat` key reads (issue 29, Medium): over every route it can call, with questions
answered, refused and nonsense, no text of a block that no emitted sentence cites reaches it.
Read and admin keys still get every retrieved block's text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.answer.answerable import Reading, not_answered
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http import chatview
from stream_rag.http.app import create_app

from .conftest import wait_indexed

DOCS = {
    "refunds.md": "Refunds for annual plans are paid within 30 days of a written request. "
    "The account owner must send the request from the billing page. "
    "Monthly plans are not refunded after the first week of service.",
    "refunds-old.md": "Refunds for annual plans are paid within 14 days of a written request. "
    "This older policy was published for the spring catalogue of the shop.",
    "gym.md": "The office gym opens at 6 am and closes at 10 pm on weekdays. "
    "Lockers are cleaned every Friday night by the facilities team. "
    "Guests need a badge from reception and a signed waiver form.",
    "parking.md": "Visitor parking is on level minus two of the north garage. "
    "Electric cars charge free of cost for four hours at the yellow posts. "
    "Bicycles are stored in the locked cage beside the loading dock.",
}
SHINGLE = 5  # words: shorter runs ("the account owner") are common English, not a quote
WORDS = sorted({w.strip(".,").lower() for text in DOCS.values() for w in text.split()})


@dataclass
class Deployment:
    client: TestClient
    chat: dict[str, str]
    reader: dict[str, str]
    chunks: dict[str, list[tuple[str, str]]]  # doc id -> (chunk id, text)
    key_id: str


@pytest.fixture(scope="module")
def deployment(
    tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEmbedder
) -> Iterator[Deployment]:
    data = tmp_path_factory.mktemp("chatview") / "data"
    store = KeyStore(data)
    admin = {"Authorization": "Bearer " + store.create(name="a", scopes=["admin"])[1]}
    key, secret = store.create(name="widget", scopes=["chat"], collections=["alpha"])
    reader = store.create(name="r", scopes=["read"], collections=["alpha"])[1]
    # One visitor asks hundreds of times here: not what the rate limits are about.
    settings = Settings(data_dir=data, visitor_rpm=100_000, rate_limit_rpm=100_000)
    with TestClient(create_app(settings, embedder=minilm)) as client:
        chunks = {}
        for name, text in DOCS.items():
            made = client.post(
                "/v1/documents",
                files={"file": (name, text.encode())},
                data={"collection": "alpha"},
                headers=admin,
            )
            doc_id = made.json()["document"]["id"]
            client.headers.update(admin)
            wait_indexed(client, doc_id)
            listed = client.get(f"/v1/documents/{doc_id}/versions/1/chunks").json()
            del client.headers["Authorization"]
            chunks[doc_id] = [(c["id"], c["text"]) for c in listed["chunks"]]
        yield Deployment(
            client,
            {"Authorization": f"Bearer {secret}"},
            {"Authorization": f"Bearer {reader}"},
            chunks,
            key.id,
        )


def strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def parsed(body: str) -> list[Any]:
    """The JSON in a response: its body, or each SSE `data:` line."""
    try:
        return [json.loads(body)]
    except ValueError:
        found = []
        for line in body.splitlines():
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
                try:
                    found.append(json.loads(line[5:]))
                except ValueError:
                    continue
        return found


def cited_chunks(value: object, under: bool = False) -> Iterator[str]:
    """Chunk ids of the blocks that emitted sentences cite (their `citations`)."""
    if isinstance(value, dict):
        if under and isinstance(value.get("chunk_id"), str):
            yield value["chunk_id"]
        for name, item in value.items():
            yield from cited_chunks(item, under or name == "citations")
    elif isinstance(value, list):
        for item in value:
            yield from cited_chunks(item, under)


def shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def leaked_bytes(d: Deployment, body: str, asked: str, downloadable: set[str]) -> int:
    """Bytes of text of uncited blocks in `body`: words of an uncited chunk covered by a run
    of SHINGLE words that the response has and no cited chunk (nor the question) has."""
    documents = parsed(body)
    seen = shingles("\n".join(s for doc in documents for s in strings(doc)) or body)
    cited = {c for doc in documents for c in cited_chunks(doc)}
    allowed = shingles(asked)
    for doc_id, chunks in d.chunks.items():
        for chunk_id, text in chunks:
            if chunk_id in cited or doc_id in downloadable:
                allowed |= shingles(text)
    leaked = 0
    for doc_id, chunks in d.chunks.items():
        for chunk_id, text in chunks:
            if chunk_id in cited or doc_id in downloadable:
                continue
            words = re.findall(r"\w+", text.lower())
            covered: set[int] = set()
            for i in range(len(words) - SHINGLE + 1):
                run = tuple(words[i : i + SHINGLE])
                if run in seen and run not in allowed:
                    covered.update(range(i, i + SHINGLE))
            leaked += sum(len(words[i]) + 1 for i in covered)
    return leaked


def answer_calls(question: str) -> list[tuple[str, str, dict[str, Any]]]:
    messages = [{"role": "user", "content": question}]
    return [
        ("POST", "/v1/chat", {"json": {"question": question, "top_k": 100}}),
        ("GET", "/v1/chat", {"params": {"q": question, "top_k": "100"}}),
        ("POST", "/v1/answer", {"json": {"question": question, "top_k": 100}}),
        ("POST", "/v1/chat/completions", {"json": {"messages": messages}}),
        ("POST", "/v1/chat/completions", {"json": {"messages": messages, "stream": True}}),
    ]


def every_route(d: Deployment) -> list[tuple[str, str, dict[str, Any]]]:
    """One call per method of every route the app has, with real ids in its path."""
    doc_id = next(iter(d.chunks))
    # The chat key's own answer, recorded: what resuming it replays is what the key was sent.
    asked = d.client.post(
        "/v1/chat", json={"question": "Where is visitor parking?"}, headers=d.chat
    )
    first_id = next(line for line in asked.text.splitlines() if line.startswith("id:"))
    values = {
        "doc_id": doc_id,
        "n": "1",
        "key_id": d.key_id,
        "conversation": "visitor-conv-1",
        "stream_id": first_id[3:].strip().rpartition(".")[0],
    }
    calls: list[tuple[str, str, dict[str, Any]]] = []
    for route in d.client.app.router.routes:  # type: ignore[attr-defined]
        if isinstance(route, Mount):
            calls.append(("GET", "/static/widget.js", {}))
            continue
        assert isinstance(route, Route)
        path = re.sub(r"{(\w+)}", lambda m: values[m.group(1)], route.path)
        for method in sorted(route.methods or ()):
            body = {"question": "When are refunds paid?", "query": "refunds", "scopes": ["chat"]}
            calls.append((method, path, {} if method in ("GET", "HEAD") else {"json": body}))
    return calls


def ask(d: Deployment, calls: list[tuple[str, str, dict[str, Any]]], asked: str) -> int:
    total = 0
    for method, path, kwargs in calls:
        response = d.client.request(method, path, headers=d.chat, **kwargs)
        assert response.status_code < 500, (method, path, response.text)
        # Documents its answers cited so far: the key may download them whole.
        downloadable = {
            doc_id
            for doc_id in d.chunks
            if d.client.get(f"/v1/documents/{doc_id}/content", headers=d.chat).status_code == 200
        }
        total += leaked_bytes(d, response.text, asked, downloadable)
    return total


questions = st.one_of(
    st.sampled_from(
        [
            "When are refunds for annual plans paid?",  # conflicting sources: refused
            "When does the office gym open?",
            "Where is visitor parking?",
            "What is the capital of Mongolia?",
        ]
    ),
    st.lists(st.sampled_from([*WORDS, "zebra", "quantum", "xylophone"]), min_size=1, max_size=8)
    .map(" ".join)
    .map(lambda s: s + "?"),
)


def test_every_route_gives_a_chat_key_no_uncited_text(deployment: Deployment) -> None:
    calls = every_route(deployment)
    assert {p for _, p, _ in calls} >= {"/v1/chat", "/v1/answer", "/v1/chat/completions"}
    calls += answer_calls("When are refunds for annual plans paid?")
    assert ask(deployment, calls, "When are refunds paid? refunds") == 0


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=questions, which=st.integers(0, 4))
def test_no_question_gets_a_chat_key_uncited_text(
    deployment: Deployment, question: str, which: int
) -> None:
    assert ask(deployment, [answer_calls(question)[which]], question) == 0


def test_a_refused_question_shows_a_chat_key_no_quotes(deployment: Deployment) -> None:
    d = deployment
    question = {"question": "When are refunds for annual plans paid?"}
    full = d.client.post("/v1/answer", json=question, headers=d.reader).json()
    assert full["refusal"]["reason"] == "conflicting_sources"
    assert "14 days" in full["refusal"]["message"]  # a read key sees both sides' sentences
    assert full["attempts"] is not None
    chat = d.client.post("/v1/answer", json=question, headers=d.chat).json()
    assert chat["refusal"]["reason"] == "conflicting_sources"
    assert "days" not in json.dumps(chat)
    assert "attempts" not in chat


def test_chat_keys_get_cited_text_with_the_sentence(deployment: Deployment) -> None:
    d = deployment
    stream = d.client.post(
        "/v1/chat", json={"question": "When does the office gym open?", "top_k": 50}, headers=d.chat
    )
    events = [e for e in parsed(stream.text) if isinstance(e, dict)]
    sources = next(e for e in events if "blocks" in e)
    assert len(sources["blocks"]) <= Settings().chat_max_top_k
    assert all("text" not in b for b in sources["blocks"])
    sentences = [e for e in events if "citations" in e]
    assert sentences, stream.text
    assert all("6 am" in c["text"] for s in sentences for c in s["citations"])
    # A read key keeps every retrieved block's text up front, as before.
    full = d.client.post(
        "/v1/chat", json={"question": "When does the office gym open?"}, headers=d.reader
    )
    blocks = next(e for e in parsed(full.text) if isinstance(e, dict) and "blocks" in e)["blocks"]
    assert all(b["text"] for b in blocks)


def test_a_not_answered_refusal_names_a_chat_key_labels_not_sentences() -> None:
    # A one-line paragraph without a full stop is read as a heading: named in the refusal's
    # "It covers nearby" to a reader, it is a sentence of a block nothing cited.
    secret = "The staff discount code is BLUEFOX and it gives forty percent off"
    reading = Reading(None, (), False, ("Shipping", secret, "Opening hours"))
    refusal = not_answered(reading)
    assert refusal is not None
    assert secret in refusal.message  # what a read key sees
    shown = chatview.refusal(refusal)
    assert isinstance(shown["message"], str)
    assert "BLUEFOX" not in json.dumps(shown)
    assert shown["message"].endswith("It covers nearby: Shipping; Opening hours.")
    custom = not_answered(Reading(None, (), False, (secret,)), "Try: {nearby}!")
    assert custom is not None
    assert chatview.refusal_text(custom) == "Try: nothing close!"
