"""Answer streams as recorded for resuming (http/resume.py): the verified events each answer
emitted (sentences, not tokens), in order, with the key that asked, a heartbeat from the
process producing it, and whether it ended. Records expire after `keep_s`.

Events are committed in groups: `append` queues the row and waits until it is stored, and one
writer thread stores whatever is queued in one transaction, so 100 streams cost a few
transactions a sentence instead of 100 that wait on one another for the store's write lock
(that wait was most of the sentence lag the recording added). An event is still stored before
it is sent, so a replica killed after sending it still replays it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from .database import Database

log = logging.getLogger(__name__)

# A producer beats every BEAT_S; a stream whose beat is older than STALE_S lost its process.
BEAT_S = 1.0
STALE_S = 5.0


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a resuming client may be sent of a stream: events after its last one."""

    owner: str
    events: tuple[tuple[int, str, str], ...]  # (seq, event name, data)
    finished: bool
    stale: bool


class StreamLog:
    """The `answer_streams` and `stream_events` tables; every method blocks."""

    def __init__(self, database: Database, keep_s: float) -> None:
        self.database = database
        self.keep_s = keep_s
        self._purged_at = -1e18
        self._queue: list[tuple[str, int, str, str, bool]] = []
        self._queued = threading.Condition()
        self._taken = 0  # rows queued so far, and of those stored (or failed) so far
        self._stored = 0
        self._writing = threading.Lock()  # one batch at a time, so rows land in order
        self._writer: threading.Thread | None = None

    def open(self, stream_id: str, owner: str) -> None:
        now = time.time()
        if now - self._purged_at > 60:
            self.purge(now)
        with self.database.transaction() as db:
            db.execute(
                "INSERT INTO answer_streams (id, owner, heartbeat, finished, expires_at) "
                "VALUES (?, ?, ?, 0, ?)",
                (stream_id, owner, now, now + self.keep_s),
            )

    def append(self, stream_id: str, seq: int, event: str, data: str, final: bool) -> None:
        """Record one emitted event (before it is sent), in the writer thread's next group;
        `final`: the stream's last."""
        with self._queued:
            self._queue.append((stream_id, seq, event, data, final))
            self._taken += 1
            mine = self._taken
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_behind, name="stream-log", daemon=True
                )
                self._writer.start()
            self._queued.notify_all()
            while self._stored < mine:
                self._queued.wait()

    def flush(self) -> None:
        """Store every queued event now (in the calling thread)."""
        with self._writing:
            with self._queued:
                rows, self._queue = self._queue, []
            if not rows:
                return
            try:
                self._store(rows)
            finally:
                with self._queued:
                    self._stored += len(rows)
                    self._queued.notify_all()

    def _store(self, rows: list[tuple[str, int, str, str, bool]]) -> None:
        now = time.time()
        ends: dict[str, bool] = {}
        for stream_id, _, _, _, final in rows:
            ends[stream_id] = ends.get(stream_id, False) or final
        with self.database.transaction() as db:
            db.executemany(
                "INSERT INTO stream_events (stream_id, seq, event, data) VALUES (?, ?, ?, ?)",
                [(r[0], r[1], r[2], r[3]) for r in rows],
            )
            db.executemany(
                "UPDATE answer_streams SET heartbeat = ?, finished = ? WHERE id = ?",
                [(now, 1 if final else 0, stream_id) for stream_id, final in ends.items()],
            )

    def _write_behind(self) -> None:
        while True:
            with self._queued:
                while not self._queue:
                    self._queued.wait()
            try:
                self.flush()
            except Exception:  # a record is best effort: the answer itself goes on
                log.exception("answer stream records not stored")

    def beat(self, stream_ids: Iterable[str]) -> None:
        ids = list(stream_ids)
        if ids:
            marks = ",".join("?" * len(ids))
            self.database.connection().execute(
                f"UPDATE answer_streams SET heartbeat = ? WHERE id IN ({marks})",
                (time.time(), *ids),
            )

    def follow(self, stream_id: str) -> None:
        """Mark that a client follows the stream now (its producer goes on for it)."""
        self.database.connection().execute(
            "UPDATE answer_streams SET followed = ? WHERE id = ?", (time.time(), stream_id)
        )

    def ask_stop(self, stream_id: str) -> None:
        """Its client wants no more of it (its producer stops once its asker is gone)."""
        self.database.connection().execute(
            "UPDATE answer_streams SET stop_asked = 1 WHERE id = ?", (stream_id,)
        )

    def followers(self, stream_id: str) -> tuple[float | None, bool]:
        """When a client last followed the stream (`time.time()` of its replica), if ever, and
        whether its client asked it stopped."""
        row = (
            self.database.connection()
            .execute("SELECT followed, stop_asked FROM answer_streams WHERE id = ?", (stream_id,))
            .fetchone()
        )
        if row is None:
            return None, True
        return (None if row[0] is None else float(row[0])), bool(row[1])

    def read(self, stream_id: str, after: int) -> Recorded | None:
        """The stream's events after `after`, or None if it is unknown or expired."""
        with self.database.snapshot() as db:
            row = db.execute(
                "SELECT owner, heartbeat, finished, expires_at FROM answer_streams WHERE id = ?",
                (stream_id,),
            ).fetchone()
            if row is None or float(row["expires_at"]) < time.time():
                return None
            events = db.execute(
                "SELECT seq, event, data FROM stream_events WHERE stream_id = ? AND seq > ? "
                "ORDER BY seq",
                (stream_id, after),
            ).fetchall()
        return Recorded(
            owner=str(row["owner"]),
            events=tuple((int(e[0]), str(e[1]), str(e[2])) for e in events),
            finished=bool(row["finished"]),
            stale=time.time() - float(row["heartbeat"]) > STALE_S,
        )

    def purge(self, now: float | None = None) -> int:
        self._purged_at = now = time.time() if now is None else now
        with self.database.transaction() as db:
            db.execute(
                "DELETE FROM stream_events WHERE stream_id IN "
                "(SELECT id FROM answer_streams WHERE expires_at < ?)",
                (now,),
            )
            gone = db.execute("DELETE FROM answer_streams WHERE expires_at < ?", (now,))
            return int(gone.rowcount)
