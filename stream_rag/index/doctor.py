"""Consistency between the store and the index: points against live chunks, and the BM25
statistics both sides keep. `stream-rag doctor` prints the differences; `--repair` fixes them,
and the server runs the same check at start-up."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..counts import counted
from ..store.documents import DocumentStore
from .base import Index, PointRef
from .indexing import Indexer

log = logging.getLogger("stream_rag")
SHOWN = 10


@dataclass(slots=True)
class Report:
    """What differs; every list is empty and `stale` zero when the two sides agree."""

    points: int = 0
    live_chunks: int = 0
    # Points that no live chunk explains: deleted documents, superseded or failed versions.
    extra: list[PointRef] = field(default_factory=list)
    # Live versions with chunks that have no point (so retrieval can never return them).
    missing: dict[tuple[str, int], int] = field(default_factory=dict)
    # Deleted points the engine still counts in its IDF statistics.
    stale: int = 0
    # Live versions whose BM25 token count (for the average length) is unknown.
    no_lengths: list[tuple[str, int]] = field(default_factory=list)
    # Versions waiting to be indexed; their points may come and go, so they are not compared.
    pending: int = 0

    @property
    def differences(self) -> int:
        return len(self.extra) + sum(self.missing.values()) + self.stale + len(self.no_lengths)

    def lines(self) -> list[str]:
        out = [
            f"index points: {self.points}; live chunks: {self.live_chunks}; "
            f"versions waiting to be indexed: {self.pending}"
        ]
        if self.extra:
            docs = sorted({p.doc_id for p in self.extra})
            out.append(
                f"{counted(len(self.extra), 'point')} of no live chunk (documents: "
                f"{', '.join(docs[:SHOWN])}{', ...' if len(docs) > SHOWN else ''})"
            )
        for (doc_id, version), count in list(self.missing.items())[:SHOWN]:
            have = "has" if count == 1 else "have"
            out.append(f"{counted(count, 'chunk')} of {doc_id} v{version} {have} no point")
        if len(self.missing) > SHOWN:
            more = counted(len(self.missing) - SHOWN, "more version")
            out.append(f"... and {more} with missing points")
        if self.stale:
            stale = counted(self.stale, "deleted point")
            out.append(f"{stale} still counted in BM25 IDF statistics")
        if self.no_lengths:
            versions = counted(len(self.no_lengths), "live version")
            out.append(f"{versions} without BM25 length statistics")
        out.append(f"differences: {self.differences}")
        return out


def check(store: DocumentStore, index: Index) -> Report:
    """Compare (blocking): read the store's live chunks and scan every point."""
    live = store.live_chunk_ids()
    pending = store.versions_with_status("indexing")
    report = Report(live_chunks=len(live), pending=len(pending))
    seen: set[str] = set()
    for ref in index.points():
        report.points += 1
        if live.get(ref.chunk_id) == (ref.doc_id, ref.version):
            seen.add(ref.chunk_id)
        elif (ref.doc_id, ref.version) not in pending:
            report.extra.append(ref)
    for chunk, key in live.items():
        if chunk not in seen and key not in pending:
            report.missing[key] = report.missing.get(key, 0) + 1
    report.stale = index.stale_points()
    report.no_lengths = store.live_without_bm25_tokens()
    return report


def repair(indexer: Indexer, report: Report) -> Report:
    """Fix what `report` found, then check again and return the new report."""
    store, index = indexer.store, indexer.index
    if report.extra:
        index.delete_points([p.point_id for p in report.extra])
    for doc_id, version in report.missing:
        indexer.index_version(doc_id, version)
    for doc_id, version in report.no_lengths:
        store.set_bm25_tokens(doc_id, version, indexer.version_tokens(doc_id, version))
    if index.stale_points():
        index.vacuum()
    return check(store, index)


def startup_check(indexer: Indexer) -> list[tuple[str, int]]:
    """Run at start-up, before serving (the server holds the embedded index, so `stream-rag
    doctor` cannot run beside it): log the differences, drop extra points, vacuum, and return
    the versions with missing points, marked for indexing, for the queue."""
    report = check(indexer.store, indexer.index)
    if not report.differences:
        return []
    for line in report.lines():
        log.warning("index check: %s", line)
    if report.extra:
        indexer.index.delete_points([p.point_id for p in report.extra])
    if report.stale:
        indexer.index.vacuum()
    if report.no_lengths:
        log.warning("index check: run `stream-rag doctor --repair` to count their tokens")
    missing = list(report.missing)
    indexer.store.set_indexing(missing)
    return missing


def command(indexer: Indexer, *, fix: bool) -> int:
    """`stream-rag doctor [--repair]`: print the differences; exit 1 if any remain."""
    report = check(indexer.store, indexer.index)
    for line in report.lines():
        print(line)
    if fix and report.differences:
        report = repair(indexer, report)
        print("after repair:")
        for line in report.lines():
            print(line)
    return 1 if report.differences else 0
