"""Tenant isolation, property-based: random documents in several collections, random keys,
every route (a new route fails the test until it is probed); no response to a key ever carries
an id, name or text of a document in a collection the key is not bound to, and no key deletes or
adds to such a document, resumes or rates another key's answer, or deletes its conversation."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from starlette.routing import Mount
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.sse import EventStreamParser

from .conftest import wait_indexed

WORDS = ["refund", "plan", "policy", "days", "annual", "team", "seat", "invoice", "owner"]
QUESTION = "What does the refund policy say about annual plans?"


@dataclass(frozen=True)
class Doc:
    id: str
    collection: str
    name: str
    marker: str


documents = st.lists(
    st.tuples(st.integers(0, 2), st.lists(st.sampled_from(WORDS), min_size=3, max_size=8)),
    min_size=2,
    max_size=5,
)
keys = st.lists(
    st.tuples(
        st.sets(st.sampled_from(["write", "read", "chat"]), min_size=1),
        st.one_of(st.none(), st.sets(st.integers(0, 2), min_size=1, max_size=2)),
        st.sampled_from([None, 0, 1, 2]),  # the collection named in requests
    ),
    min_size=1,
    max_size=3,
)


def requests_for(
    doc_ids: list[str], collections: list[str], named: str | None, answers: Sequence[str] = ()
) -> list[tuple[str, str, dict[str, object]]]:
    """(method, path, request kwargs) covering every route a key might use."""
    body: dict[str, object] = {"question": QUESTION}
    search: dict[str, object] = {"query": QUESTION}
    completion: dict[str, object] = {"messages": [{"role": "user", "content": QUESTION}]}
    if named is not None:
        body["collection"] = search["collection"] = completion["collection"] = named
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("GET", "/healthz", {}),
        ("GET", "/readyz", {}),
        ("GET", "/metrics", {}),
        ("GET", "/v1/keys", {}),
        ("GET", "/v1/models", {}),
        ("GET", "/v1/documents", {}),
        ("POST", "/v1/search", {"json": search}),
        ("POST", "/v1/chat", {"json": body}),
        (
            "GET",
            "/v1/chat",
            {"params": {"q": QUESTION, **({"collection": named} if named else {})}},
        ),
        ("POST", "/v1/answer", {"json": body}),
        ("POST", "/v1/chat/completions", {"json": completion}),
        ("POST", "/v1/chat/completions", {"json": {**completion, "stream": True}}),
    ]
    calls += [("GET", "/v1/documents", {"params": {"collection": c}}) for c in collections]
    upload: dict[str, object] = {"files": {"file": ("probe.txt", b"A probe of uploads.")}}
    if named is not None:
        upload["data"] = {"collection": named}
    calls += [
        ("GET", "/", {}),
        ("POST", "/v1/documents", upload),
        ("POST", "/v1/keys", {"json": {"name": "probe", "scopes": ["chat"]}}),
        ("DELETE", "/v1/keys/key_000000000000", {}),
        ("GET", "/openapi.json", {}),
        ("GET", "/v1/insights", {}),
        ("GET", "/v1/insights/questions", {"params": {"format": "csv"}}),
        ("POST", "/v1/index/optimize", {}),
    ]
    # Answers other keys were given (their ids resume and rate them) and their conversations.
    for answer_id in answers:
        calls += [
            ("GET", f"/v1/streams/{answer_id}", {"params": {"after": "0"}}),
            ("DELETE", f"/v1/streams/{answer_id}", {}),
            ("GET", "/v1/chat", {"headers": {"Last-Event-ID": f"{answer_id}.1"}}),
            ("POST", "/v1/feedback", {"json": {"answer_id": answer_id, "rating": "down"}}),
            ("DELETE", f"/v1/conversations/conv{answer_id}", {}),
        ]
    for doc_id in doc_ids:
        base = f"/v1/documents/{doc_id}"
        calls += [
            ("GET", base, {}),
            ("GET", f"{base}/content", {}),
            ("GET", f"{base}/versions/1", {}),
            ("GET", f"{base}/versions/1/chunks", {}),
            ("GET", f"{base}/versions/1/content", {}),
            ("GET", f"{base}/versions/1/text", {}),
            ("POST", f"{base}/versions", {"files": {"file": ("v.txt", b"A new version.")}}),
        ]
    # Last: a key may delete what its collections hold (the check below: nothing else).
    calls += [("DELETE", f"/v1/documents/{doc_id}", {}) for doc_id in doc_ids]
    return calls


def test_no_key_learns_about_collections_it_is_not_bound_to(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    config = Settings(data_dir=tmp_path / "data", rate_limit_rpm=1_000_000, max_streams=100)
    store = KeyStore(config.data_dir)
    _, admin_secret = store.create(name="admin", scopes=["admin"])
    admin = {"Authorization": f"Bearer {admin_secret}"}
    every: list[Doc] = []
    answers: list[str] = []

    with TestClient(create_app(config, embedder=minilm)) as client:

        @settings(
            max_examples=8,
            deadline=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],  # shrinking a failure here takes minutes
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(documents, keys)
        def check(
            docs: list[tuple[int, list[str]]],
            key_specs: list[tuple[set[str], set[int] | None, int | None]],
        ) -> None:
            run = secrets.token_hex(3)
            collections = [f"c{i}x{run}" for i in range(3)]
            created: list[Doc] = []
            for i, (c, words) in enumerate(docs):
                marker, name = f"mk{run}{i}q", f"nm{run}{i}q.txt"
                text = f"The {' '.join(words)} policy {marker}: plans refund in {i + 3} days."
                response = client.post(
                    "/v1/documents",
                    files={"file": (name, text.encode())},
                    data={"collection": collections[c]},
                    headers=admin,
                )
                assert response.status_code == 201, response.text
                created.append(Doc(response.json()["document"]["id"], collections[c], name, marker))
            client.headers.update(admin)
            for doc in created:
                wait_indexed(client, doc.id)
            for where in sorted({doc.collection for doc in created}):
                answers.append(asked_by(client, admin, where))
            del client.headers["Authorization"]
            every.extend(created)
            probe_ids = [d.id for d in created] + [d.id for d in every[-12 : -len(created)]]
            for scopes, bound, named in key_specs:
                names = ["*"] if bound is None else [collections[i] for i in sorted(bound)]
                _, secret = store.create(name="k", scopes=scopes, collections=names)
                hidden = [d for d in every if bound is not None and d.collection not in names]
                requests = requests_for(
                    probe_ids,
                    collections,
                    None if named is None else collections[named],
                    answers[-6:],
                )
                there = {d.id: n for d in hidden if (n := versions(client, admin, d.id))}
                probe(client, secret, f"bound to {names} ({sorted(scopes)})", requests, hidden)
                kept_log = client.get("/v1/insights/questions", headers=admin).json()["questions"]
                rated = {q["id"] for q in kept_log if q["rating"]}
                assert not rated & set(answers), f"a key {names} rated another key's answer"
                talks = {q["conversation"] for q in kept_log}
                assert {f"conv{a}" for a in answers} <= talks, f"a key {names} deleted a talk"
                for doc_id, count in there.items():  # no key changes what it cannot see
                    assert versions(client, admin, doc_id) == count, f"a key {names}: {doc_id}"

        probed = requests_for(["doc_x"], ["c"], None, ["answer_x"])
        assert unprobed(client.app, probed) == set()  # a new route is added to requests_for
        check()


def versions(client: TestClient, admin: dict[str, str], doc_id: str) -> int:
    """How many versions the document has; 0 when it is gone."""
    found = client.get(f"/v1/documents/{doc_id}", headers=admin)
    return len(found.json()["versions"]) if found.status_code == 200 else 0


def asked_by(client: TestClient, headers: dict[str, str], collection: str) -> str:
    """Another key's answer in `collection` (with its conversation): its id."""
    body = {"question": QUESTION, "collection": collection}
    sent = EventStreamParser().feed(client.post("/v1/chat", json=body, headers=headers).text)
    answer_id = (sent[0].id or "").rpartition(".")[0]
    assert answer_id, sent
    body["conversation"] = f"conv{answer_id}"
    client.post("/v1/chat", json=body, headers=headers)
    return answer_id


