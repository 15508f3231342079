"""Embedders: the local MiniLM (default) and any OpenAI-compatible `/v1/embeddings`."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..config import Settings
from ..errors import StreamRagError

log = logging.getLogger("stream_rag")

Vectors = npt.NDArray[np.float32]


class EmbeddingUnavailableError(StreamRagError):
    """The embedding backend failed (remote endpoint down, bad reply)."""

    code = "embedding_unavailable"
    status = 503


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """L2-normalised float32 vectors, one row per text, in order. Blocking."""
        ...


def sharing(embedder: object) -> contextlib.AbstractContextManager[None]:
    """`embedder.sharing()` where it has one (the local MiniLM: texts embedded again within
    the block, on this thread, are not recomputed), else a no-op."""
    share = getattr(embedder, "sharing", None)
    if callable(share):
        manager: contextlib.AbstractContextManager[None] = share()
        return manager
    return contextlib.nullcontext()


class OpenAIEmbedder:
    """`/v1/embeddings` of OpenAI, vLLM, TEI, Ollama... through the openai client."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout_s: float = 30.0,
        max_retries: int = 2,
    ) -> None:
        from openai import OpenAI

        self.name = f"openai:{model}"
        self.model = model
        self.batch_size = batch_size
        self._client = OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout_s,
            max_retries=max_retries,
        )
        self.dim = dim or self.embed(["dimension probe"]).shape[1]

    def close(self) -> None:
        self._client.close()

    def embed(self, texts: Sequence[str]) -> Vectors:
        import openai

        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            try:
                response = self._client.embeddings.create(model=self.model, input=batch)
            except openai.APIError as exc:
                raise EmbeddingUnavailableError(
                    f"embedding endpoint failed: {type(exc).__name__}: {exc}"
                ) from None
            ordered = sorted(response.data, key=lambda item: item.index)
            if len(ordered) != len(batch):
                raise EmbeddingUnavailableError("embedding endpoint returned the wrong count")
            rows.extend(item.embedding for item in ordered)
        if not rows:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        vectors = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        normalised: Vectors = vectors / np.maximum(norms, np.float32(1e-12))
        return normalised


def at_precision(embedder: Embedder, precision: str) -> Embedder:
    """`embedder` at `precision` ("fp32", "int8") where it has a choice (the local MiniLM's
    `with_precision`: same name and weights), else itself (remote embedders)."""
    switch = getattr(embedder, "with_precision", None)
    if callable(switch):
        view: Embedder = switch(precision)
        return view
    return embedder


def build_embedder(settings: Settings) -> tuple[Embedder | None, str]:
    """The configured embedder and a one-line status; None turns the dense branch off."""
    if settings.embed_base_url:
        try:
            remote = OpenAIEmbedder(
                settings.embed_base_url,
                settings.embed_model,
                api_key=settings.embed_api_key,
                timeout_s=settings.embed_timeout_s,
            )
        except EmbeddingUnavailableError as exc:
            message = f"dense branch off: {exc.message}"
            log.warning(message)
            return None, message
        return remote, f"dense branch on: {remote.name} ({remote.dim} dims)"
    from .minilm import MiniLMEmbedder, ModelNotInstalledError

    try:
        local = MiniLMEmbedder()
    except ModelNotInstalledError as exc:
        message = f"dense branch off: {exc}"
        log.warning(message)
        return None, message
    return local, f"dense branch on: {local.name} ({local.dim} dims, local)"
