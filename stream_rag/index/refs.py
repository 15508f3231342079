"""What a dense hit needs (chunk, document, version), remembered by point id, so that the
engine's dense search can return no payload (docs/decisions/, "Dense hits without payload")."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from .base import IndexHit, hit_from_payload

# ~250 bytes an entry: ~50 MB at most, more than the dense searches of 100k points ever touch.
MAX_REFS = 200_000
# Indexes of up to this many points have every point's refs read when the server starts
# (`EdgeIndex.warm`: ~0.25 s at 11k points on a loaded machine); larger ones fill as searched.
PREFILL_MAX = 50_000


class Scored(Protocol):
    @property
    def id(self) -> Any: ...
    @property
    def score(self) -> float: ...


class Stored(Protocol):
    @property
    def id(self) -> Any: ...
    @property
    def payload(self) -> dict[str, Any] | None: ...


class HitRefs:
    """Point id -> (chunk id, document id, version), filled from payloads as points are found.

    An entry never goes stale: a point's id is a hash of its chunk id (`base.point_id`), and
    a chunk id names its document and version (`store.records.chunk_id`); a deleted point is
    simply never found again. Not thread-safe: the index calls it under its shard lock.
    """

    def __init__(self, limit: int = MAX_REFS) -> None:
        self.limit = limit
        self._refs: dict[Any, tuple[str, str, int]] = {}

    def __len__(self) -> int:
        return len(self._refs)

    def hits(
        self, found: Sequence[Scored], fetch: Callable[[list[Any]], Sequence[Stored]]
    ) -> list[IndexHit]:
        """`found` as hits, in order; `fetch` reads the payloads of points not seen before (a
        point deleted since it was found is left out, as a later search would not find it)."""
        refs = self._refs
        ids = [p.id for p in found]  # each read makes a new uuid.UUID: once
        known = [refs.get(i) for i in ids]  # one hash per id (a UUID's is Python code)
        if None in known:
            missing = [i for i, ref in zip(ids, known, strict=True) if ref is None]
            if len(refs) + len(missing) > self.limit:
                refs.clear()
                missing = ids
            for record in fetch(missing):
                hit = hit_from_payload(record.payload, 0.0)
                refs[record.id] = (hit.chunk_id, hit.doc_id, hit.version)
            known = [refs.get(i) for i in ids]
        return [
            IndexHit(ref[0], ref[1], ref[2], float(point.score))
            for ref, point in zip(known, found, strict=True)
            if ref is not None
        ]

    def fill(self, records: Iterable[Stored]) -> bool:
        """Remember `records` (read with their payloads) ahead of any search; False once the
        limit is reached (points past it are fetched when a search finds them)."""
        refs = self._refs
        for record in records:
            if len(refs) >= self.limit:
                return False
            hit = hit_from_payload(record.payload, 0.0)
            refs[record.id] = (hit.chunk_id, hit.doc_id, hit.version)
        return True

    def put(self, point_id: str, chunk_id: str, doc_id: str, version: int) -> None:
        """Remember a point being written (its id as a string), unless the map is full."""
        if len(self._refs) < self.limit:
            self._refs[uuid.UUID(point_id)] = (chunk_id, doc_id, version)
