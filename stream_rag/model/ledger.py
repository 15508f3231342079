"""Reading `stream-rag fake-llm`'s ledger against what a client was shown: which written
sentence each shown one came from, and whether its reader reads something false. Used by the
hostile benchmark (loadtests/bench_hostile.py) and the tests that generate the attacks.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

import httpx

from ..sse import parse_lines
from .attacks import CYRILLIC
from .redteam_disguise import LOOKALIKES

__all__ = ["ROUTES", "Record", "match", "plain", "records", "seen_false", "shown_sentences"]

ROUTES = ("chat", "answer", "completions")


@dataclass(frozen=True, slots=True)
class Record:
    """A sentence the model wrote, from its ledger."""

    behaviour: str
    variant: str
    text: str
    false: bool
    false_cleaned: bool


def records(entries: Iterable[Mapping[str, Any]]) -> list[Record]:
    """The sentences of ledger entries (`GET /fake/ledger`'s), each once: a regeneration
    writes the same again."""
    found = {
        s["text"]: Record(s["behaviour"], s["variant"], s["text"], s["false"], s["false_cleaned"])
        for entry in entries
        for s in entry["sentences"]
    }
    return list(found.values())


_MARKER = re.compile(r"\[\s*\d+(?:\s*(?:[-\u2013,]|\]\s*\[)\s*\d+)*\s*\]")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_LATIN = {other: latin for latin, other in (*CYRILLIC.items(), *LOOKALIKES.items())}


def _cf(char: str) -> bool:
    return unicodedata.category(char) == "Cf"


def plain(text: str) -> str:
    """A sentence reduced to its words: markers, markup, format characters and look-alike
    letters taken out, NFKC and casefolded."""
    text = "".join(_LATIN.get(c, c) for c in text if not _cf(c))
    text = _LINK.sub(r"\1", unicodedata.normalize("NFKC", text))
    text = _MARKER.sub(" ", text)
    return " ".join(re.findall(r"\w+", text.casefold()))


def match(shown: str, written: list[Record]) -> tuple[Record | None, float]:
    """The written sentence `shown` came from, and the share of its words that were shown."""
    words = plain(shown).split()
    if not words:
        return None, 0.0
    best: tuple[float, float, Record | None, float] = (0.0, 0.0, None, 0.0)
    for candidate in written:
        theirs = plain(candidate.text).split()
        inside = sum(1 for w in words if w in theirs) / len(words)
        ratio = SequenceMatcher(None, words, theirs).ratio()
        # Of the written line most shown: a table's header row is no part of the claim.
        lines = [plain(line).split() for line in candidate.text.splitlines()]
        covered = max((sum(w in words for w in ws) / len(ws) for ws in lines if ws), default=0.0)
        best = max(best, (inside, ratio, candidate, covered), key=lambda b: (b[0], b[1]))
    inside, _, found, covered = best
    return (found, covered) if inside >= 0.6 else (None, 0.0)


def seen_false(shown: str, record: Record) -> bool:
    """Whether the reader of `shown` reads a false sentence: format characters still in it
    are displayed (a bidi override reverses digits); once taken out, the cleaned reading."""
    return record.false if any(_cf(c) for c in shown) else record.false_cleaned


def shown_sentences(client: httpx.Client, route: str, question: str) -> list[str]:
    """The sentences a client of `route` received as verified: `/v1/chat`'s sentence events,
    `/v1/answer`'s sentences, or the content of streamed completion chunks carrying citations."""
    if route == "answer":
        body = client.post("/v1/answer", json={"question": question}).json()
        return [s["text"] for s in body.get("sentences") or []]
    if route == "chat":
        with client.stream("POST", "/v1/chat", json={"question": question}) as reply:
            return [
                json.loads(event.data)["text"]
                for event in parse_lines(reply.iter_lines())
                if event.event == "sentence"
            ]
    payload = {"model": "x", "stream": True, "messages": [{"role": "user", "content": question}]}
    out = []
    with client.stream("POST", "/v1/chat/completions", json=payload) as reply:
        for line in reply.iter_lines():
            if not line.startswith("data: {"):
                continue
            chunk = json.loads(line[6:])
            if "citations" in (chunk.get("stream_rag") or {}):  # a verified sentence's chunk
                out.append(chunk["choices"][0]["delta"]["content"].strip())
    return out