def unprobed(app: object, probed: list[tuple[str, str, dict[str, object]]]) -> set[str]:
    """`METHOD path` of the app's routes no probe reaches."""
    missing = set()
    for route in app.router.routes:  # type: ignore[attr-defined]
        if isinstance(route, Mount):
            continue
        for method in route.methods or ():
            if method == "HEAD":
                continue
            if not any(m == method and route.path_regex.fullmatch(p) for m, p, _ in probed):
                missing.add(f"{method} {route.path}")
    return missing


def probe(
    client: TestClient,
    secret: str,
    who: str,
    requests: list[tuple[str, str, dict[str, object]]],
    hidden: list[Doc],
) -> None:
    headers = {"Authorization": f"Bearer {secret}"}
    for method, path, kwargs in requests:
        extra = kwargs.get("headers")
        sent = {**headers, **(extra if isinstance(extra, dict) else {})}
        others = {k: v for k, v in kwargs.items() if k != "headers"}
        response = client.request(method, path, headers=sent, **others)  # type: ignore[arg-type]
        assert response.status_code < 500, (method, path, response.text)
        # Echoing the caller's own input is no leak.
        asked = f"{path} {json.dumps(kwargs, default=repr)}"
        for doc in hidden:
            for value in (doc.id, doc.name, doc.marker):
                assert value in asked or value not in response.text, (
                    f"{method} {path} for a key {who} leaked {value} of {doc.collection}"
                )
