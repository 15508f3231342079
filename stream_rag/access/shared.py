"""Access state every replica shares through the store's database: rate-limit buckets and
answer slots (PostgreSQL only: one SQLite process keeps them in memory) and the cited-version
grants a chat key may download (both backends, so a restart keeps them too)."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from ..store.database import Database
from ..store.records import utc_now

if TYPE_CHECKING:
    from ..store.postgres import PostgresBackend

log = logging.getLogger("stream_rag")
# Grants older than this are dropped (a citation shown a month ago is asked again).
GRANT_DAYS = 30
_PRUNE_EVERY_S = 60.0

# One statement takes a request from a token bucket (`rpm` a minute, bursts up to `rpm`) on the
# database's clock, so replicas with skewed clocks share one bucket fairly. R is the bucket
# refilled to now; a request is taken when R >= 1.
_REFILLED = "least(?, b.tokens + (excluded.stamp - b.stamp) * ? / 60.0)"
_TAKE = f"""
INSERT INTO rate_buckets AS b (who, tokens, stamp, taken)
VALUES (?, ? - 1, extract(epoch from clock_timestamp()), 1)
ON CONFLICT (who) DO UPDATE SET
    tokens = CASE WHEN {_REFILLED} >= 1 THEN {_REFILLED} - 1 ELSE {_REFILLED} END,
    taken = CASE WHEN {_REFILLED} >= 1 THEN 1 ELSE 0 END,
    stamp = excluded.stamp
RETURNING taken, tokens
"""


class SharedRateLimiter:
    """`RateLimiter.take` with its buckets in PostgreSQL: N replicas do not multiply a limit.
    Blocking (one statement): call it from a worker thread."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._pruned_at = time.monotonic()

    def take(self, who: str, rpm: int) -> float | None:
        """Spend one request; returns None, or the seconds until one is available."""
        limit = float(rpm)
        params = (who, limit, limit, limit, limit, limit, limit, limit, limit, limit)
        row = self.database.connection().execute(_TAKE, params).fetchone()
        if time.monotonic() - self._pruned_at > _PRUNE_EVERY_S:
            self._prune()
        if int(row[0]):
            return None
        return (1.0 - float(row[1])) * 60.0 / rpm

    def _prune(self) -> None:
        """Buckets idle for a minute are full again: their rows can go."""
        self._pruned_at = time.monotonic()
        self.database.connection().execute(
            "DELETE FROM rate_buckets WHERE stamp < extract(epoch from clock_timestamp()) - 60"
        )


# Answer slots: each replica beats its rows every SLOT_BEAT_S; rows whose beat is older than
# SLOT_STALE_S belong to a replica that died, and no longer count.
SLOT_BEAT_S = 1.0
SLOT_STALE_S = 5.0
# The two-key advisory lock space (it does not overlap the store's one-key locks): class, holder.
_SLOT_LOCK = 0x5352
_NOW = "extract(epoch from clock_timestamp())"


