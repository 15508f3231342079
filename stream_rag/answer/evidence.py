"""How strongly the retrieved blocks bear on the question, on an absolute 0..1 scale.

Fused scores are relative (min-max within one result list), so they cannot say "nothing here
is about this". The evidence score is: for each block, the mean of its raw dense cosine (when
the dense branch ran) and the share of the question's terms the block contains (both lightly
stemmed); the best block's value counts. When a reranker answered, its top score is used.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..language.terms import stem
from ..retrieve.hybrid import Block
from ..text import tokenize


def _terms(text: str) -> set[str]:
    return {stem(t) for t in tokenize(text)}


def evidence_score(question: str, blocks: Sequence[Block]) -> float:
    if not blocks:
        return 0.0
    if all("rerank" in b.scores for b in blocks):
        return max(b.scores["rerank"] for b in blocks)
    terms = _terms(question)
    best = 0.0
    for block in blocks:
        stems = block.features.stems if block.features is not None else _terms(block.text)
        parts = [len(terms & stems) / len(terms)] if terms else []
        if "dense" in block.scores:
            parts.append(max(0.0, block.scores["dense"]))
        if parts:
            best = max(best, sum(parts) / len(parts))
    return best
