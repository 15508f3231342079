"""Server-Sent Events, written (`ServerSentEvent.encode`) and read (the HTML spec's "event
stream interpretation").

One parser for every reader of `/v1/chat` (the `ask --url` CLI, the tests, the benchmarks):
text goes in as it arrives, cut anywhere, and whole events come out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["EventStreamParser", "ReceivedEvent", "ServerSentEvent", "parse_lines"]

_LINE_END = re.compile(r"\r\n|\r|\n")
# Lines end in CRLF on the wire, as sse-starlette wrote them before (any of the three is valid).
SEP = "\r\n"


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One event to send. `data` may hold line breaks (one `data:` line each); `event` and `id`
    may not, and an `id` holds no NUL (a reader would ignore it)."""

    data: str | None = None
    event: str | None = None
    id: str | None = None
    retry: int | None = None
    comment: str | None = None

    def __post_init__(self) -> None:
        for name in ("event", "id"):
            value = getattr(self, name)
            if value is not None and ("\n" in value or "\r" in value):
                raise ValueError(f"an event's {name} holds no line break: {value!r}")
        if self.id is not None and "\0" in self.id:
            raise ValueError("an event's id holds no NUL")
        if self.retry is not None and self.retry < 0:
            raise ValueError("an event's retry is a number of milliseconds, at least 0")

    def encode(self, sep: str = SEP) -> bytes:
        if self.comment is None and self.retry is None and self.data is not None:
            data = self.data
            if "\n" not in data and "\r" not in data:  # one line of JSON: the common case
                head = "" if self.id is None else f"id: {self.id}{sep}"
                if self.event is not None:
                    head += f"event: {self.event}{sep}"
                return f"{head}data: {data}{sep}{sep}".encode()
        lines: list[str] = []
        if self.comment is not None:
            lines += [f": {line}" for line in _LINE_END.split(self.comment)]
        if self.id is not None:
            lines.append(f"id: {self.id}")
        if self.event is not None:
            lines.append(f"event: {self.event}")
        if self.data is not None:
            lines += [f"data: {line}" for line in _LINE_END.split(self.data)]
        if self.retry is not None:
            lines.append(f"retry: {self.retry}")
        return (sep.join(lines) + sep + sep).encode()


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
