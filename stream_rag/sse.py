"""Server-Sent Events as a client reads them (the HTML spec's "event stream interpretation").

One parser for every reader of `/v1/chat` (the `ask --url` CLI, the tests, the benchmarks):
text goes in as it arrives, cut anywhere, and whole events come out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["EventStreamParser", "ReceivedEvent", "parse_lines"]

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class ReceivedEvent:
    """One dispatched event: its type ("message" when unnamed), its data lines joined by
    newlines, and the last event id seen so far (None before any)."""

    event: str
    data: str
    id: str | None = None

    def json(self) -> Any:
        return json.loads(self.data)


class EventStreamParser:
    """Feed it decoded text (`feed`) or lines without their ends (`line`); it returns the
    events those complete. Comment lines (keep-alive pings) are only counted."""

    def __init__(self) -> None:
        self.comments = 0
        self.last_id: str | None = None
        self.retry_ms: int | None = None
        self._event = ""
        self._data: list[str] = []
        self._partial = ""  # text after the last line end
        self._after_cr = False  # the last chunk ended in CR: a leading LF belongs to it
        self._started = False

    def feed(self, chunk: str) -> list[ReceivedEvent]:
        """The events completed by `chunk`; lines end in CRLF, LF or CR, split anywhere."""
        if not chunk:
            return []
        if self._after_cr and chunk.startswith("\n"):
            chunk = chunk[1:]
        self._after_cr = chunk.endswith("\r")
        *lines, self._partial = _LINE_END.split(self._partial + chunk)
        return [event for line in lines if (event := self.line(line)) is not None]

    def line(self, line: str) -> ReceivedEvent | None:
        """Read one line (without its end); the event it dispatches, if any."""
        if not self._started:
            self._started = True
            line = line.removeprefix("\ufeff")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            self.comments += 1
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        elif field == "id" and "\0" not in value:
            self.last_id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        return None  # other fields are ignored, as the spec says

    def _dispatch(self) -> ReceivedEvent | None:
        event, data = self._event or "message", self._data
        self._event, self._data = "", []
        if not data:
            return None
        return ReceivedEvent(event, "\n".join(data), self.last_id)


def parse_lines(lines: Iterable[str]) -> Iterator[ReceivedEvent]:
    """The events of a stream read as lines (`httpx.Response.iter_lines`); an event left
    unfinished when the lines end is dropped, as the spec says."""
    parser = EventStreamParser()
    for line in lines:
        if (event := parser.line(line)) is not None:
            yield event
