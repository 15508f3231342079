"""The things a question asks (`asks`) that the sources say nothing about: "When are you open
and is there a gym?" over blocks none of which says "gym". The local generator leaves such a
part out and answers the others; the answer says which parts it left out (`done`'s
`uncovered`), whatever the generator, so that a reader does not take silence for an answer.

A part is uncovered when most of the words it asks and the other parts do not (its own words)
are in no block, or a name it asks about ("the Enterprise plan") is in no block nor its
document's name. Words shared by every part ("price" in "the price of the city bike and of the
tandem") say nothing about which part the blocks answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..text import compounds, tokenize
from .question import read_question
from .terms import stem

__all__ = ["derived", "has_word", "left_out", "name_words", "own_words", "uncovered"]


# How a question asks, not what about: the word after "how" ("how big", "how fast").
_HOW = re.compile(r"\bhow\s+([^\W\d_]+)", re.IGNORECASE)
# Letters two derivations of one word share at least ("cancel", "cancellation").
_STEM = 5


def own_words(parts: Sequence[str]) -> list[set[str]]:
    """Each part's words, as written and casefolded ("e-bike" whole: its "e" is no BM25 token,
    and "bike" alone is the city bike's too), less those another part asks too; what it asks
    about, not how ("how much", "need")."""
    words = [
        {w.casefold() for w in read_question(part).subject}
        - {w.casefold() for w in _HOW.findall(part)}
        for part in parts
    ]
    return [w.difference(*(o for j, o in enumerate(words) if j != i)) for i, w in enumerate(words)]


def has_word(text: str, word: str) -> bool:
    """Whether `text` has `word` as written or its stemmed terms ("bikes" for "bike", "wifi"
    for "Wi-Fi"); a word written with hyphens also as the one joined word ("e-bike" in a text
    saying "ebike", but not in one saying only "bike": that may be the city bike)."""
    if _may_have(text, word) and re.search(
        rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE
    ):
        return True
    have = _block_terms(text)
    terms = set(_word_terms(word))
    for joined, parts in compounds(word):
        if stem(joined) in have:
            terms -= {stem(joined), *map(stem, parts)}
    return all(term in have or derived(term, have) for term in terms)


def derived(term: str, have: frozenset[str]) -> bool:
    """Whether a term of `have` and `term` are one word's derivations: one begins with the
    other, of `_STEM` letters or more ("cancel", "cancellation"; "encryption", "encrypt")."""
    if len(term) < _STEM:
        return False
    return any(h.startswith(term) or term.startswith(h) for h in _heads(have).get(term[:_STEM], ()))


@lru_cache(maxsize=1024)
def _heads(have: frozenset[str]) -> dict[str, list[str]]:
    """The terms of `have` by their first `_STEM` letters (a block's stems recur per request)."""
    out: dict[str, list[str]] = {}
    for term in have:
        if len(term) >= _STEM:
            out.setdefault(term[:_STEM], []).append(term)
    return out


def name_words(name: str) -> str:
    """A document's name as words ("kestrel-pricing.md" -> "kestrel pricing")."""
    stem_ = re.sub(r"\.[A-Za-z0-9]{1,8}$", "", name)
    return " ".join(re.sub(r"[-_]+", " ", stem_).split())


def uncovered(
    parts: Sequence[str],
    texts: Sequence[str],
    titled: Sequence[str] | None = None,
    owned: Sequence[set[str]] | None = None,
) -> dict[int, list[str]]:
    """The parts (by index) that no text covers, each with the words or names no text has.
    `titled`: the texts with their documents' names (`name_words`), where a name may be;
    `owned`: the parts' `own_words`, when the caller has them."""
    titled = texts if titled is None else titled
    out: dict[int, list[str]] = {}
    owned = own_words(parts) if owned is None else owned
    for i, (part, own) in enumerate(zip(parts, owned, strict=True)):
        lacking = [w for w in own if not any(has_word(t, w) for t in texts)]
        if own and len(lacking) * 2 >= len(own):
            # "... and is there a gym?": no block says "gym" (the words as the part writes them)
            out[i] = [w for w in read_question(part).subject if w.casefold() in lacking]
            continue
        unnamed = [n for n in read_question(part).names if not any(has_word(t, n) for t in titled)]
        if unnamed:
            out[i] = unnamed  # "the Basic plan": the other plans' prices answer something else
    return out


def left_out(
    question: str, texts: Sequence[str], titled: Sequence[str], max_parts: int
) -> list[tuple[str, list[str]]]:
    """The parts of a question asking several things (at most `max_parts`) that no text
    covers, each with what no text has, when another part is covered: an answer answers that
    one and says which it did not. A part asking nothing the others do not counts as neither."""
    parts = list(read_question(question).parts)
    if not 2 <= len(parts) <= max_parts:
        return []
    own = own_words(parts)
    gaps = uncovered(parts, texts, titled, own)
    if not gaps or all(i in gaps or not own[i] for i in range(len(parts))):
        return []
    return [(parts[i], missing) for i, missing in sorted(gaps.items())]


def _terms(text: str) -> set[str]:
    return {stem(t) for t in tokenize(text)}


def _may_have(text: str, word: str) -> bool:
    """False only where `word` cannot be in `text` case-insensitively: both ASCII, and the
    lowered word no part of the lowered text. `re`'s case equivalences beyond ASCII (the long
    s, the Kelvin sign) need a character that is not ASCII, so those go to the regex. A
    question's words absent from every block each scanned every block with a regex (eight
    parts of such words: ~100 ms of CPU)."""
    if not (word.isascii() and text.isascii()):
        return True
    return word.lower() in _lowered(text)


@lru_cache(maxsize=256)
def _lowered(text: str) -> str:
    return text.lower()


@lru_cache(maxsize=4096)
def _word_terms(word: str) -> frozenset[str]:
    return frozenset(_terms(word))


@lru_cache(maxsize=4096)
def _block_terms(text: str) -> frozenset[str]:
    return frozenset(_terms(text))
