"""What a question asks about: the nouns heading its noun phrases ("my dog", "a dental crown",
"by cheque", "the graduation ceremony"), not the words saying how it asks ("turn on", "reaches",
"right now"). English only: a phrase is what follows a determiner, a possessive or a
preposition, read with the dictionary's parts of speech (lemminflect, loaded by the gate).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..text import STOP_WORDS
from .asking import asked

__all__ = ["focus_words", "noun_phrases"]

_DETERMINERS = frozenset(
    "a an the my your our their his her its this that these those any some each every no"
    " another".split()
)
_OPENS = _DETERMINERS | frozenset(
    "of for in on at from with by about into onto without per during after before via".split()
)
# Nouns that say how a question asks or what it wants back, not what it is about.
_VAGUE = frozenset(
    "problem problems issue issues tips advice information info details detail question questions"
    " option options matter case idea reason kind type sort lot bit part place way ways thing"
    " things something anything morning afternoon evening night weekend end start".split()
)
_WORD = re.compile(r"[^\W\d_][\w'-]*")
_LONGEST = 4  # words of a phrase read after its opening word


@lru_cache(maxsize=2048)
def focus_words(asking: str) -> tuple[str, ...]:
    """The head nouns of `asking`'s noun phrases, and the words before them that can only be
    nouns ("penalty" of "the penalty fare"), as written, each once, in order; of a sentence
    telling a situation before it asks, the asking clause's."""
    out: list[str] = []
    for phrase in noun_phrases(asking):
        head = phrase[-1]
        nouns = {"NOUN", "PROPN"}
        picked = [head] + [w for w in phrase[:-1] if _kinds(w.casefold()) <= nouns]
        for word in picked:
            lowered = word.casefold()
            if len(lowered) >= 3 and lowered not in _VAGUE and word not in out:
                out.append(word)
    return tuple(out)


@lru_cache(maxsize=2048)
def noun_phrases(asking: str) -> tuple[tuple[str, ...], ...]:
    """`asking`'s noun phrases, each its words up to and with its head noun ("the incubation
    period" -> ("incubation", "period")), as written; of a sentence telling a situation
    before it asks, the asking clause's."""
    words = _WORD.findall(asked(asking))
    low = [w.casefold() for w in words]
    out: list[tuple[str, ...]] = []
    i = 0
    while i < len(words):
        if low[i] not in _OPENS:
            i += 1
            continue
        phrase: list[str] = []
        j = i + 1
        while j < len(words) and len(phrase) < _LONGEST:
            kinds = _kinds(low[j])
            if low[j] in _OPENS or low[j] in STOP_WORDS:
                break
            if kinds and not kinds & {"NOUN", "PROPN", "ADJ"}:
                break
            after = low[j + 1] if j + 1 < len(words) else ""
            if phrase and "VERB" in kinds and after in _DETERMINERS:
                break  # "a refund reaches my card": a verb taking its object
            phrase.append(words[j])
            j += 1
        heads = [k for k, w in enumerate(phrase) if _nounish(w)]
        if heads:
            out.append(tuple(phrase[: heads[-1] + 1]))
        i = max(j, i + 1)
    return tuple(out)


def _nounish(word: str) -> bool:
    """A word the dictionary lacks (a name) or has as a noun."""
    kinds = _kinds(word.casefold())
    return not kinds or bool(kinds & {"NOUN", "PROPN"})


@lru_cache(maxsize=8192)
def _kinds(word: str) -> frozenset[str]:
    import lemminflect  # loaded by the gate already (terms.lemma_keys)

    return frozenset(lemminflect.getAllLemmas(word))
