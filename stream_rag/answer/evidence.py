"""How strongly the retrieved blocks bear on the question, on an absolute 0..1 scale.

Fused scores are relative (min-max within one result list), so they cannot say "nothing here
is about this". The evidence score is: for each block, the mean of its raw dense cosine (when
the dense branch ran) and the share of the question's terms the block contains (both lightly
stemmed); the best block's value counts. When a reranker answered, its top score is used.

`unnamed`: the names a question asks about that no block has. Blocks that share every other
word with "How much does the Enterprise plan cost?" still say nothing about that plan.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..language.terms import WORD, stem, term_of
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


_OPENS = '.?!:;"“(«¿¡'  # what a word after it opens, so its capital says nothing


def names(question: str) -> list[str]:
    """The words of `question` that name something: written with a capital inside a sentence
    ("Enterprise", not a question's first word), or a letter and digits ("X500"); words that
    state nothing ("OK", "I") aside."""
    capitals: list[str] = []
    models: list[str] = []
    lower = 0
    for match in WORD.finditer(question):
        word = match.group(0)
        parts = [term_of(t) for t in tokenize(word)]
        before = question[: match.start()].rstrip()
        if not parts or not all(parts):
            continue
        if word[:1].isalpha() and any(c.isdigit() for c in word):
            models.append(word)
        elif not before or before[-1] in _OPENS:
            continue  # a sentence's first word: its capital says nothing
        elif word[:1].isupper():
            capitals.append(word)
        else:
            lower += 1
    if question.upper() == question or (len(capitals) >= 3 and not lower):
        # CAPITALS or Title Case: the capitals name nothing
        capitals = []
    return list(dict.fromkeys(w for w in WORD.findall(question) if w in capitals or w in models))


def unnamed(question: str, blocks: Sequence[Block]) -> list[str]:
    """The question's `names` that no block has, in its text or its document's name."""
    asked = names(question)
    if not asked:
        return []
    have: set[str] = set()
    for block in blocks:
        have |= block.features.stems if block.features is not None else _terms(block.text)
        have |= _terms(re.sub(r"[-_.]+", " ", block.name))
    return [w for w in asked if not {stem(t) for t in tokenize(w)} <= have]
