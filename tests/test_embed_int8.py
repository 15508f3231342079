"""The int8 encoder (weights quantized at load, on onnxruntime) against the fp32 one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.embed.ort import has_vnni, quantized, weight_peak
from stream_rag.errors import InvalidFieldError
from stream_rag.services import open_services

pytest.importorskip("onnxruntime", reason="a dependency: pip install -e .")

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_reference.json"

PASSAGES = [
    "Refunds are paid within 30 days of the return reaching our warehouse.",
    "To reset your password, open Settings, choose Security and follow the email link.",
    "The laminar boundary layer on a flat plate becomes turbulent near Re = 5e5.",
    "Our office in Lisbon is open Monday to Friday from 9 am to 6 pm.",
    "Sync pauses while the laptop runs on battery saver and resumes on mains power.",
    "Hardware security keys can be registered as a second factor for every account.",
    "Shipping to Canada takes five to eight working days by standard post.",
    "The heat transfer coefficient rises with the Mach number in hypersonic flow.",
]
QUERIES = [
    "how long until I get my money back after returning an item",
    "I forgot my password, how do I change it",
    "at what Reynolds number does transition to turbulence happen",
    "what are the opening hours of the Lisbon office",
    "why did my files stop syncing on battery",
    "can I use a YubiKey for two-factor login",
    "delivery time for orders to Canada",
    "heating at high Mach numbers",
]


@pytest.fixture(scope="module")
def int8(minilm: MiniLMEmbedder) -> MiniLMEmbedder:
    return minilm.with_precision("int8")


@pytest.mark.parametrize("top", [127, 63])
def test_weights_round_trip_per_output_channel(top: int) -> None:
    rng = np.random.default_rng(0)
    w = rng.normal(size=(64, 48)).astype(np.float32) * np.linspace(0.01, 3, 48, dtype=np.float32)
    q, scale = quantized(w, top)
    assert q.dtype == np.int8
    assert scale.shape == (48,)
    assert np.abs(q).max(axis=0).tolist() == [top] * 48  # each column uses its full range
    assert (np.abs(q * scale - w) <= scale / 2 * 1.0001).all()


def test_full_range_weights_only_where_the_cpu_has_vnni() -> None:
    avx2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
    zen4 = "flags\t\t: fpu avx2 avx512f avx512_vnni\n"
    assert not has_vnni(avx2)
    assert has_vnni(zen4)
    assert has_vnni("flags\t\t: avx2 avx_vnni\n")
    assert not has_vnni("")
    assert weight_peak(has_vnni(avx2)) == 63
    assert weight_peak(has_vnni(zen4)) == 127


def test_int8_vectors_are_close_to_the_reference(int8: MiniLMEmbedder) -> None:
    items = json.loads(FIXTURE.read_text("utf-8"))["items"]
    texts = [item["text"] for item in items]
    expected = np.asarray([item["embedding"] for item in items], dtype=np.float64)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    got = int8.embed(texts).astype(np.float64)  # long texts included: the bulk path too
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * expected).sum(1)
    assert cosines.min() >= 0.97, dict(zip(texts, cosines.round(4), strict=True))
    assert cosines.mean() >= 0.99


def test_int8_queries_rank_fp32_passages_as_fp32_queries_do(
    minilm: MiniLMEmbedder, int8: MiniLMEmbedder
) -> None:
    passages = minilm.embed(PASSAGES)
    fp32_scores = minilm.embed(QUERIES) @ passages.T
    int8_scores = int8.embed(QUERIES) @ passages.T
    assert int8_scores.argmax(axis=1).tolist() == list(range(len(QUERIES)))
    assert fp32_scores.argmax(axis=1).tolist() == list(range(len(QUERIES)))
    # Query by query: the same top three, and every pair of passages whose fp32 scores are
    # 0.05 or more apart in the same order (near-ties far down may swap).
    for fp32_row, int8_row in zip(fp32_scores, int8_scores, strict=True):
        assert np.argsort(-fp32_row)[:3].tolist() == np.argsort(-int8_row)[:3].tolist()
        apart = np.abs(fp32_row[:, None] - fp32_row[None, :]) >= 0.05
        fp32_above = fp32_row[:, None] > fp32_row[None, :]
        int8_above = int8_row[:, None] > int8_row[None, :]
        assert (fp32_above == int8_above)[apart].all()
    np.testing.assert_allclose(int8_scores, fp32_scores, atol=0.04)


def test_an_int8_vector_does_not_depend_on_its_batch(int8: MiniLMEmbedder) -> None:
    texts = ["short", *QUERIES[:3], "x " * 300]
    together = int8.embed(texts)
    alone = np.vstack([int8.embed([t]) for t in texts])
    np.testing.assert_array_equal(together, alone)


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_a_prepared_embedding_is_the_embedding(minilm: MiniLMEmbedder, precision: str) -> None:
    model = minilm.with_precision(precision)
    for texts in (["one question"], QUERIES[:1], QUERIES[:3], ["x " * 300]):
        np.testing.assert_array_equal(model.prepare(texts)(), model.embed(texts))


def test_precision_views_share_the_model_but_not_their_vectors(minilm: MiniLMEmbedder) -> None:
    int8 = minilm.with_precision("int8")
    assert minilm.with_precision("fp32") is minilm
    assert int8.with_precision("int8") is int8
    assert (minilm.precision, int8.precision, int8.name) == ("fp32", "int8", minilm.name)
    assert int8.with_precision("fp32").embed(["hello"]).tolist() == minilm.embed(["hello"]).tolist()
    with minilm.sharing():
        first = minilm.embed(["a sentence both precisions embed"])
        second = int8.embed(["a sentence both precisions embed"])
        assert not np.array_equal(first, second)  # the memo keeps the two apart


def test_int8_needs_onnxruntime() -> None:
    with pytest.raises(ValueError, match="precision"):
        MiniLMEmbedder(runtime="numpy", precision="int8")
    with pytest.raises(ValueError, match="precision"):
        MiniLMEmbedder(runtime="numpy").with_precision("int4")


@pytest.mark.parametrize(
    ("queries", "passages", "gate"), [("int8", "fp32", "fp32"), ("fp32", "int8", "int8")]
)
def test_each_use_gets_its_configured_precision(
    tmp_path: Path, minilm: MiniLMEmbedder, queries: str, passages: str, gate: str
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        embed_query_precision=queries,
        embed_passage_precision=passages,
        embed_gate_precision=gate,
    )
    services = open_services(settings, embedder=minilm)
    try:
        assert services.retriever.queries is not None
        query_embedder = services.retriever.queries.embedder
        assert isinstance(query_embedder, MiniLMEmbedder)
        assert query_embedder.precision == queries
        assert isinstance(services.indexer.embedder, MiniLMEmbedder)
        assert services.indexer.embedder.precision == passages
        semantic = services.answerer.stages.semantic
        assert semantic is not None
        assert isinstance(semantic.encoder, MiniLMEmbedder)
        assert semantic.encoder.precision == gate  # the blocks' side, stored at ingest
        assert isinstance(semantic.sentence_encoder, MiniLMEmbedder)
        assert semantic.sentence_encoder.precision == gate
        assert services.indexer.sentence_encoder is semantic.encoder
        assert services.embedder is minilm  # the fp32 model itself, e.g. for /readyz
    finally:
        services.close()


def test_precision_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(InvalidFieldError, match="EMBED_QUERY_PRECISION"):
        Settings(data_dir=tmp_path, embed_query_precision="int4")
    env = {"STREAM_RAG_EMBED_PASSAGE_PRECISION": "int8", "STREAM_RAG_DATA_DIR": str(tmp_path)}
    assert Settings.from_env(env_file=None, environ=env).embed_passage_precision == "int8"