class SharedAnswerSlots:
    """`AnswerSlots` with the counts in PostgreSQL's `answer_slots`, a row per (holder,
    replica): N replicas do not multiply a key's `max_streams`. Every method blocks (one short
    transaction): call them from a worker thread, and `beat` every `SLOT_BEAT_S`."""

    def __init__(self, database: Database, *, stale_s: float = SLOT_STALE_S) -> None:
        from ..store.postgres import PostgresBackend  # psycopg is imported only when used

        if not isinstance(database.backend, PostgresBackend):
            raise TypeError("shared answer slots need a PostgreSQL store")
        self.backend: PostgresBackend = database.backend
        self.stale_s = stale_s
        self.replica = uuid.uuid4().hex
        self.held = 0  # this replica's slots taken (beats are skipped while it holds none)
        # Give-backs the database refused (it was away): retried at every beat.
        self._owed: list[list[str]] = []
        self._lock = threading.Lock()

    def take(self, holders: Sequence[tuple[str, int]]) -> tuple[str, int] | None:
        """Take a slot of every holder if each has one free, all or none. Returns the first
        (holder, limit) that is full (nothing taken), or None (taken)."""
        names = sorted({h for h, _ in holders})
        with self.backend.own_transaction() as db:
            # Each holder's takes, on every replica, one at a time (in one order: no deadlock).
            for name in names:
                db.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (_SLOT_LOCK, name))
            for holder, limit in holders:
                row = db.execute(
                    "SELECT coalesce(sum(taken), 0) FROM answer_slots WHERE holder = ? "
                    f"AND (replica = ? OR heartbeat > {_NOW} - ?)",
                    (holder, self.replica, self.stale_s),
                ).fetchone()
                if int(row[0]) >= limit:
                    return (holder, limit)
            for name in names:
                db.execute(
                    "INSERT INTO answer_slots (holder, replica, taken, heartbeat) "
                    f"VALUES (?, ?, 1, {_NOW}) ON CONFLICT (holder, replica) DO UPDATE SET "
                    "taken = answer_slots.taken + 1, heartbeat = excluded.heartbeat",
                    (name, self.replica),
                )
        with self._lock:
            self.held += 1
        return None

    def give_back(self, holders: Sequence[tuple[str, int]]) -> None:
        """Never raises: a give-back the database refuses is retried by `beat` (the replica's
        rows keep beating meanwhile, so the slot stays counted until it is)."""
        names = sorted({h for h, _ in holders})
        try:
            self._give_back(names)
        except Exception:
            log.exception("giving back an answer slot failed; retried at the next beat")
            with self._lock:
                self._owed.append(names)

    def _give_back(self, names: list[str]) -> None:
        with self.backend.own_transaction() as db:
            for name in names:
                db.execute(
                    "UPDATE answer_slots SET taken = taken - 1 WHERE holder = ? AND replica = ?",
                    (name, self.replica),
                )
                db.execute(
                    "DELETE FROM answer_slots WHERE holder = ? AND replica = ? AND taken <= 0",
                    (name, self.replica),
                )
        with self._lock:
            self.held -= 1

    def beat(self) -> None:
        """Mark this replica's rows alive; drop rows of replicas dead for a while."""
        with self._lock:
            owed, self._owed = self._owed, []
        for i, names in enumerate(owed):
            try:
                self._give_back(names)
            except Exception:
                with self._lock:
                    self._owed.extend(owed[i:])
                raise
        conn = self.backend.connection()
        if self.held:
            conn.execute(
                f"UPDATE answer_slots SET heartbeat = {_NOW} WHERE replica = ?", (self.replica,)
            )
        conn.execute(
            f"DELETE FROM answer_slots WHERE heartbeat < {_NOW} - ? AND replica <> ?",
            (10 * self.stale_s, self.replica),
        )

    def close(self) -> None:
        """This replica's slots, given back at once (a clean stop)."""
        self.backend.connection().execute(
            "DELETE FROM answer_slots WHERE replica = ?", (self.replica,)
        )


class GrantStore:
    """Which (document, version) pairs each key was shown in citations, in the database.
    `record` returns at once (a writer thread stores the rows in order); `allows` blocks."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grants")
        self._lock = threading.Lock()
        self._pruned_at = -1e18

    def record(self, key_id: str, cited: Iterable[tuple[str, int]]) -> None:
        pairs = sorted(set(cited))
        if pairs:
            with self._lock:
                self._writer.submit(self._write, key_id, pairs)

    def allows(self, key_id: str, doc_id: str, version: int) -> bool:
        row = (
            self.database.connection()
            .execute(
                "SELECT 1 FROM citation_grants WHERE key_id = ? AND doc_id = ? AND version = ?",
                (key_id, doc_id, version),
            )
            .fetchone()
        )
        return row is not None

    def flush(self) -> None:
        """Wait for the rows recorded so far to be stored."""
        with self._lock:
            self._writer.submit(lambda: None).result()

    def close(self) -> None:
        with self._lock:
            self._writer.shutdown(wait=True)

    def _write(self, key_id: str, pairs: list[tuple[str, int]]) -> None:
        now = utc_now()
        try:
            with self.database.transaction() as db:
                db.executemany(
                    "INSERT INTO citation_grants (key_id, doc_id, version, granted_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (key_id, doc_id, version) "
                    "DO UPDATE SET granted_at = excluded.granted_at",
                    [(key_id, d, v, now) for d, v in pairs],
                )
                if time.monotonic() - self._pruned_at > 3600:
                    self._pruned_at = time.monotonic()
                    cutoff = datetime.now(UTC) - timedelta(days=GRANT_DAYS)
                    stamp = cutoff.isoformat(timespec="milliseconds").replace("+00:00", "Z")
                    db.execute("DELETE FROM citation_grants WHERE granted_at < ?", (stamp,))
        except Exception:  # the in-memory ledger still grants on this replica
            log.exception("storing citation grants failed")
