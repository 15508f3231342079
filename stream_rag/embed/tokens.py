"""Word-piece states of a chunk's sentences, kept for the gate's token alignment: the content
word pieces' last hidden states from the pass that embeds each sentence at ingest, projected
to fewer dimensions by a fixed seeded rotation and stored as int8 (docs/decisions/ has how
much of the signal each compression keeps).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..text import STOP_WORDS

F32 = npt.NDArray[np.float32]
I8 = npt.NDArray[np.int8]

__all__ = [
    "DIMS",
    "TokenEncoder",
    "TokenStates",
    "compress",
    "content_pieces",
    "project",
]

# Projected dimensions of a stored word-piece state and the projection's seed: part of the
# stored format (a row of another shape is recomputed, see sentences.py).
DIMS = 128
SEED = 9


class TokenEncoder(Protocol):
    """A model that gives word-piece states from the pass that embeds (the local MiniLM)."""

    def embed_tokens(self, texts: Sequence[str]) -> tuple[F32, list[tuple[list[str], F32]]]: ...


def content_pieces(pieces: Sequence[str]) -> list[int]:
    """Rows of the word pieces that carry content: not a stop word or punctuation (a word's
    continuation pieces count)."""
    keep = [
        i
        for i, p in enumerate(pieces)
        if (p.startswith("##") or p not in STOP_WORDS) and p[-1:].isalnum()
    ]
    return keep


@functools.cache
def _rotation(dim: int, dims: int) -> F32:
    """A fixed (dim, dims) matrix with orthonormal columns, the same in every process."""
    gaussian = np.random.default_rng(SEED).standard_normal((dim, dims))
    q, _ = np.linalg.qr(gaussian)
    rotation: F32 = np.ascontiguousarray(q, dtype=np.float32)
    return rotation


def project(states: F32, dims: int = DIMS) -> F32:
    """`states` (n, dim) projected to `dims` and normalised to unit rows."""
    out: F32 = states if dims >= states.shape[1] else states @ _rotation(states.shape[1], dims)
    unit: F32 = out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), np.float32(1e-12))
    return unit


def quantise(unit: F32) -> I8:
    """Unit rows as int8, each scaled to its largest component (a cosine needs no scale)."""
    scale = 127.0 / np.maximum(np.abs(unit).max(axis=1, keepdims=True), 1e-12)
    quantised: I8 = np.rint(unit * scale).astype(np.int8)
    return quantised


@dataclass(frozen=True, slots=True)
class TokenStates:
    """One chunk's stored word-piece states: `counts[i]` rows for its sentence i."""

    counts: tuple[int, ...]
    states: F32  # (sum(counts), dims) unit rows, dequantised

    @property
    def dims(self) -> int:
        return int(self.states.shape[1])

    def rows(self, sentences: Sequence[int]) -> F32:
        """The states of the given sentences' content word pieces, stacked."""
        starts = np.concatenate([[0], np.cumsum(self.counts)]).astype(int)
        parts = [self.states[starts[i] : starts[i + 1]] for i in sentences]
        return np.vstack(parts) if parts else np.zeros((0, self.dims), np.float32)

    def to_blob(self) -> bytes:
        return quantise(self.states).tobytes()

    @classmethod
    def from_blob(cls, counts: Sequence[int], blob: bytes, dims: int) -> TokenStates:
        raw = np.frombuffer(blob, dtype=np.int8).reshape(sum(counts), dims).astype(np.float32)
        unit = raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), np.float32(1e-12))
        return cls(tuple(int(c) for c in counts), unit)


def compress(sentences: Sequence[tuple[list[str], F32]], dims: int = DIMS) -> TokenStates:
    """The stored form of each sentence's content word-piece states."""
    counts, parts = [], []
    for pieces, states in sentences:
        keep = content_pieces(pieces)
        counts.append(len(keep))
        parts.append(states[keep])
    width = min(dims, sentences[0][1].shape[1]) if sentences else dims
    stacked = np.vstack(parts) if parts else np.zeros((0, width), np.float32)
    unit = project(stacked.astype(np.float32, copy=False), dims) if len(stacked) else stacked
    # Round-tripped through int8 so that fresh and stored states score alike.
    return TokenStates.from_blob(counts, quantise(unit).tobytes(), width)
