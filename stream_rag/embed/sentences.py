"""Block-side vectors for the gate's semantic stage: each chunk's sentences, embedded once at
ingest and stored with the chunk (`chunk_sentence_vectors`), so a request embeds at most the
generated sentence. With a model that gives them, the same pass's content word-piece states
are stored too, compressed (tokens.py). Chunks stored before this existed get theirs on first
use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..ingest.sentences import sentence_spans
from ..store.documents import DocumentStore
from ..types import Chunk
from .blas import SINGLE_THREADED_BLAS
from .tokens import DIMS, TokenStates, compress

F32 = npt.NDArray[np.float32]

__all__ = [
    "SentenceEncoder",
    "SentenceVectors",
    "StoredVectors",
    "chunk_sentences",
    "embed_sentences",
    "memory_vectors",
    "store_chunk_vectors",
    "stored_model",
    "warm_up",
]

# Token counts (with [CLS] and [SEP]) a start-up warm-up embeds one text of: onnxruntime's
# first run, and its first run at a new length, cost more (docs/decisions/); a grey-zone
# sentence is 10-80 tokens (a longer one pays its first run at its length, ~0.2 ms).
WARM_UP_TOKENS = (16, 32, 64, 128)


class SentenceEncoder(Protocol):
    """What the semantic stage needs of a model: sentence vectors, the word-piece states of
    the same pass and context-free word vectors from the same model (the local MiniLM has
    all three)."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> F32: ...

    def embed_tokens(self, texts: Sequence[str]) -> tuple[F32, list[tuple[list[str], F32]]]: ...

    def static_vectors(self, words: Sequence[str]) -> F32: ...


@dataclass(frozen=True, slots=True)
class SentenceVectors:
    """One chunk's sentences (character spans in the chunk text) and their unit vectors."""

    model: str
    spans: tuple[tuple[int, int], ...]
    vectors: F32  # (len(spans), dim) float32
    tokens: TokenStates | None = None  # content word-piece states, where the model gives them

    def to_blob(self) -> bytes:
        return self.vectors.astype(np.float16).tobytes()

    @classmethod
    def from_blob(
        cls, model: str, spans: Sequence[tuple[int, int]], blob: bytes, dim: int
    ) -> SentenceVectors:
        vectors = np.frombuffer(blob, dtype=np.float16).reshape(len(spans), dim)
        return cls(model, tuple((int(s), int(e)) for s, e in spans), vectors.astype(np.float32))


def stored_model(encoder: SentenceEncoder) -> str:
    """What stored vectors are keyed by: the model's name, and its precision unless fp32 (a
    row of another precision is computed again on first use)."""
    precision = getattr(encoder, "precision", "fp32")
    return encoder.name if precision == "fp32" else f"{encoder.name}:{precision}"


def chunk_sentences(text: str) -> list[tuple[int, int]]:
    """The sentence spans a chunk is judged by; ingest and request side must agree."""
    return sentence_spans(text) or ([(0, len(text))] if text.strip() else [])


def embed_sentences(texts: Sequence[str], encoder: SentenceEncoder) -> list[SentenceVectors]:
    """Every text's sentence vectors, in one model call; a sentence repeated across texts
    (chunk overlap) is embedded once."""
    spans = [chunk_sentences(t) for t in texts]
    unique: dict[str, int] = {}
    for text, text_spans in zip(texts, spans, strict=True):
        for s, e in text_spans:
            unique.setdefault(text[s:e], len(unique))
    states: list[tuple[list[str], F32]] = []
    if unique:
        vectors, states = encoder.embed_tokens(list(unique))
    else:
        vectors = np.zeros((0, encoder.dim), np.float32)
    model = stored_model(encoder)
    out = []
    # Small matrix products: OpenBLAS's thread hand-off costs more than they do (a chunk's
    # projection took 2-9x the CPU with two threads on a busy machine).
    with SINGLE_THREADED_BLAS:
        for text, text_spans in zip(texts, spans, strict=True):
            rows = [unique[text[s:e]] for s, e in text_spans]
            matrix = vectors[rows] if rows else np.zeros((0, encoder.dim), np.float32)
            tokens = compress([states[r] for r in rows])
            out.append(SentenceVectors(model, tuple(text_spans), matrix, tokens))
    return out


