"""What a `chat` key sees of an answer: block metadata, and text only of the blocks that an
emitted sentence cites, sent with that sentence. Never a draft, never a refused question's
quotes (docs/decisions/chat-key-view.md). Read and admin keys see everything, as before."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request

from ..access.tenancy import principal
from ..answer.refusals import CONFLICT_LEAD
from ..answer.results import AnswerResult
from ..events import Event, Refusal, SentenceOut, Sources, block_ref, to_sse
from ..request_context import absolute_urls
from ..retrieve.hybrid import Block
from ..sse import ServerSentEvent

# What a refusal's details may keep for a chat key: which blocks, never what they say.
_DETAIL_KEYS = frozenset(
    {
        *("n", "doc_id", "version", "sha256", "name", "filename", "chunk_id", "page", "url"),
        *("kind", "cause", "evidence", "threshold", "a", "b", "question", "missing"),
        *("dated", "stale"),  # when each side's document says it was updated; the older
    }
)


def chat_only(request: Request, collection: str) -> bool:
    """True when the caller may answer in `collection` but not read it (a `chat` key, or a
    keyless server in read-only open mode)."""
    return not principal(request).can("read", collection)


def cited(block: Block) -> dict[str, object]:
    """A citation with the text it points at (the widget's passage card)."""
    return {**block_ref(block), "filename": block.filename, "text": block.text}


def sources(event: Sources) -> dict[str, object]:
    blocks = [{**block_ref(b), "filename": b.filename} for b in event.blocks]
    return {"generator": event.generator, "blocks": blocks}


def sentence(event: SentenceOut) -> dict[str, object]:
    return {**event.data(), "citations": [cited(b) for b in event.citations]}


def refusal(event: Refusal) -> dict[str, object]:
    body: dict[str, object] = {"reason": event.reason, "message": _message(event)}
    if event.details:
        body["details"] = [_scrub(d) for d in event.details]
    return body


# A heading named in a `not_answered` refusal ("It covers nearby: ...") reaches a chat key only
# this short: a label. A one-line paragraph without a full stop reads as a heading too, and a
# longer one is a sentence of an uncited block.
LABEL_WORDS = 4


def _message(event: Refusal) -> str:
    if event.reason == "not_answered":
        return _labels_only(event)
    if event.reason != "conflicting_sources":
        return event.message
    # The full message quotes each side's sentence: names only here.
    names = [
        str(side["name"])
        for detail in event.details
        for side in (detail.get("a"), detail.get("b"))
        if isinstance(side, Mapping) and "name" in side
    ][:2]
    # The lead is the message's own (in the question's language, answer/wording.py).
    lead = event.message.split(" “", 1)[0]
    if len(names) < 2:
        return lead
    if lead != CONFLICT_LEAD:
        return f"{lead} “{names[0]}”, “{names[1]}”."
    first = event.details[0] if event.details else {}
    older = first.get(str(first.get("stale"))) if first.get("stale") in ("a", "b") else None
    stale = f" “{older['name']}” is the older document." if isinstance(older, Mapping) else ""
    return f"{CONFLICT_LEAD} “{names[0]}” and “{names[1]}” disagree.{stale}"


def _labels_only(event: Refusal) -> str:
    """The refusal's message naming only the nearby headings that are labels."""
    nearby = [str(h) for d in event.details for h in d.get("nearby") or ()]
    joined = "; ".join(nearby)
    if not joined or joined not in event.message:
        return event.message
    labels = [h for h in nearby if len(h.split()) <= LABEL_WORDS]
    return event.message.replace(joined, "; ".join(labels) or "nothing close")


def _scrub(value: object) -> Any:
    if isinstance(value, Mapping):
        return {k: _scrub(v) for k, v in value.items() if k in _DETAIL_KEYS}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


def event_sse(event: Event, *, id: str | None, base_url: str | None) -> ServerSentEvent:
    """`to_sse` as a chat key sees the event."""
    data: dict[str, object]
    if isinstance(event, Sources):
        data = sources(event)
    elif isinstance(event, SentenceOut):
        data = sentence(event)
    elif isinstance(event, Refusal):
        data = refusal(event)
    else:
        return to_sse(event, id=id, base_url=base_url)
    body = absolute_urls(data, base_url)
    return ServerSentEvent(data=json.dumps(body, ensure_ascii=False), event=event.name, id=id)


def answer_json(result: AnswerResult) -> dict[str, object]:
    """`AnswerResult.to_json` without the drafts and with cited text on the citations."""
    body = result.to_json()
    body.pop("attempts", None)
    body["sentences"] = [sentence(s) for s in result.sentences]
    if result.refusal is not None:
        body["refusal"] = refusal(result.refusal)
    return body


def refusal_text(event: Refusal) -> str:
    return _message(event)
