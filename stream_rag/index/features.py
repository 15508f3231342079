"""What the gate and the evidence score need of a chunk, computed once at ingest and stored.

A request used to tokenise, stem and scan every retrieved block again (once for the evidence
score, once for the gate context): ~1 ms of CPU per 1,000-character block. The same work is
done when a version is indexed and kept in the `chunk_features` table; blocks without stored
features (stored before this existed, or a newer `FEATURES_VERSION`) fall back to computing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..gate.quantities import Date, Stated, Time, Value, canonical, scan
from ..gate.statements import Statement, read_statements, statement_spans
from ..gate.terms import content_terms, stem
from ..text import tokenize

if TYPE_CHECKING:
    from ..store.documents import DocumentStore
    from ..types import Chunk

# Bump when what is computed changes: older rows are then ignored and recomputed.
FEATURES_VERSION = 2  # 2: each statement's terms, quantities and negated terms


@dataclass(frozen=True, slots=True)
class ChunkFeatures:
    """A chunk's gate terms (stemmed content terms, numbers out), evidence stems (stemmed BM25
    tokens), the quantities it states, its statement spans in the chunk text, and what the
    gate reads in each statement."""

    terms: frozenset[str]
    stems: frozenset[str]
    stated: Stated
    spans: tuple[tuple[int, int], ...]
    statements: tuple[Statement, ...] = ()

    def to_json(self) -> str:
        statements = [
            [sorted(s.terms), sorted(s.negated), _stated_json(s.stated)] for s in self.statements
        ]
        return json.dumps(
            {
                "v": FEATURES_VERSION,
                "terms": sorted(self.terms),
                "stems": sorted(self.stems),
                **_stated_json(self.stated),
                "spans": self.spans,
                "statements": statements,
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
            spans = tuple((int(s), int(e)) for s, e in data["spans"])
            statements = tuple(
                Statement(frozenset(terms), _stated(stated), frozenset(negated))
                for terms, negated, stated in data["statements"]
            )
            return cls(
                frozenset(data["terms"]),
                frozenset(data["stems"]),
                _stated(data),
                spans,
                statements,
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


_NOTHING = Stated(frozenset(), frozenset(), frozenset(), frozenset(), frozenset())


def _stated_json(stated: Stated) -> dict[str, list[Any]]:
    if stated == _NOTHING:
        return {}  # most statements state no number: keep their rows short
    return {
        "values": sorted(stated.values),
        "bare": sorted(stated.bare),
        "with_unit": sorted(stated.with_unit, key=repr),
        "dates": sorted(stated.dates, key=repr),
        "times": sorted(stated.times),
    }


def _stated(data: dict[str, Any]) -> Stated:
    return Stated(
        frozenset(float(v) for v in data.get("values", ())),
        frozenset(float(v) for v in data.get("bare", ())),
        frozenset(_value(v) for v in data.get("with_unit", ())),
        frozenset(_date(d) for d in data.get("dates", ())),
        frozenset(_time(t) for t in data.get("times", ())),
    )


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
    found, words = scan(canonical(text))
    spans = tuple(statement_spans(text))
    return ChunkFeatures(
        terms=frozenset(content_terms(words)),
        stems=frozenset(stem(t) for t in tokenize(text)),
        stated=Stated.of(found, words),
        spans=spans,
        statements=read_statements(text, spans),
    )


def store_features(store: DocumentStore, chunks: Sequence[Chunk]) -> None:
    """Compute and store the features of `chunks` that have no usable ones stored yet
    (blocking)."""
    stored = store.chunk_features([c.id for c in chunks])
    # Rows of an older FEATURES_VERSION count as missing: indexing again replaces them.
    have = {cid for cid, raw in stored.items() if ChunkFeatures.from_json(raw) is not None}
    rows = [(c.id, compute(c.text).to_json()) for c in chunks if c.id not in have]
    if rows:
        store.set_chunk_features(rows)


def load_features(store: DocumentStore, chunk_ids: Sequence[str]) -> dict[str, ChunkFeatures]:
    """The usable stored features of `chunk_ids` (blocking)."""
    loaded = {cid: _parsed(raw) for cid, raw in store.chunk_features(chunk_ids).items()}
    return {cid: f for cid, f in loaded.items() if f is not None}


@functools.lru_cache(maxsize=2048)
def _parsed(raw: str) -> ChunkFeatures | None:
    # Keyed by the stored text itself, so a changed row can never be served stale. Popular
    # blocks come back request after request; parsing them again (sets of terms, every
    # statement) was a tenth of a request's worker-thread CPU at 100 concurrent streams.
    return ChunkFeatures.from_json(raw)
