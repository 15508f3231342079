"""What the gate and the evidence score need of a chunk, computed once at ingest and stored.

A request used to tokenise, stem and scan every retrieved block again (once for the evidence
score, once for the gate context): ~1 ms of CPU per 1,000-character block. The same work is
done when a version is indexed and kept in the `chunk_features` table; blocks without stored
features (stored before this existed, or a newer `FEATURES_VERSION`) fall back to computing.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..language.quantities import Date, Stated, Time, Value, canonical, scan
from ..language.statements import Statement, read_statements, statement_spans
from ..language.terms import content_terms, stem, term_keys
from ..text import tokenize

if TYPE_CHECKING:
    from ..store.documents import DocumentStore
    from ..types import Chunk

# Bump when what is computed changes: older rows are then ignored and recomputed.
# 2: each statement's terms, quantities and negated terms; 3: the semantic stage's terms;
# 4: words joined (text.tokenize); 5: no lone letter joined to a stop word or across statements;
# 6: "note", "noted" no longer stemmed to the negation's "not"; 7: "cancelled" stemmed as
# "cancel", "bookings" as "booking".
FEATURES_VERSION = 7


@dataclass(frozen=True, slots=True)
class SemanticTerms:
    """What the gate's semantic stage reads of a chunk's text, so that a request neither
    tokenises nor lemmatises it: every stem and lemma key, the distinct content words (surface
    forms, for their word vectors), and the keys of each window of one or two adjacent
    sentences (`chunk_sentences` spans), by its character span."""

    keys: frozenset[str]
    words: tuple[str, ...]
    windows: Mapping[tuple[int, int], frozenset[str]] = field(default_factory=dict)

    def to_data(self) -> dict[str, Any]:
        # Window keys as positions in one sorted vocabulary: a chunk's words recur in them.
        vocab = sorted(self.keys.union(*self.windows.values()))
        at = {key: i for i, key in enumerate(vocab)}
        data: dict[str, Any] = {"vocab": vocab, "words": self.words}
        if len(self.keys) != len(vocab):
            data["keys"] = sorted(at[k] for k in self.keys)
        data["windows"] = [
            [s, e, sorted(at[k] for k in keys)] for (s, e), keys in self.windows.items()
        ]
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> SemanticTerms:
        vocab = data["vocab"]
        keys = frozenset(vocab if "keys" not in data else (vocab[i] for i in data["keys"]))
        windows = {
            (int(s), int(e)): frozenset(vocab[i] for i in at) for s, e, at in data["windows"]
        }
        return cls(keys, tuple(data["words"]), windows)


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
    semantic: SemanticTerms | None = None  # computed when the semantic stage is on

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
                **({} if self.semantic is None else {"semantic": self.semantic.to_data()}),
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
            semantic = data.get("semantic")
            return cls(
                frozenset(data["terms"]),
                frozenset(data["stems"]),
                _stated(data),
                spans,
                statements,
                None if semantic is None else SemanticTerms.from_data(semantic),
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


def compute(text: str, *, semantic: bool = False) -> ChunkFeatures:
    """The features of one chunk's ORIGINAL text (what the gate checks against); with
    `semantic`, the semantic stage's terms too."""
    found, words = scan(canonical(text))
    spans = tuple(statement_spans(text))
    return ChunkFeatures(
        terms=frozenset(content_terms(words)),
        stems=frozenset(stem(t) for t in tokenize(text)),
        stated=Stated.of(found, words),
        spans=spans,
        statements=read_statements(text, spans),
        semantic=semantic_terms(text, words) if semantic else None,
    )


def semantic_terms(text: str, words: str | None = None) -> SemanticTerms:
    """The semantic stage's terms of `text` (`words`: its `scan`ned canonical form, if known),
    each window's keys read from the window's own text, as a request would."""
    from ..embed.sentences import chunk_sentences

    if words is None:
        _, words = scan(canonical(text))
    items = term_keys(words)
    spans = chunk_sentences(text)
    windows = {(s, e): text_keys(text[s:e]) for s, e in spans}
    for (start, _), (_, end) in itertools.pairwise(spans):
        windows[(start, end)] = text_keys(text[start:end])
    return SemanticTerms(
        frozenset().union(*(keys for _, keys, _ in items)),
        tuple(surface for _, _, surface in items),
        windows,
    )


def text_keys(text: str) -> frozenset[str]:
    """Every stem and lemma key of raw `text`'s content terms (what the semantic stage
    matches a sentence's terms against)."""
    _, words = scan(canonical(text))
    return frozenset().union(*(keys for _, keys, _ in term_keys(words)))


def store_features(
    store: DocumentStore, chunks: Sequence[Chunk], *, semantic: bool = False
) -> None:
    """Compute and store the features of `chunks` that have no usable ones stored yet, with
    the semantic stage's terms if `semantic` (blocking)."""
    stored = store.chunk_features([c.id for c in chunks])
    # Rows of an older FEATURES_VERSION count as missing: indexing again replaces them.
    have = {
        cid
        for cid, raw in stored.items()
        if (f := ChunkFeatures.from_json(raw)) is not None
        and (f.semantic is not None or not semantic)
    }
    rows = [
        (c.id, compute(c.text, semantic=semantic).to_json()) for c in chunks if c.id not in have
    ]
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
