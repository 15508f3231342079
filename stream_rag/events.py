"""The closed set of answer events; each renders itself as a Server-Sent Event."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .request_context import absolute_urls, current_request_id
from .retrieve.hybrid import Block
from .sse import ServerSentEvent


def block_ref(block: Block) -> dict[str, object]:
    """What a citation carries: enough to show the source and download its exact bytes."""
    return {
        "n": block.n,
        "doc_id": block.doc_id,
        "version": block.version,
        "sha256": block.sha256,
        "name": block.name,
        "chunk_id": block.chunk_id,
        "page": block.page,
        "url": block.url,
        # The headings the cited chunk stands under, outermost first ("Rooms and rates",
        # "Arrival and departure"): where in its document the passage is.
        "section": [line.lstrip("#").strip() for line in block.headings],
    }


@dataclass(frozen=True, slots=True)
class Uncovered:
    """A part of a question asking several things that no source covers ("is there a gym?"),
    with the words or names no source has: the answer answers the other parts."""

    ask: str
    missing: tuple[str, ...]

    def data(self) -> dict[str, object]:
        return {"question": self.ask, "missing": list(self.missing)}


@dataclass(frozen=True, slots=True)
class Sources:
    blocks: Sequence[Block]
    generator: str

    name = "sources"

    def data(self) -> dict[str, Any]:
        # The passage text lets a widget show what a citation points at without a second
        # request (a chat-only key may not be allowed to read chunks); the file's name says
        # its kind before it is downloaded (a widget opens a tab only for what it can show).
        blocks = [{**block_ref(b), "filename": b.filename, "text": b.text} for b in self.blocks]
        return {"generator": self.generator, "blocks": blocks}


@dataclass(frozen=True, slots=True)
class SentenceOut:
    index: int
    text: str
    citations: Sequence[Block]
    kind: str = "sentence"

    name = "sentence"

    def data(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "kind": self.kind,
            "citations": [block_ref(b) for b in self.citations],
        }


@dataclass(frozen=True, slots=True)
class Dropped:
    index: int
    reason: str
    stage: str = "lexical"  # the gate stage that decided: lexical, semantic or remote

    name = "dropped"

    def data(self) -> dict[str, Any]:
        return {"index": self.index, "reason": self.reason, "stage": self.stage}


@dataclass(frozen=True, slots=True)
class Refusal:
    reason: str
    message: str
    details: Sequence[dict[str, Any]] = ()

    name = "refusal"

    def data(self) -> dict[str, Any]:
        body: dict[str, Any] = {"reason": self.reason, "message": self.message}
        if self.details:
            body["details"] = list(self.details)
        return body


@dataclass(frozen=True, slots=True)
class Done:
    sentences: int
    dropped: int
    ttfs_ms: float | None
    total_ms: float
    tokens: int
    usage: Mapping[str, int] | None = None  # the upstream model's token counts, if reported
    # The HTTP request's id (as in its `X-Request-ID` and the request log), when there is one.
    request_id: str | None = field(default_factory=current_request_id)
    # The parts of the question the sources do not cover, when the answer answers others.
    uncovered: tuple[Uncovered, ...] = ()

    name = "done"

    def data(self) -> dict[str, Any]:
        body = {
            "sentences": self.sentences,
            "dropped": self.dropped,
            "ttfs_ms": None if self.ttfs_ms is None else round(self.ttfs_ms, 2),
            "total_ms": round(self.total_ms, 2),
            "tokens": self.tokens,
            **({} if self.usage is None else {"usage": dict(self.usage)}),
            **({"uncovered": [u.data() for u in self.uncovered]} if self.uncovered else {}),
        }
        return _with_request_id(body, self.request_id)


@dataclass(frozen=True, slots=True)
class Error:
    code: str
    message: str
    request_id: str | None = field(default_factory=current_request_id)

    name = "error"

    def data(self) -> dict[str, Any]:
        return _with_request_id({"code": self.code, "message": self.message}, self.request_id)


def _with_request_id(body: dict[str, Any], request_id: str | None) -> dict[str, Any]:
    if request_id is not None:
        body["request_id"] = request_id
    return body


Event = Sources | SentenceOut | Dropped | Refusal | Done | Error


def to_sse(event: Event, *, id: str | None = None, base_url: str | None = None) -> ServerSentEvent:
    """`base_url` (STREAM_RAG_PUBLIC_URL) makes the citations' download URLs absolute."""
    data = absolute_urls(event.data(), base_url)
    return ServerSentEvent(data=json.dumps(data, ensure_ascii=False), event=event.name, id=id)
