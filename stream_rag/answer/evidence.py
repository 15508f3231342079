"""How strongly the retrieved blocks bear on the question, on an absolute 0..1 scale.

Fused scores are relative (min-max within one result list), so they cannot say "nothing here
is about this". The evidence score is: for each block, the mean of its raw dense cosine (when
the dense branch ran) and the share of the question's terms the block contains (both lightly
stemmed); the best block's value counts. When a reranker answered, its top score is used.

`entry_evidence`: the same score with a block's dense part taken from its best entry, for a
block holding several FAQ entries: its vector averages them all, so a question about one entry
in other words than its own scored 0.1-0.3 against the whole block.

`sentence_evidence`: the best cosine of the question to one sentence of the top blocks: a
customer telling their situation in their own words ("Our daughter is two years old. Do we pay
for her?") shares few terms with the block and little with its averaged vector, and still
asks what one sentence says ("children under 4 stay free").

`unnamed`: the names a question asks about that no block has. Blocks that share every other
word with "How much does the Enterprise plan cost?" still say nothing about that plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from ..ingest.chunking import pieces
from ..language.coverage import derived
from ..language.question import read_question
from ..language.terms import stem
from ..model.passages import block_sentences
from ..retrieve.hybrid import Block
from ..text import compounds, tokenize

# Cosines of texts to a question (`model.extractive.SentenceVectors`: cached by text).
Similarity = Callable[[str, Sequence[str]], Sequence[float]]
ENTRY_BLOCKS = 4  # only the top blocks' entries are embedded (each new one costs ~5 ms)


def _terms(text: str) -> set[str]:
    return {stem(t) for t in tokenize(text)}


class Asked:
    """A question's terms for the term share. A word written with hyphens counts as its parts,
    as it did before `tokenize` also joined them, each found in a block as itself or as the
    joined word ("Wi-Fi" is two terms, found in "Wi-Fi" or "wifi"): counted as three, one
    hyphenated word outweighed the rest ("How do I reset my Wi-Fi router?" passed over an FAQ
    saying "Wi-Fi"). A word written joined is one term ("wifi", found in "Wi-Fi")."""

    __slots__ = ("joined", "terms")

    def __init__(self, question: str) -> None:
        self.terms = _terms(question)
        self.joined: dict[str, str] = {}  # a part's stem -> its word's joined stem
        for joined, parts in compounds(question):
            if parts:
                self.terms.discard(stem(joined))
                self.joined.update((stem(p), stem(joined)) for p in parts)

    def found(self, stems: frozenset[str]) -> int:
        """How many of the terms are in `stems`: as they are, joined, or derived ("cancel" in
        "Cancellations")."""
        return len(self.terms & stems) + sum(
            self.joined.get(t) in stems or derived(t, stems) for t in self.terms - stems
        )


def evidence_score(question: str, blocks: Sequence[Block]) -> float:
    if not blocks:
        return 0.0
    if all("rerank" in b.scores for b in blocks):
        return max(b.scores["rerank"] for b in blocks)
    asked = Asked(question)
    return max(_block_score(asked, block, block.scores.get("dense")) for block in blocks)


def _block_score(asked: Asked, block: Block, dense: float | None) -> float:
    stems = _stems(block)
    terms = asked.terms
    parts = [asked.found(stems) / len(terms)] if terms else []
    if dense is not None:
        parts.append(max(0.0, dense))
    return sum(parts) / len(parts) if parts else 0.0


def _stems(block: Block) -> frozenset[str]:
    """The block's stems and its headings' (a chunk under "## Brakes" is about brakes though
    its sentences never say the word)."""
    stems = block.features.stems if block.features is not None else frozenset(_terms(block.text))
    return stems | _heading_terms(block.headings) if block.headings else stems


@lru_cache(maxsize=4096)
def _heading_terms(headings: tuple[str, ...]) -> frozenset[str]:
    return frozenset(_terms(" ".join(headings)))


def entries(text: str) -> list[str]:
    """The FAQ entries of a block holding two or more (each heading with the text under it,
    up to the next heading); none for a block of one entry or none: its own vector is that."""
    found: list[tuple[int, int]] = []
    heading: int | None = None
    for start, end, is_heading in pieces(text):
        if is_heading:
            heading = start
        elif heading is not None:
            if found and found[-1][0] == heading:
                found[-1] = (heading, end)
            else:
                found.append((heading, end))
    return [text[s:e] for s, e in found] if len(found) >= 2 else []


def entry_evidence(question: str, blocks: Sequence[Block], similarity: Similarity) -> float:
    """`evidence_score` with the dense part of each of the top blocks holding several entries
    the best of its own cosine and its entries' (embedded as the chunks are)."""
    if not blocks or all("rerank" in b.scores for b in blocks):
        return evidence_score(question, blocks)
    asked = Asked(question)
    best = 0.0
    for block in blocks[:ENTRY_BLOCKS]:
        dense = block.scores.get("dense")
        if dense is None:
            continue  # no dense branch ran: no cosine to compare an entry's with
        if texts := entries(block.framed):
            dense = max(dense, *similarity(question, texts))
        best = max(best, _block_score(asked, block, dense))
    return best


def sentence_evidence(question: str, blocks: Sequence[Block], similarity: Similarity) -> float:
    """The best cosine of `question` to a sentence of the top blocks (their quotable
    sentences, embedded as the local generator embeds them: cached, and warmed at indexing)."""
    texts = [s for b in blocks[:ENTRY_BLOCKS] for s in block_sentences(b.text)]
    return max(similarity(question, texts), default=0.0) if texts else 0.0


def unnamed(question: str, blocks: Sequence[Block]) -> list[str]:
    """The question's `names` that no block has, in its text or its document's name."""
    asked = read_question(question).names
    if not asked:
        return []
    have: set[str] = set()
    for block in blocks:
        have |= _stems(block)
        have |= _terms(re.sub(r"[-_.]+", " ", block.name))
    return [w for w in asked if not {stem(t) for t in tokenize(w)} <= have]
