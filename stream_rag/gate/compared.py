"""Comparisons no cited block makes: a sentence with a comparative or a superlative ("earlier",
"faster", "more often") that none of its cited blocks writes, standing alone at the end of a
clause or before "than", claims an ordering they do not state ("Refunds arrive within 7 days
earlier."), however close its other words are. A comparative before the word it qualifies
("the younger sister", "a larger payment") or a verb ("later moved") is left to the overlap:
real answers write those of what their sources say in other words.

English closed classes and the inflection tables of lemminflect (a comparative or superlative
form of an adjective or adverb), never a knowledge base's words. A bound on a number ("more
than 30", "60 minutes or more", "at least") is the binding checks' (gate/binding.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .reading import reading

__all__ = ["compared"]

_WORD = re.compile(r"[^\W\d_]+")
_ALWAYS = frozenset("more less fewer most least".split())
# Forms lemminflect lists as comparatives that compare nothing in use ("further details",
# "the upper deck", "the latter") or are a word of their own.
_NOT_COMPARING = frozenset(
    "further farther rather other latter former upper inner outer utter elder eldest "
    "lesser never ever either whether over under after number stranger gamer tanner wanner "
    "slacker".split()
)
# Words of one sense: either vouches for the other.
_SAME = tuple(
    frozenset(group.split())
    for group in ("earlier sooner", "faster quicker", "more greater", "less fewer", "cheaper lower")
)
# Where a comparison stands alone: the clause ends after it (an adverb between, "more often"),
# or "than" follows it.
_ALONE = re.compile(r"(?:\s+(?P<adverb>often|[^\W\d_]+ly))?\s*(?:[.,;:!?)]|$)|\s+than\b")
_BOUND_AFTER = re.compile(r"\s+than\s+(?:[$€£]?\d|one|two|three|four|five|ten|a |an )", re.I)
_BOUND_BEFORE = re.compile(r"(?:\d[^.;,!?]{0,24}\bor|\bat|\bat the|\bno)\s+$", re.I)
# "12 euros more a night", "12 more euros": an amount said to be over or under another, an
# ordering no block states; "more" is a stop word, so the overlap never sees it.
_AFTER_AMOUNT = re.compile(r"\d%?\s*(?:(?!(?:and|or|to|no)\b)[^\W\d_]+\s+)?$")
_AMOUNTED = frozenset({"more", "less", "fewer"})


@lru_cache(maxsize=8192)
def _comparative(word: str) -> bool:
    """Whether `word` is a comparative or superlative form of an adjective or adverb."""
    if word in _ALWAYS:
        return True
    if word in _NOT_COMPARING or len(word) < 4 or not word.endswith(("er", "est")):
        return False
    import lemminflect

    for pos, lemmas in lemminflect.getAllLemmas(word).items():
        if pos not in ("ADJ", "ADV"):
            continue
        for lemma in lemmas:
            if lemma == word:
                continue
            for tag in ("JJR", "JJS", "RBR", "RBS"):
                if word in lemminflect.getInflection(lemma, tag=tag):
                    return True
    return False


def compared(sentence: str, evidence: Iterable[str]) -> str:
    """Why `sentence` compares where no text of `evidence` does ("" if it does not)."""
    folded = sentence.casefold()
    found = [m for m in _WORD.finditer(folded) if _comparative(m.group())]
    if not found:
        return ""
    evidence = list(evidence)
    used = frozenset().union(*(reading(text).folded_words for text in evidence))
    for match in found:
        word = match.group()
        alone = _ALONE.match(folded, match.end())
        amount = word in _AMOUNTED and _AFTER_AMOUNT.search(
            folded[max(0, match.start() - 40) : match.start()]
        )
        if alone is None and not amount:
            continue
        adverb = alone.group("adverb") if alone is not None else None
        if adverb is not None:
            # "more often": the block's "or more" does not vouch for it, its phrase does
            if any(re.search(rf"\b{word}\s+{adverb}\b", text.casefold()) for text in evidence):
                continue
        elif word in used or any(word in group and group & used for group in _SAME):
            continue
        if _BOUND_AFTER.match(folded, match.end()) or _BOUND_BEFORE.search(folded[: match.start()]):
            continue  # a bound on a number, held by the binding checks
        return f"says {word!r}, a comparison no cited block makes"
    return ""
