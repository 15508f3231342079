"""Access state every replica shares through the store's database: rate-limit buckets
(PostgreSQL only: one SQLite process keeps them in memory) and the cited-version grants a chat
key may download (both backends, so a restart keeps them too)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from ..store.database import Database
from ..store.records import utc_now

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
