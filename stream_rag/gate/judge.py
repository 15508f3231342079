"""The gate's stages for one request: lexical inline (microseconds), then, for grey-zone
sentences only, the semantic stage in a worker thread and the remote verifier within its time
budget. Every verdict says which stage decided it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

import anyio.to_thread

from ..embed.sentences import StoredVectors
from ..store.documents import DocumentStore
from .citations import Citation
from .claimcheck import Clause
from .frames import unframed
from .lexical import GateContext, Verdict
from .semantic import BlockVectors, SemanticStage

__all__ = ["Judge", "Stages", "Verifier"]


class Verifier(Protocol):
    """A remote second opinion on a grey-zone sentence (verify.py)."""

    async def verify(self, sentence: str, verdict: Verdict, ctx: GateContext) -> Verdict: ...


@dataclass(slots=True)
class Stages:
    """The stages after the lexical one, built once from the settings; any may be absent."""

    semantic: SemanticStage | None = None
    store: DocumentStore | None = None  # where block vectors are stored (None: in memory)
    verifier: Verifier | None = None

    def judge(self, ctx: GateContext, chunk_ids: Sequence[str] | None = None) -> Judge:
        vectors: BlockVectors | None = None
        if self.semantic is not None:
            if self.store is not None and chunk_ids is not None:
                pairs = list(zip(chunk_ids, ctx.blocks, strict=True))
                vectors = StoredVectors(self.store, self.semantic.encoder, pairs)
            else:
                from ..embed.sentences import memory_vectors

                vectors = memory_vectors(ctx.blocks, self.semantic.encoder)
        return Judge(ctx, self.semantic, vectors, self.verifier)


class Judge:
    """Judges the units of one answer, in order."""

    def __init__(
        self,
        ctx: GateContext,
        semantic: SemanticStage | None = None,
        vectors: BlockVectors | None = None,
        verifier: Verifier | None = None,
    ) -> None:
        self.ctx = ctx
        self.semantic = semantic if vectors is not None else None
        self.vectors = vectors
        self.verifier = verifier

    async def __call__(self, raw: str) -> Verdict:
        """The verdict on `raw` (citation markers included)."""
        text, citations, units = self.ctx.read(raw)
        return await self.check(text, citations, units)

    async def check(
        self, text: str, citations: Sequence[Citation], units: Sequence[Clause] | None = None
    ) -> Verdict:
        """The verdict on `text` (markers stripped) citing `citations`."""
        text, units = unframed(text, units)
        verdict = self.ctx.check(text, citations, units)
        if verdict.grey and self.semantic is not None and self.vectors is not None:
            verdict = await anyio.to_thread.run_sync(
                partial(self.semantic.judge, text, verdict, self.ctx, self.vectors)
            )
        if verdict.grey and self.verifier is not None:
            verdict = await self.verifier.verify(text, verdict, self.ctx)
        return verdict
