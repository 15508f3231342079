"""What the verifier reads: a claim and the sentences of its cited blocks that share the
most content terms with it, as one word-piece pair (what a gate stage would have to serve)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from stream_rag.language.terms import term_keys

__all__ = ["CLAIM_PIECES", "EVIDENCE_PIECES", "MAX_PIECES", "evidence", "pair_ids", "split"]

# A claim of more pieces is cut. The evidence takes what is left of MAX_PIECES: 128, not
# MiniLM's 256, for the gate's 15 ms per sentence and to train on two shared cores.
MAX_PIECES = 128
CLAIM_PIECES = 48
EVIDENCE_PIECES = 96
CLS, SEP = 101, 102

_BOUNDARY = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")


def split(text: str) -> list[str]:
    """A block's sentences, cut at sentence punctuation and line breaks."""
    return [s for s in (p.strip() for p in _BOUNDARY.split(text)) if s]


def _terms(text: str) -> frozenset[str]:
    return frozenset(term for term, _, _ in term_keys(text.casefold()))


def evidence(
    claim: str, blocks: Sequence[str], count: Callable[[str], int], budget: int = EVIDENCE_PIECES
) -> str:
    """The cited blocks' sentences sharing the most content terms with `claim`, best first
    until `budget` word pieces, then put back in their order."""
    sentences = [s for block in blocks for s in split(block)]
    if not sentences:
        return ""
    want = _terms(claim)
    ranked = sorted(range(len(sentences)), key=lambda i: (-len(want & _terms(sentences[i])), i))
    chosen: list[int] = []
    used = 0
    for i in ranked:
        size = count(sentences[i])
        if chosen and used + size > budget:
            continue
        chosen.append(i)
        used += size
        if used >= budget:
            break
    return " ".join(sentences[i] for i in sorted(chosen))


def pair_ids(evidence_ids: Sequence[int], claim_ids: Sequence[int]) -> tuple[list[int], list[int]]:
    """`[CLS] evidence [SEP] claim [SEP]` and its segment ids, within MAX_PIECES."""
    claim = list(claim_ids[:CLAIM_PIECES])
    room = MAX_PIECES - 3 - len(claim)
    ev = list(evidence_ids[:room])
    ids = [CLS, *ev, SEP, *claim, SEP]
    types = [0] * (len(ev) + 2) + [1] * (len(claim) + 1)
    return ids, types