def store_chunk_vectors(
    store: DocumentStore, encoder: SentenceEncoder, chunks: Sequence[Chunk]
) -> list[SentenceVectors]:
    """Embed and store the sentences of `chunks` (the ingest hook; blocking)."""
    computed = embed_sentences([c.text for c in chunks], encoder)
    _save(store, [c.id for c in chunks], computed, encoder.dim)
    return computed


def _save(
    store: DocumentStore, ids: Sequence[str], computed: Sequence[SentenceVectors], dim: int
) -> None:
    store.save_sentence_vectors(
        [
            (chunk_id, v.model, json.dumps(v.spans), dim, v.to_blob(), *_token_row(v.tokens))
            for chunk_id, v in zip(ids, computed, strict=True)
        ]
    )


def _token_row(tokens: TokenStates | None) -> tuple[str | None, int | None, bytes | None]:
    if tokens is None:
        return None, None, None
    return json.dumps(tokens.counts), tokens.dims, tokens.to_blob()


class StoredVectors:
    """One request's block vectors (block n is `blocks[n - 1]`, a `(chunk_id, text)` pair),
    read from the store on first use; a chunk without them is embedded then and stored."""

    def __init__(
        self, store: DocumentStore, encoder: SentenceEncoder, blocks: Sequence[tuple[str, str]]
    ) -> None:
        self.store = store
        self.encoder = encoder
        self.blocks = tuple(blocks)
        self._loaded: dict[str, SentenceVectors] | None = None

    def __call__(self, n: int) -> SentenceVectors:
        if self._loaded is None:
            self._loaded = self._load()
        return self._loaded[self.blocks[n - 1][0]]

    def _load(self) -> dict[str, SentenceVectors]:
        name = stored_model(self.encoder)
        # A row stored before word-piece states were, with states of another shape, or at
        # another precision (not found under this name), is computed again.
        loaded = {}
        for chunk_id, (spans, dim, blob, token_row) in self.store.sentence_vectors(
            [chunk_id for chunk_id, _ in self.blocks], name
        ).items():
            if dim != self.encoder.dim:
                continue
            if token_row is None or token_row[1] != DIMS:
                continue
            counts, dims, states = token_row
            tokens = TokenStates.from_blob(json.loads(counts), states, dims)
            stored = SentenceVectors.from_blob(name, json.loads(spans), blob, dim)
            loaded[chunk_id] = replace(stored, tokens=tokens)
        missing = list({c: t for c, t in self.blocks if c not in loaded}.items())
        if missing:
            computed = embed_sentences([text for _, text in missing], self.encoder)
            _save(self.store, [c for c, _ in missing], computed, self.encoder.dim)
            loaded.update(zip((c for c, _ in missing), computed, strict=True))
        return loaded


def memory_vectors(
    blocks: Sequence[str], encoder: SentenceEncoder
) -> Callable[[int], SentenceVectors]:
    """Block vectors computed on first use and kept in memory (evaluation, tests)."""
    cache: dict[int, SentenceVectors] = {}

    def get(n: int) -> SentenceVectors:
        if n not in cache:
            cache[n] = embed_sentences([blocks[n - 1]], encoder)[0]
        return cache[n]

    return get


def warm_up(encoder: SentenceEncoder) -> None:
    """Embed a sentence of each `WARM_UP_TOKENS` length as ingest does (word-piece states
    projected: the projection is made on first use) and a few word vectors, so that the first
    grey-zone sentences after start-up pay no first-call costs (blocking)."""
    embed_sentences([" ".join(["word"] * (n - 2)) for n in WARM_UP_TOKENS], encoder)
    encoder.static_vectors(["word", "wordpieces"])
