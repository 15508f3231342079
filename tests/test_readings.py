"""The conflict check's readings stored at ingest: the same as reading the text on request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from stream_rag.answer.conflicts import LexicalConflictDetector
from stream_rag.answer.readings import READING_VERSION, from_json, load_readings, to_json
from stream_rag.answer.statements import Analysed, analyse
from stream_rag.config import Settings
from stream_rag.services import open_services

from .test_conflicts import block

SAMPLE = Path(__file__).parent.parent / "stream_rag" / "sample_kb"


def test_readings_survive_their_json_and_other_versions_are_ignored() -> None:
    for path in SAMPLE.iterdir():
        analysed = analyse(path.read_text(encoding="utf-8"))
        assert from_json(to_json(analysed)) == analysed
    raw = to_json(analyse("Refunds take 5 days. It is not free."))
    assert from_json(raw.replace(f'"v":{READING_VERSION}', '"v":0')) is None
    assert from_json("not json") is None
    assert from_json('{"v": 1, "names": [], "sentences": [[1]]}') is None


def test_the_detector_loads_each_chunk_once_and_finds_the_same() -> None:
    texts = [
        "Refunds are issued within 30 days of the return.",
        "Refunds are issued within 14 days of the return.",
        "Shipping is free over 50 euros.",
    ]
    blocks = [block(i + 1, f"doc-{i + 1}", t) for i, t in enumerate(texts)]
    stored = {b.chunk_id: analyse(b.text) for b in blocks[:2]}  # the third has none stored
    asked: list[list[str]] = []

    def load(chunk_ids: Sequence[str]) -> Mapping[str, Analysed]:
        asked.append(list(chunk_ids))
        return {c: stored[c] for c in chunk_ids if c in stored}

    detector = LexicalConflictDetector(load=load)
    question = "How many days until refunds are issued?"
    found = detector.find(question, blocks)
    assert found == LexicalConflictDetector().find(question, blocks)
    assert [(c.values_a, c.values_b) for c in found] == [(("30 days",), ("14 days",))]
    detector.find(question, blocks)
    assert asked == [[b.chunk_id for b in blocks]]  # the second question loads nothing


def test_indexing_stores_the_readings(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    services = open_services(settings, embedder=None)
    services.indexer.embedder = None
    try:
        staged = services.store.blobs.stage_file(SAMPLE / "refund-policy.md", 10**7)
        result = services.store.add(staged, filename="refund-policy.md", collection="default")
        services.indexer.index_version(result.document.id, 1)
        chunks = services.store.chunks(result.document.id, 1)
        loaded = load_readings(services.store, [c.id for c in chunks])
        assert loaded == {c.id: analyse(c.text) for c in chunks}
        # A new reading format must index the store again.
        assert f"|readings-v{READING_VERSION}" in services.indexer.fingerprint
        services.store.delete(result.document.id)
        assert load_readings(services.store, [c.id for c in chunks]) == {}
    finally:
        services.close()
