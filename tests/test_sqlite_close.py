"""Closing the SQLite store while another thread is inside a transaction (a request's last
write during shutdown: the question log, an answer's record) waits for that transaction; it
used to close the connection under it, which crashed the whole process (a segfault in the
full suite's test_budgets, while uvicorn shut a server down)."""

from __future__ import annotations

import threading
from pathlib import Path

from stream_rag.store.database import SqliteBackend


def test_close_waits_for_a_transaction_in_progress(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path / "store.db")
    inside, go_on = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def write() -> None:
        try:
            with backend.transaction() as db:
                inside.set()
                go_on.wait()
                db.execute("INSERT INTO meta (key, value) VALUES ('written', 'yes')")
        except BaseException as exc:
            failed.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    inside.wait()
    closer = threading.Thread(target=backend.close)
    closer.start()
    with backend._idle:  # the state close() waits on, not a clock
        backend._idle.wait_for(lambda: backend.closing)
    go_on.set()
    writer.join()
    closer.join()
    assert failed == []
    reopened = SqliteBackend(tmp_path / "store.db")
    row = reopened.connection().execute("SELECT value FROM meta WHERE key = 'written'").fetchone()
    assert row[0] == "yes"
    reopened.close()
