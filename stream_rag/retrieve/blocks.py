"""What a search returns: the blocks (a chunk's ORIGINAL text, its document's identity, its
scores), numbered in the order they are offered to the model, and the search's parameters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..index.features import ChunkFeatures
from .fusion import FusionMethod


@dataclass(frozen=True, slots=True)
class Block:
    """One retrieved chunk, numbered `n` (1-based) in the order it is offered to the model."""

    n: int
    chunk_id: str
    doc_id: str
    version: int
    sha256: str
    name: str
    filename: str
    start: int
    end: int
    text: str
    scores: Mapping[str, float]
    # Computed at ingest (None: not stored; the gate and evidence score compute them).
    features: ChunkFeatures | None = field(default=None, compare=False, repr=False)
    page: int | None = None  # the PDF page the chunk starts on
    dated: str | None = None  # when its document says it was last updated (ISO date)
    # The headings the chunk stands under, outermost first, each a line ("## Fees": its level).
    headings: tuple[str, ...] = ()

    @property
    def framed(self) -> str:
        """Its text under the headings it stands under: what answer selection and the prompt
        read (a chunk starting mid-section is about its section, not only its document), while
        citations are checked against `text` alone."""
        return framed(self.text, self.headings)

    @property
    def url(self) -> str:
        """The version's bytes; a PDF opens at the block's page (`#page=N`)."""
        url = f"/v1/documents/{self.doc_id}/versions/{self.version}/content"
        return url if self.page is None else f"{url}#page={self.page}"

    def to_json(self) -> dict[str, object]:
        return {
            "n": self.n,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "version": self.version,
            "sha256": self.sha256,
            "name": self.name,
            "filename": self.filename,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "scores": dict(self.scores),
            "page": self.page,
            "url": self.url,
        }


def framed(text: str, headings: Sequence[str]) -> str:
    """`text` under its heading lines, a paragraph each (as extraction writes headings)."""
    return "\n\n".join([*headings, text]) if headings else text


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    collection: str
    blocks: tuple[Block, ...]
    fusion: FusionMethod
    weights: Mapping[str, float]
    dense: str
    rerank: str
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "query": self.query,
            "collection": self.collection,
            "fusion": self.fusion,
            "weights": dict(self.weights),
            "dense": self.dense,
            "rerank": self.rerank,
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
            "blocks": [b.to_json() for b in self.blocks],
        }
