"""Answer slots shared through PostgreSQL (access/shared.py `SharedAnswerSlots`): two counters
on one database are two replicas, and a key's `max_streams` holds across them; a replica that
stops beating has its slots lapse. The guard of a replica counts another replica's answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from stream_rag.access.keys import KeyStore
from stream_rag.access.shared import SharedAnswerSlots
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.store.database import Database


@pytest.fixture
def database(postgres_url: str) -> Iterator[Database]:
    db = Database(postgres_url, pool_size=4)
    try:
        yield db
    finally:
        db.close()


def age(database: Database, slots: SharedAnswerSlots, seconds: float) -> None:
    """Make `slots`' replica look as if it last beat `seconds` ago (a killed replica)."""
    database.connection().execute(
        "UPDATE answer_slots SET heartbeat = heartbeat - ? WHERE replica = ?",
        (seconds, slots.replica),
    )


def test_a_keys_limit_holds_across_two_replicas(database: Database) -> None:
    a, b = SharedAnswerSlots(database), SharedAnswerSlots(database)
    key = [("key-1", 3)]
    assert [a.take(key) for _ in range(3)] == [None, None, None]
    assert a.take(key) == ("key-1", 3)
    assert b.take(key) == ("key-1", 3)  # A holds all three: B's replica does not add three
    assert b.take([("key-2", 3)]) is None  # another key has its own
    a.give_back(key)
    assert b.take(key) is None
    assert a.take(key) == ("key-1", 3)
    b.give_back(key)
    assert a.take(key) is None


def test_taking_is_all_or_none_and_a_visitor_has_its_own_limit(database: Database) -> None:
    a, b = SharedAnswerSlots(database), SharedAnswerSlots(database)
    visitor_1 = [("chat", 8), ("chat@10.0.0.1", 2)]
    visitor_2 = [("chat", 8), ("chat@10.0.0.2", 2)]
    assert a.take(visitor_1) is None
    assert b.take(visitor_1) is None
    # The visitor's two are taken (one on each replica): a third is refused on either ...
    assert a.take(visitor_1) == ("chat@10.0.0.1", 2)
    assert b.take(visitor_1) == ("chat@10.0.0.1", 2)
    # ... and its refusal took nothing from the key: six more answers fit, for others.
    for _ in range(3):
        assert a.take(visitor_2[:1]) is None
        assert b.take(visitor_2[:1]) is None
    assert b.take(visitor_2) == ("chat", 8)
    a.give_back(visitor_1)
    assert b.take(visitor_2) is None
    assert a.take(visitor_1) == ("chat", 8)


def test_a_replica_that_stops_beating_has_its_slots_lapse(database: Database) -> None:
    a = SharedAnswerSlots(database, stale_s=5.0)
    b = SharedAnswerSlots(database, stale_s=5.0)
    key = [("key-1", 2)]
    assert a.take(key) is None
    assert a.take(key) is None
    assert b.take(key) == ("key-1", 2)
    # A beats: its slots still count, however old its rows were.
    age(database, a, 60)
    a.beat()
    assert b.take(key) == ("key-1", 2)
    # A stops beating (killed): once its beat is older than stale_s, B may take both.
    age(database, a, 6)
    assert b.take(key) is None
    assert b.take(key) is None
    assert b.take(key) == ("key-1", 2)
    # A's rows are dropped once long dead; B's own rows always count for B.
    age(database, a, 60)
    age(database, b, 60)
    b.beat()
    rows = database.connection().execute("SELECT replica, taken FROM answer_slots").fetchall()
    assert [(r[0], int(r[1])) for r in rows] == [(b.replica, 2)]
    b.give_back(key)
    b.give_back(key)
    assert database.connection().execute("SELECT count(*) FROM answer_slots").fetchone()[0] == 0


def test_a_clean_stop_gives_every_slot_back(database: Database) -> None:
    a, b = SharedAnswerSlots(database), SharedAnswerSlots(database)
    key = [("key-1", 1)]
    assert a.take(key) is None
    assert b.take(key) == ("key-1", 1)
    a.close()
    assert b.take(key) is None


def test_a_replicas_guard_counts_the_other_replicas_answers(
    tmp_path: Path, postgres_url: str, database: Database, minilm: MiniLMEmbedder
) -> None:
    keys = KeyStore(tmp_path / "keys", postgres_url)
    record, secret = keys.create(name="w", scopes=["chat"], max_streams=2)
    chat = {"Authorization": f"Bearer {secret}"}
    keys.close()
    other = SharedAnswerSlots(database)  # replica A, answering two of the key's questions
    assert other.take([(record.id, 2)]) is None
    assert other.take([(record.id, 2)]) is None
    settings = Settings(data_dir=tmp_path / "b", database_url=postgres_url)
    with TestClient(create_app(settings, embedder=minilm)) as b:
        refused = b.post("/v1/chat", json={"question": "When does the gym open?"}, headers=chat)
        assert refused.status_code == 429, refused.text
        assert "at most 2 answers at a time for this key" in refused.text
        other.give_back([(record.id, 2)])
        answered = b.post("/v1/chat", json={"question": "When does the gym open?"}, headers=chat)
        assert answered.status_code == 200, answered.text
        # B gave its slot back when the answer ended: A takes its second again.
        assert other.take([(record.id, 2)]) is None
        assert other.take([(record.id, 2)]) == (record.id, 2)
