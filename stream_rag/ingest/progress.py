"""A dependency-free progress bar that draws only on a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """`Progress(total).advance(label)`; silent when `stream` is not a TTY (piped, CI)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 30) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.width = width
        self._last_draw = 0.0

    def advance(self, label: str = "") -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self._last_draw > 0.05 or self.done >= self.total):
            self._last_draw = now
            filled = int(self.width * self.done / self.total)
            bar = "#" * filled + "-" * (self.width - filled)
            shown = label[-40:]
            self.stream.write(f"\r[{bar}] {self.done}/{self.total} {shown:<40}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
