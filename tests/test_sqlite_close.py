"""Closing the SQLite store while another thread is inside a transaction (a request's last
write during shutdown: the question log, an answer's record) waits for that transaction; it
used to close the connection under it, which crashed the whole process (a segfault in the
full suite's test_budgets, while uvicorn shut a server down)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from stream_rag.store.database import SqliteBackend

Work = Callable[[threading.Event, threading.Event], None]


def close_during(backend: SqliteBackend, work: Work) -> None:
    """Run `work(inside, go_on)` in a thread; once it has set `inside` and waits on `go_on`,
    close the store in another thread, let the work go on, and check it raised nothing."""
    inside, go_on = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work(inside, go_on)
        except BaseException as exc:
            failed.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    inside.wait()
    closer = threading.Thread(target=backend.close)
    closer.start()
    backend.in_progress.wait_for(lambda: backend.in_progress.closing)  # state, not a clock
    go_on.set()
    worker.join()
    closer.join()
    assert failed == []


def test_close_waits_for_a_transaction_in_progress(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path / "store.db")

    def write(inside: threading.Event, go_on: threading.Event) -> None:
        with backend.transaction() as db:
            inside.set()
            go_on.wait()
            db.execute("INSERT INTO meta (key, value) VALUES ('written', 'yes')")

    close_during(backend, write)
    reopened = SqliteBackend(tmp_path / "store.db")
    row = reopened.connection().execute("SELECT value FROM meta WHERE key = 'written'").fetchone()
    assert row[0] == "yes"
    reopened.close()


def test_close_waits_for_a_statement_outside_a_transaction(tmp_path: Path) -> None:
    """A single statement (a stream's heartbeat, a grant lookup) was not counted as in
    progress, so `close` did not wait for it and closed the connection while it ran (what
    that crashes depends on the moment: the count is what close waits on)."""
    backend = SqliteBackend(tmp_path / "store.db")
    in_progress: list[int] = []
    rows: list[object] = []

    def read(inside: threading.Event, go_on: threading.Event) -> None:
        def hold() -> int:
            in_progress.append(backend.in_progress.count)
            inside.set()
            go_on.wait()
            return 7

        with backend.using() as db:
            db.create_function("hold", 0, hold)
        rows.append(backend.connection().execute("SELECT hold()").fetchone()[0])

    close_during(backend, read)
    assert in_progress == [1]
    assert rows == [7]


def test_a_write_after_close_opens_a_connection_of_its_own(tmp_path: Path) -> None:
    """A late write (after the store closed) neither crashes nor is lost."""
    backend = SqliteBackend(tmp_path / "store.db")
    backend.connection().execute("INSERT INTO meta (key, value) VALUES ('early', '1')")
    backend.close()
    with backend.transaction() as db:
        db.execute("INSERT INTO meta (key, value) VALUES ('late', '2')")
    backend.close()
    reopened = SqliteBackend(tmp_path / "store.db")
    found = reopened.connection().execute("SELECT key FROM meta ORDER BY key").fetchall()
    assert [row[0] for row in found] == ["early", "late"]
    reopened.close()
