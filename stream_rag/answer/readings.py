"""The conflict check's reading of each chunk (`statements.analyse`), computed at ingest and
stored with the chunk (`chunk_readings`), so a request does not read its blocks again: ~2 ms
of CPU per 300-word block that the in-memory cache has not seen, ~0.1 ms to load."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..index.indexing import ChunkReader
from ..store.database import in_batches
from .statements import Analysed, Statement, Value, analyse

if TYPE_CHECKING:
    from ..store.documents import DocumentStore
    from ..types import Chunk

# Bump when `analyse` reads differently: rows of another version are read again on request.
READING_VERSION = 1


def to_json(analysed: Analysed) -> str:
    sentences = [
        [
            s.text,
            s.canon,
            sorted(s.terms),
            [
                [v.kind, list(v.slot), [list(r) for r in v.readings], v.start, v.end]
                for v in s.values
            ],
            [list(span) for span in s.negations],
            sorted(s.about - s.terms),
        ]
        for s in analysed.sentences
    ]
    data = {"v": READING_VERSION, "names": sorted(analysed.names), "sentences": sentences}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def from_json(raw: str) -> Analysed | None:
    """None for rows of another `READING_VERSION` or unreadable ones (read those again)."""
    try:
        data = json.loads(raw)
        if data.get("v") != READING_VERSION:
            return None
        sentences = []
        for text, canon, terms, values, negations, about in data["sentences"]:
            own = frozenset(terms)
            sentences.append(
                Statement(
                    text,
                    canon,
                    own,
                    tuple(_value(v) for v in values),
                    tuple((int(s), int(e)) for s, e in negations),
                    own | frozenset(about),
                )
            )
        return Analysed(tuple(sentences), frozenset(data["names"]))
    except (ValueError, KeyError, TypeError):
        return None


def _value(item: list[Any]) -> Value:
    kind, slot, readings, start, end = item
    if kind not in ("number", "date"):
        raise ValueError(f"not a value: {item!r}")
    parsed = tuple(tuple(None if x is None else float(x) for x in r) for r in readings)
    return Value(kind, tuple(str(s) for s in slot), parsed, int(start), int(end))


def store_readings(store: DocumentStore, chunks: Sequence[Chunk]) -> None:
    """Read and store `chunks` (the indexer's hook; blocking). Rows of chunks deleted
    meanwhile are skipped."""
    rows = [(c.id, to_json(analyse(c.text)), c.id) for c in chunks]
    with store.transaction() as db:
        db.executemany(
            "INSERT INTO chunk_readings (chunk_id, data) "
            "SELECT ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?) "
            "ON CONFLICT (chunk_id) DO UPDATE SET data = excluded.data",
            rows,
        )


def load_readings(store: DocumentStore, chunk_ids: Sequence[str]) -> dict[str, Analysed]:
    """The usable stored readings of `chunk_ids` (blocking)."""
    found: dict[str, Analysed] = {}
    db = store.connection()
    for batch, marks in in_batches(chunk_ids):
        query = f"SELECT chunk_id, data FROM chunk_readings WHERE chunk_id IN ({marks})"
        for chunk_id, raw in db.execute(query, batch):
            if (analysed := from_json(raw)) is not None:
                found[chunk_id] = analysed
    return found


# What the indexer stores for the conflict check (`Indexer(readers=...)`).
READER = ChunkReader(f"readings-v{READING_VERSION}", store_readings)
