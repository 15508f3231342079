"""The question log, feedback and Insights (issue 31): a chat key's visitor rates an answer
and forgets their conversation; an admin key reads the report and exports it; retention."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.insights.report import export_csv, report
from stream_rag.insights.topics import cluster
from stream_rag.store.database import Database
from stream_rag.store.questions import Asked, Cited, QuestionLog

from .conftest import wait_indexed

DOCS = {
    "wrapping.md": "Gift wrapping costs 4.99 dollars per parcel. "
    "Wrapped parcels ship within two working days of the order.",
    "returns.md": "Returns are accepted within 30 days of delivery. "
    "The parcel must come back in its original packaging with the receipt.",
}
CONVERSATION = "conv-0123456789abcdef"


@dataclass
class Site:
    client: TestClient
    admin: dict[str, str]
    chat: dict[str, str]
    other_chat: dict[str, str]


@pytest.fixture
def site(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[Site]:
    data = tmp_path / "data"
    store = KeyStore(data)
    admin = {"Authorization": "Bearer " + store.create(name="a", scopes=["admin"])[1]}
    chat = {"Authorization": "Bearer " + store.create(name="w", scopes=["chat"])[1]}
    other = {"Authorization": "Bearer " + store.create(name="o", scopes=["chat"])[1]}
    settings = Settings(data_dir=data, feedback_rpm=5, cors_origins=("https://shop.example",))
    with TestClient(create_app(settings, embedder=minilm)) as client:
        client.headers.update(admin)
        for name, text in DOCS.items():
            made = client.post("/v1/documents", files={"file": (name, text.encode())})
            wait_indexed(client, made.json()["document"]["id"])
        del client.headers["Authorization"]
        yield Site(client, admin, chat, other)


def ask(site: Site, question: str, headers: dict[str, str], **extra: Any) -> tuple[str, list[Any]]:
    """The answer's id (its events' ids before the dot) and its events."""
    response = site.client.post("/v1/chat", json={"question": question, **extra}, headers=headers)
    assert response.status_code == 200, response.text
    events: list[tuple[str, str, dict[str, Any]]] = []
    name, ident = "message", ""
    for line in response.text.splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("id: "):
            ident = line[4:]
        elif line.startswith("data: "):
            events.append((name, ident, json.loads(line[6:])))
    answer_ids = {ident.split(".")[0] for _, ident, _ in events}
    assert len(answer_ids) == 1
    return answer_ids.pop(), events


def test_rating_reaches_insights_and_forgetting_removes_it(site: Site) -> None:
    question = "How much does gift wrapping cost?"
    answer_id, events = ask(site, question, site.chat, conversation=CONVERSATION)
    assert any(name == "sentence" for name, _, _ in events)
    rate = {"answer_id": answer_id, "rating": "down", "comment": "I wanted the price in euros"}
    # Another page's key cannot rate this visitor's answer; an unknown id is 404 too.
    assert site.client.post("/v1/feedback", json=rate, headers=site.other_chat).status_code == 404
    unknown = {**rate, "answer_id": "0000000000000000"}
    assert site.client.post("/v1/feedback", json=unknown, headers=site.chat).status_code == 404
    rated = site.client.post("/v1/feedback", json=rate, headers=site.chat)
    assert rated.status_code == 200, rated.text
    # Insights are for admin keys only.
    assert site.client.get("/v1/insights", headers=site.chat).status_code == 403
    report = site.client.get("/v1/insights", headers=site.admin).json()
    assert report["questions"] == 1
    assert report["feedback"] == {"up": 0, "down": 1}
    (down,) = report["rated_down"]
    assert down["question"] == question
    assert down["comment"] == rate["comment"]
    assert [c["name"] for c in down["citations"]] == ["wrapping.md"]
    assert report["top_cited"][0]["name"] == "wrapping.md"
    assert report["by_day"][0]["asked"] == 1
    exported = site.client.get("/v1/insights/questions?format=csv", headers=site.admin)
    assert exported.headers["content-type"].startswith("text/csv")
    (row,) = csv.DictReader(io.StringIO(exported.text))
    assert row["question"] == question
    assert row["rating"] == "down"
    assert row["conversation"] == CONVERSATION
    # Another key cannot delete this visitor's conversation; the visitor can.
    gone = site.client.delete(f"/v1/conversations/{CONVERSATION}", headers=site.other_chat)
    assert gone.json()["deleted"] == 0
    gone = site.client.delete(f"/v1/conversations/{CONVERSATION}", headers=site.chat)
    assert gone.status_code == 200
    assert gone.json()["deleted"] == 1
    listed = site.client.get("/v1/insights/questions", headers=site.admin).json()
    assert listed == {"questions": []}


def test_refused_questions_are_grouped_by_reason_and_topic(site: Site) -> None:
    for question in (
        "Do you ship to Norway?",
        "How long does shipping to Norway take?",
        "What is the capital of Peru?",
    ):
        ask(site, question, site.chat)
    ask(site, "How much does gift wrapping cost?", site.chat)
    report = site.client.get("/v1/insights", headers=site.admin).json()
    assert report["questions"] == 4
    refused = report["refused"]
    assert sum(r["count"] for r in refused["by_reason"]) == report["outcomes"]["refused"] >= 3
    topics = refused["topics"]
    norway = [t for t in topics if any("Norway" in q for q in t["questions"])]
    assert len(norway) == 1, topics
    assert norway[0]["count"] == 2, topics
    assert not any("Peru" in q for q in norway[0]["questions"])


def test_bad_feedback_is_a_400_and_ratings_are_rate_limited(site: Site) -> None:
    answer_id, _ = ask(site, "How much does gift wrapping cost?", site.chat)
    for body in (
        {"answer_id": answer_id, "rating": "meh"},
        {"answer_id": answer_id, "rating": {}},  # unhashable: was a 500
        {"answer_id": answer_id, "rating": "up", "comment": "x" * 2001},
        {"rating": "up"},
    ):
        response = site.client.post("/v1/feedback", json=body, headers=site.chat)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_field"
    # feedback_rpm is 5: four above, then one more, then 429 with a Retry-After.
    up = {"answer_id": answer_id, "rating": "up"}
    for _ in range(1):
        assert site.client.post("/v1/feedback", json=up, headers=site.chat).status_code == 200
    limited = site.client.post("/v1/feedback", json=up, headers=site.chat)
    assert limited.status_code == 429
    assert int(limited.headers["retry-after"]) >= 1
    assert limited.json()["error"]["code"] == "rate_limited"


def test_cors_exposes_retry_after_to_allowed_origins(site: Site) -> None:
    response = site.client.get("/healthz", headers={"Origin": "https://shop.example", **site.chat})
    assert "retry-after" in response.headers["access-control-expose-headers"].lower()


def test_export_and_days_are_checked(site: Site) -> None:
    for query in ("format=xml", "days=0", "days=abc"):
        response = site.client.get(f"/v1/insights/questions?{query}", headers=site.admin)
        assert response.status_code == 400, query
    bad = site.client.delete("/v1/conversations/x", headers=site.chat)
    assert bad.status_code == 400


def test_retention_deletes_old_questions_and_zero_keeps_none(tmp_path: Path) -> None:
    db = Database(tmp_path / "q.sqlite3")
    log = QuestionLog(db, keep_days=30)
    old = (datetime.now(UTC) - timedelta(days=31)).isoformat().replace("+00:00", "Z")
    log.record(Asked("a1", "default", "old question", "answered", asked_at=old))
    log.record(Asked("a2", "default", "new question", "answered"))
    assert log.rate("a1", None, -1, "")
    assert log.purge() == 1
    assert [r.question for r in log.rows(None, "0")] == ["new question"]
    off = QuestionLog(db, keep_days=0)
    off.record(Asked("a3", "default", "not kept", "answered"))
    assert [r.id for r in off.rows(None, "0")] == ["a2"]


def test_csv_export_neutralises_formulas() -> None:
    row = Asked(
        "a1",
        "default",
        '=HYPERLINK("http://evil.example")',
        "answered",
        citations=(Cited("doc_1", 2, "@sum.md"),),
    )
    (parsed,) = csv.DictReader(io.StringIO(export_csv([row])))
    assert parsed["question"].startswith("'=")
    assert parsed["citations"] == "'@sum.md (doc_1 v2)"


def test_topics_without_an_embedder_group_shared_words() -> None:
    topics = cluster(
        [
            "Do you ship parcels to Norway?",
            "Shipping parcels to Norway: how long?",
            "Is the shop open on Sunday?",
            "Do you ship parcels to Norway?",
        ]
    )
    assert [t.data()["count"] for t in topics] == [3, 1]
    assert "norway" in topics[0].label
    assert "parcels" in topics[0].label


def test_topics_read_only_the_newest_refused_questions() -> None:
    # Embedding every refused question of a busy month (50,000 rows) took minutes; the
    # topics are those of the newest ones, and the report says how many.
    newest_first = [
        Asked(f"q{i}", "default", question, "refused", reason="not_answered")
        for i, question in enumerate(
            ["Is the shop open on Sunday?", "Is the shop open at Easter?"]
            + ["Do you ship parcels to Norway?"] * 3
        )
    ]
    body = report(newest_first, topic_questions=2)
    refused = body["refused"]
    assert isinstance(refused, dict)
    assert refused["topics_of"] == 2
    assert [t["count"] for t in refused["topics"]] == [2]
    assert "shop" in refused["topics"][0]["label"]
    assert refused["by_reason"][0]["count"] == 5
