"""One word in the place of the cited span's word, between the same two words ("work email" for
"school email", "the next month" for "the current month"): a word no cited block writes stands
for the span's only when it is the same word, an inflection of it or a listed synonym
(`language/thesaurus.py`, WordNet). Issue 27's `novel_word`; MiniLM's word similarity does not
tell a synonym from a substitution.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from ..language.opposites import unit_form
from ..language.terms import stem
from ..language.thesaurus import lemmas, synonymous
from ..language.wordclass import noun_not_verb_or_adjective
from ..text import STOP_WORDS
from .support import Span, replaced

__all__ = ["swapped"]

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.,:]\d+)*")
_END = re.compile(r"[.!?](?:\s|$)|\n")


def swapped(
    text: str,
    span: Span,
    cited: Sequence[Span],
    issued: Callable[[], frozenset[str]] | None = None,
) -> str:
    """Why a modifier of the clause `text`, or a noun another issued block writes (`issued()`:
    every block's words), stands where `span` writes another ("" if none does); `cited` are the
    statements of the blocks the clause cites."""
    written = list(_TOKEN.finditer(text))
    mine = [m.group().lower() for m in written]
    if len(mine) < 3:
        return ""
    home = max(_statements(span.lowered), key=lambda s: len({m.group() for m in s} & set(mine)))
    theirs = [m.group() for m in home]
    # One word for one, before the same word; after the same word or where both begin.
    for i1, j1 in replaced(mine, theirs, most=1):
        i2, j2 = i1 + 1, j1 + 1
        if i1 == 0 or j1 == 0:
            continue  # between the same two words: a sentence's first word has one neighbour
        new, old = mine[i1], theirs[j1]
        before = mine[i1 - 1] if i1 else ""
        # A noun of another issued block is that block's; one no block writes may be a synonym
        # WordNet does not list ("user" for "customer"), as a modifier's may not.
        headed = _headed(mine, theirs, i1, j1) and issued is not None and _key(new) in issued()
        if i2 == len(mine) or j2 == len(theirs):
            if not headed:
                continue  # a last word is a modifier of nothing
        elif not (
            headed
            or (
                _modifies(text, written[i1], written[i2])
                and _modifies(span.lowered, home[j1], home[j2])
            )
            or _closes(text, written, i1, span.lowered, home, j1)
        ):
            continue
        if not _judged(new, old, before) or (i1 > 0 and written[i1].group()[:1].isupper()):
            continue  # a capitalised word past the first is a name: the name checks' to judge
        if i2 < len(mine) and mine[i2][0].isdigit() and (_verb(new) or _verb(old)):
            continue  # "for coffee use 18 to 24": a verb before its number
        if _written(new, span, cited) or synonymous(new, old):
            continue
        return f"{new!r} stands where the span says {old!r} and is no synonym of it"
    return ""


# What stands before a verb, not before a modifier ("you see", "do not use", "to pick").
_BEFORE_VERB = frozenset(
    "i you we they he she it not to can cannot could will would should must may might do does "
    "did please".split()
)


_HOW_MANY = frozenset(
    "several multiple many numerous various few lots plenty countless most all each every any "
    "both none much little more less".split()
)
_OPENS_PHRASE = frozenset(
    "the a an this that these those your our their its my his her each every any some another "
    "no all both either neither of for from in on at by with without to into onto per via".split()
)


def _modifies(text: str, word: re.Match[str], head: re.Match[str]) -> bool:
    """Whether `word` stands right before `head` (nothing but spaces or a hyphen between),
    and `head` is a word or a number of the noun phrase, no function word."""
    if text[word.end() : head.start()].strip(" -"):
        return False
    following = head.group().lower()
    return following[0].isdigit() or following not in STOP_WORDS


# What opens a noun phrase whose head noun a punctuation mark then closes ("another device,").
_DETERMINERS = frozenset(
    "the a an this that these those your our their its my his her each every any some another "
    "no both either neither other same".split()
)


def _closes(
    text: str,
    written: Sequence[re.Match[str]],
    i: int,
    their_text: str,
    theirs: Sequence[re.Match[str]],
    j: int,
) -> bool:
    """Whether the words at `i` and `j` are both the head noun of a phrase a determiner opens
    and the same punctuation mark closes ("another system," for "another device,")."""
    if j + 1 >= len(theirs) or i + 1 >= len(written):
        return False
    mark = text[written[i].end() : written[i + 1].start()].strip()
    if (
        mark not in (",", ";", ":")
        or their_text[theirs[j].end() : theirs[j + 1].start()].strip() != mark
    ):
        return False
    if written[i - 1].group().lower() not in _DETERMINERS:
        return False
    return noun_not_verb_or_adjective(written[i].group().lower()) and noun_not_verb_or_adjective(
        theirs[j].group().lower()
    )


def _headed(mine: Sequence[str], theirs: Sequence[str], i: int, j: int) -> bool:
    """Whether the words at `i` and `j` are both nouns and nothing else, after the same word
    opening a noun phrase or qualifying its head ("for children other than" as "for health
    other than", "per room and night" as "... and door", "a full flight" as "a full violin"): a
    noun's place, where no verb is reworded."""
    before = mine[i - 1]
    if before != theirs[j - 1]:
        return False
    if before not in _OPENS_PHRASE | _COORDINATING and not _can_qualify(before):
        return False
    return noun_not_verb_or_adjective(mine[i]) and noun_not_verb_or_adjective(theirs[j])


@lru_cache(maxsize=8192)
def _can_qualify(word: str) -> bool:
    """Whether `word` can be an adjective ("a full flight", "one small personal item")."""
    import lemminflect

    return "ADJ" in lemminflect.getAllLemmas(word)


_COORDINATING = frozenset(("and", "or"))


def _key(word: str) -> str:
    """`word` as the span's words are keyed (gate/support.py)."""
    return unit_form(stem(word.removesuffix("'s")))


@lru_cache(maxsize=8192)
def _judged(new: str, old: str, before: str) -> bool:
    """Whether the pair is this check's: modifiers (adjectives, nouns before a noun), no
    numbers (the number checks'), no verb ("you see smoke": the overlap's and the semantic
    stage's to judge a predicate reworded)."""
    if new[0].isdigit() or old[0].isdigit() or new in STOP_WORDS or before in _BEFORE_VERB:
        return False
    if new in _HOW_MANY or old in _HOW_MANY:
        return False  # "several" for "multiple": the quantifier checks' to judge
    if not (_nominal(new) and _nominal(old)) or _verb(new):
        return False  # a word that can be a verb ("present", "spare") may be a reworded predicate
    if _participle(new) and _participle(old):
        return False  # "an assigned manager" for "a dedicated manager": a verb for a verb
    # Two words that can be verbs ("Lumen Notes keeps data" for "stores data") are modifiers
    # only where a noun phrase opens: after a determiner, a preposition or an adjective.
    return not (_verb(new) and _verb(old)) or before in _OPENS_PHRASE or _adjective(before)


@lru_cache(maxsize=8192)
def _verb(word: str) -> bool:
    import lemminflect

    return "VERB" in lemminflect.getAllLemmas(word)


@lru_cache(maxsize=8192)
def _adjective(word: str) -> bool:
    import lemminflect

    found = lemminflect.getAllLemmas(word)
    return "ADJ" in found and "VERB" not in found


@lru_cache(maxsize=8192)
def _nominal(word: str) -> bool:
    """Whether `word` can be an adjective, a noun or a participle (a modifier's place: "a
    printed pass")."""
    import lemminflect

    return bool({"ADJ", "NOUN"} & set(lemminflect.getAllLemmas(word))) or _participle(word)


@lru_cache(maxsize=8192)
def _participle(word: str) -> bool:
    import lemminflect

    verbs = lemminflect.getAllLemmas(word).get("VERB", ())
    return any(word in lemminflect.getInflection(v, tag="VBN") for v in verbs)


def _statements(text: str) -> list[list[re.Match[str]]]:
    """The words of each statement of a span (of two statements, one is restated)."""
    cuts = [0, *(m.end() for m in _END.finditer(text)), len(text)]
    parts = [list(_TOKEN.finditer(text, a, b)) for a, b in itertools.pairwise(cuts)]
    return [p for p in parts if p] or [[]]


def _written(word: str, span: Span, cited: Sequence[Span]) -> bool:
    """Whether a cited block writes `word` or an inflection of it (then it is that block's
    word, for the other checks to place)."""
    mine = lemmas(word)
    return any(mine & _lemmas_of(s.lowered) for s in (span, *cited))


@lru_cache(maxsize=4096)
def _lemmas_of(text: str) -> frozenset[str]:
    return frozenset().union(*(lemmas(t) for t in _TOKEN.findall(text) if not t[0].isdigit()))
