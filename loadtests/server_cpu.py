"""CPU time over a benchmark's phase, read from /proc (Linux): the server process and its event
loop's thread, the time that thread waited for a CPU (schedstat), and the harness's own."""

from __future__ import annotations

import os
import time
from pathlib import Path

from stream_rag.loadtest.command import cpu_seconds


def thread_cpu_s(pid: int, tid: int) -> float:
    """User + system CPU seconds of one thread of `pid` (Linux)."""
    fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_waited_s(pid: int, tid: int) -> float:
    """Seconds one thread of `pid` spent runnable but waiting for a CPU (Linux schedstat)."""
    try:
        return int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class Cpu:
    """CPU time over a phase: the server process and its main thread, which runs the event
    loop (every stream's I/O, parsing and gating goes through it), and, to show what the
    harness itself takes from the same cores, the fake model's process and this one."""

    def __init__(self, server: int, fake: int) -> None:
        self.server, self.fake = server, fake
        self.start = self.read()

    def read(self) -> tuple[float, float, float, float, float, float]:
        return (
            cpu_seconds(self.server) or 0.0,
            thread_cpu_s(self.server, self.server),
            cpu_seconds(self.fake) or 0.0,
            time.process_time(),
            thread_waited_s(self.server, self.server),
            time.monotonic(),
        )

    def report(self, label: str, streams: int) -> dict[str, float]:
        """Print the phase's CPU; return the event loop's and the fake's, ms per stream."""
        server, loop, fake, clients, waited, wall = (
            b - a for a, b in zip(self.start, self.read(), strict=True)
        )
        print(
            f"{label} CPU ms/stream: server {server / streams * 1000:5.1f} (event-loop thread "
            f"{loop / streams * 1000:5.1f}); fake model {fake / streams * 1000:5.1f}; "
            f"clients {clients / streams * 1000:5.1f}"
        )
        # Time the event loop was ready to run but had no CPU: the machine's share of the lag.
        print(
            f"{label} event loop: ran {loop:.2f} s, waited for a CPU {waited:.2f} s "
            f"({waited / max(loop, 1e-9):.1f}x its CPU time) in {wall:.1f} s"
        )
        return {"loop_ms": loop / streams * 1000, "fake_ms": fake / streams * 1000}
