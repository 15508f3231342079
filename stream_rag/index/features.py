"""What the gate and the evidence score need of a chunk, computed once at ingest and stored.

A request used to tokenise, stem and scan every retrieved block again (once for the evidence
score, once for the gate context): ~1 ms of CPU per 1,000-character block. The same work is
done when a version is indexed and kept in the `chunk_features` table; blocks without stored
features (stored before this existed, or a newer `FEATURES_VERSION`) fall back to computing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..gate.quantities import Date, Stated, Time, Value, canonical, scan
from ..text import tokenize

if TYPE_CHECKING:
    from ..store.documents import DocumentStore
    from ..types import Chunk

# Bump when what is computed changes: older rows are then ignored and recomputed.
FEATURES_VERSION = 1


@dataclass(frozen=True, slots=True)
class ChunkFeatures:
    """A chunk's gate terms (stemmed content terms, numbers out), evidence stems (stemmed BM25
    tokens), the quantities it states, and its statement spans in the chunk text."""

    terms: frozenset[str]
    stems: frozenset[str]
    stated: Stated
    spans: tuple[tuple[int, int], ...]

    def to_json(self) -> str:
        stated = self.stated
        return json.dumps(
            {
                "v": FEATURES_VERSION,
                "terms": sorted(self.terms),
                "stems": sorted(self.stems),
                "values": sorted(stated.values),
                "bare": sorted(stated.bare),
                "with_unit": sorted(stated.with_unit, key=repr),
                "dates": sorted(stated.dates, key=repr),
                "times": sorted(stated.times),
                "spans": self.spans,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, raw: str) -> ChunkFeatures | None:
        """None for rows of another `FEATURES_VERSION` (or unreadable ones): recompute those."""
        try:
            data = json.loads(raw)
            if data.get("v") != FEATURES_VERSION:
                return None
            stated = Stated(
                frozenset(data["values"]),
                frozenset(data["bare"]),
                frozenset(_value(v) for v in data["with_unit"]),
                frozenset(_date(d) for d in data["dates"]),
                frozenset(_time(t) for t in data["times"]),
            )
            spans = tuple((int(s), int(e)) for s, e in data["spans"])
            return cls(frozenset(data["terms"]), frozenset(data["stems"]), stated, spans)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def _value(item: list[object]) -> Value:
    value, unit = item
    if not isinstance(value, int | float) or not (unit is None or isinstance(unit, str)):
        raise ValueError(f"not a value with a unit: {item!r}")
    return float(value), unit


def _date(item: list[int | None]) -> Date:
    year, month, day = item
    if month is None:
        raise ValueError(f"not a date: {item!r}")
    return year, month, day


def _time(item: list[int]) -> Time:
    hour, minute = item
    return hour, minute


def compute(text: str) -> ChunkFeatures:
    """The features of one chunk's ORIGINAL text (what the gate checks against)."""
    from ..answer.conflicts import _statement_spans as statement_spans
    from ..gate.lexical import _terms as gate_terms
    from ..gate.lexical import stem

    found, words = scan(canonical(text))
    return ChunkFeatures(
        terms=frozenset(gate_terms(words)),
        stems=frozenset(stem(t) for t in tokenize(text)),
        stated=Stated.of(found, words),
        spans=tuple(statement_spans(text)),
    )


def store_features(store: DocumentStore, chunks: Sequence[Chunk]) -> None:
    """Compute and store the features of `chunks` that have none stored yet (blocking)."""
    have = store.chunk_features([c.id for c in chunks])
    rows = [(c.id, compute(c.text).to_json()) for c in chunks if c.id not in have]
    if rows:
        store.set_chunk_features(rows)


def load_features(store: DocumentStore, chunk_ids: Sequence[str]) -> dict[str, ChunkFeatures]:
    """The usable stored features of `chunk_ids` (blocking)."""
    loaded = {
        cid: ChunkFeatures.from_json(raw) for cid, raw in store.chunk_features(chunk_ids).items()
    }
    return {cid: f for cid, f in loaded.items() if f is not None}
