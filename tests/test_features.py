"""Chunk features stored at ingest: the same verdicts and evidence as computing them per request."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
from starlette.testclient import TestClient

from stream_rag.answer.evidence import evidence_score
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.sentences import chunk_sentences
from stream_rag.gate.lexical import GateContext, check_sentence
from stream_rag.index.features import ChunkFeatures, compute, store_features
from stream_rag.ingest.chunking import chunk_spans
from stream_rag.ingest.extract import extract_text, media_type_for
from stream_rag.retrieve.hybrid import Block
from stream_rag.services import open_services
from stream_rag.store.documents import DocumentStore

from .conftest import wait_indexed

SAMPLE = Path(__file__).resolve().parent.parent / "stream_rag" / "sample_kb"
EXTRA = [
    "Annual plans cost $120 (save 20%) and renew on 1 March 2025 at 09:30.",
    "退款须在30天内申请。不可退款的项目包括礼品卡。",
    "It does not sync on Wednesdays; sync runs twice a day, at 6 am and 6 pm.",
    "Storage: 1.5 million notes, 2nd tier, three devices, ¥500 or €40.",
]


def chunk_texts() -> list[str]:
    texts = list(EXTRA)
    for path in sorted(SAMPLE.iterdir()):
        text, _ = extract_text(path, media_type_for(path.name))
        texts += [text[s:e] for s, e in chunk_spans(text, 1000, 150)]
    return texts


def block(n: int, text: str, features: ChunkFeatures | None) -> Block:
    return Block(
        n, f"c{n}", f"doc_{n}", 1, "", "n", "n.txt", 0, len(text), text, {"dense": 0.5}, features
    )


def test_features_survive_their_json_and_older_rows_are_ignored() -> None:
    for text in chunk_texts():
        for semantic in (False, True):
            features = compute(text, semantic=semantic)
            assert ChunkFeatures.from_json(features.to_json()) == features
    stale = json.loads(compute(EXTRA[0]).to_json()) | {"v": 0}
    assert ChunkFeatures.from_json(json.dumps(stale)) is None
    assert ChunkFeatures.from_json("{not json") is None


def test_gate_and_evidence_agree_with_and_without_stored_features() -> None:
    texts = chunk_texts()
    sentences: list[str] = []
    for i, text in enumerate(texts[:12]):
        for span in compute(text).spans[:4]:
            sentence = text[span[0] : span[1]]
            sentences.append(f"{sentence} [{i % 8 + 1}]")
            sentences.append(f"{sentence.replace('0', '7')} [{(i + 3) % 8 + 1}]")
    for start in range(0, len(texts) - 8, 3):
        window = texts[start : start + 8]
        features = [compute(t) for t in window]
        plain = GateContext(window, [f"doc_{n}" for n in range(1, 9)])
        stored = GateContext(window, [f"doc_{n}" for n in range(1, 9)], features=features)
        for sentence in sentences:
            assert check_sentence(sentence, plain) == check_sentence(sentence, stored), sentence
        for question in ("Can I get a refund?", "How much does the Pro plan cost per month?"):
            without = [block(n, t, None) for n, t in enumerate(window, 1)]
            with_ = [
                block(n, t, f) for n, (t, f) in enumerate(zip(window, features, strict=True), 1)
            ]
            assert evidence_score(question, without) == evidence_score(question, with_)


def _indexed_refund_policy(client: TestClient) -> tuple[str, list[dict[str, Any]]]:
    """The sample refund policy uploaded and indexed: its id and its chunks as listed."""
    text = (SAMPLE / "refund-policy.md").read_bytes()
    response = client.post("/v1/documents", files={"file": ("refunds.md", text)})
    doc_id: str = response.json()["document"]["id"]
    wait_indexed(client, doc_id)
    chunks = client.get(f"/v1/documents/{doc_id}/versions/1/chunks").json()["chunks"]
    return doc_id, chunks


def test_indexing_stores_features_and_deleting_removes_them(
    client: TestClient, settings: Settings
) -> None:
    doc_id, chunks = _indexed_refund_policy(client)
    db = sqlite3.connect(settings.data_dir / "stream_rag.sqlite3")
    try:
        rows = dict(db.execute("SELECT chunk_id, data FROM chunk_features").fetchall())
        assert set(rows) == {c["id"] for c in chunks}
        for chunk in chunks:
            # The test server runs the semantic stage: its terms are stored too.
            stored = ChunkFeatures.from_json(rows[chunk["id"]])
            assert stored == compute(chunk["text"], semantic=True)
        assert client.delete(f"/v1/documents/{doc_id}").status_code == 200
        assert db.execute("SELECT count(*) FROM chunk_features").fetchone()[0] == 0
    finally:
        db.close()


def test_features_of_an_older_version_are_replaced_when_stored_again(
    client: TestClient, settings: Settings
) -> None:
    _, listed = _indexed_refund_policy(client)
    ids = [c["id"] for c in listed]
    store = DocumentStore(settings.data_dir)
    chunks = store.chunks_by_id(ids)
    stale = json.loads(compute(chunks[ids[0]].text).to_json()) | {"v": 1}
    store.set_chunk_features([(ids[0], json.dumps(stale))])
    store_features(store, list(chunks.values()))
    rows = store.chunk_features(ids)
    assert ChunkFeatures.from_json(rows[ids[0]]) == compute(chunks[ids[0]].text)
    # A row without the semantic stage's terms is replaced when the stage needs them.
    store.set_chunk_features([(ids[0], compute(chunks[ids[0]].text).to_json())])
    store_features(store, list(chunks.values()), semantic=True)
    rows = store.chunk_features(ids)
    assert ChunkFeatures.from_json(rows[ids[0]]) == compute(chunks[ids[0]].text, semantic=True)


def test_a_blocks_keys_are_read_once_and_unions_cover_every_cited_block() -> None:
    texts = chunk_texts()[:3]
    ctx = GateContext(texts)
    keys = [GateContext.text_keys(t) for t in texts]
    assert [ctx.keys_of(n) for n in (1, 2, 3)] == keys
    assert ctx.block_keys((3, 1)) == keys[0] | keys[2]
    assert ctx.block_keys((1, 2, 3)) == keys[0] | keys[1] | keys[2]
    assert ctx.block_keys(()) == frozenset()
    assert ctx.block_keys((2,)) is ctx.keys_of(2)  # one cached set per block


def test_stored_semantic_terms_are_what_a_request_would_compute() -> None:
    for text in chunk_texts():
        stored = compute(text, semantic=True).semantic
        assert stored is not None
        plain = GateContext([text])
        ctx = GateContext([text], features=[compute(text, semantic=True)])
        assert ctx.block_keys((1,)) == plain.block_keys((1,)) == GateContext.text_keys(text)
        assert ctx.keys_of(1) == plain.keys_of(1) == GateContext.text_keys(text)
        assert plain.keys_of(1) is plain.keys_of(1)  # read once per context
        assert ctx.block_tokens(1) == plain.block_tokens(1)
        spans = chunk_sentences(text)
        windows = [*spans, *((a[0], b[1]) for a, b in itertools.pairwise(spans))]
        assert set(stored.windows) == set(windows)
        for start, end in windows:
            assert ctx.window_keys(1, start, end) == GateContext.text_keys(text[start:end])
        # A window it has no stored keys for (spans of another sentence splitter) is read.
        assert ctx.window_keys(1, 0, 7) == GateContext.text_keys(text[:7])


def test_retrieved_blocks_carry_their_stored_features(
    settings: Settings, minilm: MiniLMEmbedder
) -> None:
    services = open_services(settings, embedder=minilm)
    try:
        staged = services.store.blobs.stage_file(SAMPLE / "pricing.md", 10**7)
        result = services.store.add(staged, filename="pricing.md", collection="default")
        services.indexer.index_version(result.document.id, 1)
        found = anyio.run(services.retriever.search, "What does the Pro plan cost?")
        assert found.blocks
        for block in found.blocks:
            assert block.features == compute(block.text, semantic=True)  # the stage is on
    finally:
        services.close()
