"""The cyclic GC's full collections, moved to moments when no request is in progress.

A full collection stops every thread that needs the GIL while it scans what the server keeps
alive after start-up (its caches, connections and the answers in flight): in `bench_stream`'s
server 10-25 ms of CPU (10-81 ms wall) about once per two bursts of 100 streams, a stall for
every stream at once (docs/decisions/). Young collections are left as they are.
"""

from __future__ import annotations

import gc

# Past this, the threshold's count (young collections since the last full one) never
# triggers a full collection by itself.
_NEVER = 1 << 30


class IdleCollector:
    """Runs the full collections itself: when the server is idle once `due` collections of the
    middle generation have passed since the last (CPython's own trigger is 10), or, under load
    that never pauses, busy or not once `limit` have, so that garbage cycles stay bounded."""

    def __init__(self, due: int = 10, limit: int = 200) -> None:
        self.due, self.limit = due, limit
        self.saved: tuple[int, int, int] | None = None
        self.collections = 0

    def install(self) -> None:
        """Take full collections off CPython's automatic schedule."""
        if self.saved is None:
            self.saved = gc.get_threshold()
            young, middle, _ = self.saved
            gc.set_threshold(young, middle, _NEVER)

    def uninstall(self) -> None:
        if self.saved is not None:
            gc.set_threshold(*self.saved)
            self.saved = None

    def tick(self, busy: bool) -> bool:
        """Collect in full if it is due now; True when it did."""
        if self.saved is None or not gc.isenabled():
            return False
        pending = gc.get_count()[2]
        if pending >= self.limit or (pending >= self.due and not busy):
            gc.collect()
            self.collections += 1
            return True
        return False
