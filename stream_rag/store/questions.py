"""The question log: one row per answer streamed (question, outcome, citations, conflicts),
the visitor's rating of it, deletion by conversation, and retention
(STREAM_RAG_QUESTION_LOG_DAYS; 0 keeps nothing). Questions are personal data: nothing here
outlives its retention, and a visitor can delete their own conversation."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from .database import Database
from .records import utc_now

OUTCOMES = ("answered", "refused", "failed", "stopped")
MAX_COMMENT_CHARS = 2000
# Rows an insights report reads at most (the newest): a report stays a bounded read.
MAX_REPORT_ROWS = 50_000
_PURGE_EVERY_S = 3600.0


@dataclass(frozen=True, slots=True)
class Cited:
    """A document version an answer cited, or one side of a conflict."""

    doc_id: str
    version: int
    name: str
    dated: str | None = None  # when the version says it was last updated (a conflict's side)

    def data(self) -> dict[str, object]:
        data: dict[str, object] = {"doc_id": self.doc_id, "version": self.version}
        data["name"] = self.name
        if self.dated is not None:
            data["dated"] = self.dated
        return data

    @classmethod
    def of(cls, data: Any) -> Cited | None:
        if not isinstance(data, dict):
            return None
        doc_id, version, name = data.get("doc_id"), data.get("version"), data.get("name")
        if not isinstance(doc_id, str) or not isinstance(version, int):
            return None
        dated = data.get("dated")
        return cls(doc_id, version, str(name or doc_id), dated if isinstance(dated, str) else None)


@dataclass(frozen=True, slots=True)
class Asked:
    """One answered (or refused, failed, stopped) question, as the log keeps it."""

    id: str
    collection: str
    question: str
    outcome: str
    conversation: str | None = None
    key_id: str | None = None
    reason: str | None = None
    sentences: int = 0
    dropped: int = 0
    citations: tuple[Cited, ...] = ()
    conflicts: tuple[tuple[Cited, Cited], ...] = ()
    asked_at: str = field(default_factory=utc_now)
    rating: int | None = None
    comment: str = ""

    def data(self) -> dict[str, object]:
        return {
            "id": self.id,
            "asked_at": self.asked_at,
            "collection": self.collection,
            "conversation": self.conversation,
            "question": self.question,
            "outcome": self.outcome,
            "reason": self.reason,
            "sentences": self.sentences,
            "dropped": self.dropped,
            "citations": [c.data() for c in self.citations],
            "conflicts": [{"a": a.data(), "b": b.data()} for a, b in self.conflicts],
            "rating": {1: "up", -1: "down"}.get(self.rating or 0),
            "comment": self.comment,
        }


class QuestionLog:
    """The log's rows in the store's database; every method blocks (run it in a thread)."""

    def __init__(self, db: Database, keep_days: int) -> None:
        self.db = db
        self.keep_days = keep_days
        self._purged_at = -1e18

    @property
    def enabled(self) -> bool:
        return self.keep_days > 0

    def record(self, asked: Asked) -> None:
        if not self.enabled:
            return
        if time.monotonic() - self._purged_at > _PURGE_EVERY_S:
            self.purge()
        with self.db.transaction() as db:
            db.execute(
                "INSERT INTO questions (id, conversation, collection, key_id, asked_at,"
                " question, outcome, reason, sentences, dropped, citations, conflicts)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET conversation = excluded.conversation,"
                " collection = excluded.collection, key_id = excluded.key_id,"
                " asked_at = excluded.asked_at, question = excluded.question,"
                " outcome = excluded.outcome, reason = excluded.reason,"
                " sentences = excluded.sentences, dropped = excluded.dropped,"
                " citations = excluded.citations, conflicts = excluded.conflicts",
                (
                    asked.id,
                    asked.conversation,
                    asked.collection,
                    asked.key_id,
                    asked.asked_at,
                    asked.question,
                    asked.outcome,
                    asked.reason,
                    asked.sentences,
                    asked.dropped,
                    json.dumps([c.data() for c in asked.citations]),
                    json.dumps([[a.data(), b.data()] for a, b in asked.conflicts]),
                ),
            )

    def purge(self, now: datetime | None = None) -> int:
        """Delete rows older than the retention (all of them when it is 0); returns how many."""
        self._purged_at = time.monotonic()
        cutoff = (now or datetime.now(UTC)) - timedelta(days=max(self.keep_days, 0))
        stamp = cutoff.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        with self.db.transaction() as db:
            cursor = db.execute("DELETE FROM questions WHERE asked_at < ?", (stamp,))
            return int(cursor.rowcount)

    def rate(self, question_id: str, key_id: str | None, rating: int, comment: str) -> bool:
        """Rate an answer (again: the last rating counts). `key_id` None (an admin or open
        mode) may rate any answer, a key only its own answers; False when there is none."""
        with self.db.transaction() as db:
            row = db.execute("SELECT key_id FROM questions WHERE id = ?", (question_id,)).fetchone()
            if row is None or (key_id is not None and row["key_id"] != key_id):
                return False
            db.execute(
                "INSERT INTO feedback (question_id, rating, comment, rated_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(question_id) DO UPDATE SET rating = excluded.rating,"
                " comment = excluded.comment, rated_at = excluded.rated_at",
                (question_id, rating, comment, utc_now()),
            )
            return True

    def forget_conversation(self, conversation: str, key_id: str | None) -> int:
        """Delete a conversation's questions and their ratings (a key: only its own rows)."""
        with self.db.transaction() as db:
            if key_id is None:
                cursor = db.execute("DELETE FROM questions WHERE conversation = ?", (conversation,))
            else:
                cursor = db.execute(
                    "DELETE FROM questions WHERE conversation = ? AND key_id = ?",
                    (conversation, key_id),
                )
            return int(cursor.rowcount)

    def rows(self, collections: Iterable[str] | None, since: str) -> list[Asked]:
        """Questions asked since `since` (ISO time) in `collections` (None: all), newest first."""
        sql = (
            "SELECT q.*, f.rating, f.comment FROM questions q "
            "LEFT JOIN feedback f ON f.question_id = q.id WHERE q.asked_at >= ?"
        )
        params: list[object] = [since]
        if collections is not None:
            wanted = sorted(set(collections))
            if not wanted:
                return []
            sql += f" AND q.collection IN ({','.join('?' * len(wanted))})"
            params += wanted
        sql += " ORDER BY q.asked_at DESC, q.id LIMIT ?"
        params.append(MAX_REPORT_ROWS)
        found = self.db.connection().execute(sql, params).fetchall()
        return [_asked(row) for row in found]


def _asked(row: Any) -> Asked:
    citations = tuple(c for c in map(Cited.of, json.loads(row["citations"])) if c is not None)
    conflicts: list[tuple[Cited, Cited]] = []
    for pair in json.loads(row["conflicts"]):
        a, b = (Cited.of(pair[0]), Cited.of(pair[1])) if len(pair) == 2 else (None, None)
        if a is not None and b is not None:
            conflicts.append((a, b))
    return Asked(
        id=row["id"],
        collection=row["collection"],
        question=row["question"],
        outcome=row["outcome"],
        conversation=row["conversation"],
        key_id=row["key_id"],
        reason=row["reason"],
        sentences=row["sentences"],
        dropped=row["dropped"],
        citations=citations,
        conflicts=tuple(conflicts),
        asked_at=row["asked_at"],
        rating=row["rating"],
        comment=row["comment"] or "",
    )
