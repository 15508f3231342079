"""A word of a clause put in the place of its span's (issue 27): a name not there, names swapped
or doubled, a range's ends from two ranges, an opposite or another member of a closed class (of
a glue word too, "with" for "without", which the binding checks ask), a word of another
statement, two anchors the other way round. Read from the clause's words
aligned to the span's; the first found is the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING

from ..language.opposites import closed_class, counterparts, opposite
from .support import Span, Word, align, replaced

if TYPE_CHECKING:
    from .claimcheck import Read, Rules

__all__ = ["glue_opposite", "misplaced", "part_words"]


# Where a part of a clause ends, for the words a number or a name is stated with.
_PART = re.compile(
    r"[;:()\u2013\u2014]|[,.!?](?=\s)|\s(?:and|but|or|while|whereas|which|who|although|though"
    r"|because|when|where|with|after|before|until|since)(?=\s)"
)


def part_words(text: str, words: Sequence[Word], at: tuple[int, int]) -> list[Word]:
    """The words of the part of the clause holding position `at`."""
    start, end = 0, len(text)
    for match in _PART.finditer(text, 0, at[0]):
        start = match.end()
    after = _PART.search(text, at[1])
    if after is not None:
        end = after.start()
    return [w for w in words if w.start >= start and w.end <= end]


def misplaced(
    read: Read,
    span: Span,
    where: str,
    candidates: Sequence[Span],
    weight: Callable[[str], float],
    names: Callable[[str], bool],
    rules: Rules,
) -> str:
    """A word put in the place of the span's: a name not there (strict: not in the span or
    the statement its "It" names; balanced: in no cited block), names swapped or doubled, a
    range's ends from two ranges, its opposite, another of a closed class."""
    have = span.keys | span.context
    written = {w.key for w in read.words}
    # The span's own names the clause leaves out, with the words next to them: a name of the
    # clause written between the same words stands in their place ("does not leave the
    # Frankfurt" against "does not leave the European Union").
    left_out = [
        _beside(span.words, j) for j, w in enumerate(span.words) if w.name and w.key not in written
    ]
    cited = frozenset().union(*(s.keys for s in candidates))
    for k, word in enumerate(read.words):
        if any(q.span[0] <= word.start < q.span[1] for q in read.quantities):
            continue  # "May" of a date: the date is checked as a quantity
        if k and read.words[k - 1].number:
            continue  # a unit ("20 GB"), checked with its number
        if (word.name or (word.capital and names(word.key))) and word.key not in have:
            # Named by a cited block elsewhere (balanced: by any issued block), where it takes
            # no name's place in the span: evidence spread over statements.
            issued = not rules.names_in_span and names(word.key)
            displaced = any(_meets(_beside(read.words, k), near) for near in left_out)
            if (word.key in cited or issued) and not displaced:
                continue
            near = part_words(read.text, read.words, (word.start, word.end))
            keys = [w.key for w in near if not w.number]
            local = None
            if len(set(keys) - {word.key}) >= 2:  # a part that says something of the name
                local, _ = align(keys, (), candidates, weight)
            if local is None or word.key not in local.keys | local.context:
                return f"the name {word.key!r} is not in {where}"
    if (ranged := _range(read, span)) is not None:
        return f"{ranged[0][1:]} to {ranged[1][1:]} is no range of {where}"
    if (doubled := _doubled(read.words, span)) is not None:
        return f"{doubled[0]!r} is written where {where} has {doubled[1]!r}"
    if (took := _took_place(read.words, span)) is not None:
        return f"{took[0]!r} stands where {where} has {took[1]!r}"
    if (named := referent(read.words, span)) is not None:
        return f"{named!r} is not what {where} refers to"
    if (moved := transplanted(read.words, read.text, span, cited)) is not None:
        return f"{moved[0]!r} stands where {where} has {moved[1]!r}"
    if (swapped := _transposed(read.words, span)) is not None:
        return f"{swapped[0]!r} and {swapped[1]!r} are the other way round in {where}"
    mine = [w.key for w in read.words]
    theirs = [w.key for w in span.words]
    for i, j in replaced(mine, theirs):
        a, b = mine[i], theirs[j]
        if a == b or read.words[i].number or span.words[j].number:
            continue
        if opposite(a, b):
            return f"{read.words[i].key!r} says the opposite of {b!r} in {where}"
        if closed_class(a, b):
            return f"{a!r} stands where {where} says {b!r}"
        if b in mine:
            if _anchor(read.words[i]) and not _listed(span, a, b):
                return f"{a!r} and {b!r} trade places against {where}"
            continue  # a list written in another order
        if read.words[i].name or names(a) or span.words[j].name:
            return f"the name {a!r} stands where {where} says {b!r}"
    return ""


_LIST_GLUE = re.compile(r"[\s,;/&]*(?:\b(?:and|or|nor)\b)?[\s,;/&]*", re.IGNORECASE)


_NAME = re.compile(r"\b[A-Z][\w-]*")


def _anchor(word: Word) -> bool:
    return word.number or word.name or word.capital


def _meets(a: tuple[str | None, str | None], b: tuple[str | None, str | None]) -> bool:
    return (a[0] is not None and a[0] == b[0]) or (a[1] is not None and a[1] == b[1])


def _marked(word: Word, theirs: frozenset[str]) -> bool:
    """A capitalised word, or one with an opposite or a closed-class sibling in `theirs`."""
    return word.capital or not counterparts(word.key).isdisjoint(theirs)


def _took_place(words: Sequence[Word], span: Span) -> tuple[str, str] | None:
    """A name, a member of a closed class or a word with an opposite in the span, written where
    the span has another: the words next to it in the clause are next to none of its own
    places in the span, but next to the other's ("plain OneNote folders" against "plain
    Markdown folders and from OneNote"; "is open at weekends" against "is closed at
    weekends"). Names may trade places within a list."""
    theirs = span.words
    mine = [w.key for w in words]
    their_keys = frozenset(w.key for w in theirs)
    named = frozenset(w.key for w in theirs if w.capital)
    for i, word in enumerate(words):
        if word.number or not _marked(word, their_keys):
            continue
        near = _beside(words, i)
        if any(_meets(near, _beside(theirs, k)) for k, w in enumerate(theirs) if w.key == word.key):
            continue
        for k, other in enumerate(theirs):
            if other.key == word.key or not _meets(near, _beside(theirs, k)):
                continue
            if closed_class(word.key, other.key) or opposite(word.key, other.key):
                return word.key, other.key
            if (
                word.capital
                and other.capital
                and other.key in mine
                and word.key in span.keys
                and not _listed(span, word.key, other.key)
            ):
                return word.key, other.key
            if word.name and other.name and other.key not in mine and word.key not in named:
                # A name the span writes nowhere as one, where the span has a name the clause
                # leaves out ("sent with Price" against "sent with Secure Plus", "price" a
                # common noun elsewhere in the span): the span's name replaced. A list's item
                # left out ("to Vitalis" of "to Medicura and Vitalis") is the span's own.
                return word.key, other.key
    return None


_RANGE_GLUE = re.compile(r"\s*(?:to|-|–|—|and|through|until|till)\s*", re.IGNORECASE)
# "and" joins a range's ends only after "between" ("between 5 and 10 days"); "under 12 and 11
# euros for adults" joins two statements of a list.
_BETWEEN = re.compile(r"\bbetween\s+[$€£]?$", re.IGNORECASE)
_AND = re.compile(r"\s*and\s*", re.IGNORECASE)


def _range(read: Read, span: Span) -> tuple[str, str] | None:
    """Two numbers written next to each other ("30 to 60 minutes") that the span does not
    write next to each other: a range's ends taken from two ranges."""
    theirs = {frozenset((x.key, y.key)) for x, y in pairwise(span.words) if x.number and y.number}
    for x, y in pairwise(read.words):
        pair = frozenset((x.key, y.key))
        between = read.text[x.end : y.start]
        glue = _RANGE_GLUE.fullmatch(between) is not None
        if (
            glue
            and _AND.fullmatch(between)
            and not _BETWEEN.search(read.text[max(0, x.start - 40) : x.start])
        ):
            glue = False
        both = x.number and y.number and len(pair) == 2 and glue
        if both and pair not in theirs and pair <= span.keys_numbers:
            return x.key, y.key
    return None


def _doubled(words: Sequence[Word], span: Span) -> tuple[str, str] | None:
    """A name written more often than the span writes it, where a name of the span is missing
    ("Larkspur Central, Larkspur Central and Ashgrove" against "..., Millbrook and ...")."""
    mine = [w.key for w in words if w.capital]
    theirs = [w.key for w in span.words if w.capital]
    missing = [k for k in theirs if k not in mine and not _NOT_NAMES.fullmatch(k)]
    if not missing:
        return None
    for key in dict.fromkeys(mine):
        if mine.count(key) > theirs.count(key) >= 1:
            return key, missing[0]
    return None


_NOT_NAMES = re.compile(r"[a-z]{1,2}")


def _listed(span: Span, a: str, b: str) -> bool:
    """Whether `a` and `b` are items of one list in the span (only list glue and other names
    between them)."""
    at = {w.key: w for w in span.words}
    x, y = at.get(a), at.get(b)
    if x is None or y is None:
        return True  # nothing to hold them to
    first, second = (x, y) if x.start < y.start else (y, x)
    between = _NAME.sub("", span.text[first.end : second.start])
    return _LIST_GLUE.fullmatch(between) is not None


def _transposed(words: Sequence[Word], span: Span) -> tuple[str, str] | None:
    """Two names or numbers next to each other in the span (nothing but glue between them,
    "Settings > Account", "Monday to Friday") written the other way round, next to each other,
    in the clause; a list ("Free, Pro and Team") may be written in any order."""
    theirs = span.words
    pairs = set()
    for x, y in pairwise(theirs):
        glue = span.text[x.end : y.start]
        if _anchor(x) and _anchor(y) and x.key != y.key and not _LIST_GLUE.fullmatch(glue):
            pairs.add((x.key, y.key))
    if not pairs:
        return None
    for x, y in pairwise(words):
        if (y.key, x.key) in pairs and (x.key, y.key) not in pairs:
            return x.key, y.key
    return None


# -- a word of another statement put in the span's place ---------------------------------------


def _beside(words: Sequence[Word], i: int, text: str = "") -> tuple[str | None, str | None]:
    """The keys of the words next to word i; None at an edge (a statement's end in `text`)."""
    before = words[i - 1].key if i > 0 else None
    after = words[i + 1].key if i + 1 < len(words) else None
    if text and before is not None and _END.search(text, words[i - 1].end, words[i].start):
        before = None
    if text and after is not None and _END.search(text, words[i].end, words[i + 1].start):
        after = None
    return before, after


_END = re.compile(r"[.!?]\s|\n")


def transplanted(
    words: Sequence[Word], text: str, span: Span, cited: frozenset[str]
) -> tuple[str, str] | None:
    """A word of the clause that a cited block says elsewhere, written between the words the
    span writes another word between ("Visitors park for free" against "Residents park for
    free", where visitors pay): the other statement's subject or object moved into this one.
    A word no cited block has (a synonym) is left to the overlap."""
    mine = {w.key for w in words}
    theirs = span.words
    for i, word in enumerate(words):
        if word.number or word.name or word.key not in cited or word.key in span.context:
            continue
        if not _noun(text[word.start : word.end]):
            continue  # a verb or an adjective of the block elsewhere may be a synonym
        near = _beside(words, i)
        places = [k for k, w in enumerate(theirs) if w.key == word.key]
        # Its own place: a neighbour in common, or the same edge (both open the statement).
        own = (_beside(theirs, k, span.text) for k in places)
        if any(_meets(near, b) or _edge(near, b) for b in own):
            continue
        for k, other in enumerate(theirs):
            if other.key == word.key or other.number or other.key in mine or other.name:
                continue
            if other.key[:4] == word.key[:4]:
                continue  # "metres" for "meters": one word spelt two ways
            place = _beside(theirs, k, span.text)
            # Between the same two words (or the same word and the statement's edge).
            if near == place and near != (None, None) and _noun(span.text[other.start : other.end]):
                return word.key, other.key
    return None


@lru_cache(maxsize=8192)
def _noun(word: str) -> bool:
    """Whether `word` is only ever a noun (visitors, residents; not download, erased)."""
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word.lower())
    return "NOUN" in lemmas and not {"VERB", "ADJ", "ADV", "AUX"} & set(lemmas)


def referent(words: Sequence[Word], span: Span) -> str | None:
    """A subject the clause names where the span opens with "It", "They", "This"... (whose
    words are the statement before's): "Team includes 20 GB" against "It includes ... 20 GB",
    said of the Pro plan. A name the clause writes before the words it shares with the span
    must be one the statement before names."""
    if not span.context or not span.words:
        return None
    said = [w.key for w in words if not w.capital and not w.number]
    if len(said) < 2 or sum(k in span.keys for k in said) < 0.6 * len(said):
        return None  # not a restatement of the span: the overlap judges it
    # Where the clause starts saying what the span says: its first word the span has.
    at = next((i for i, w in enumerate(words) if w.key in span.keys), None)
    if at is None:
        return None
    for word in words[:at]:
        if word.capital and word.key not in span.context:
            return word.key
    return None


def _edge(a: tuple[str | None, str | None], b: tuple[str | None, str | None]) -> bool:
    return (a[0] is None and b[0] is None) or (a[1] is None and b[1] is None)


# -- opposites among glue words -----------------------------------------------------------------

_GLUE_OPPOSITES = {
    frozenset(p.split())
    for p in (
        "with without",
        "same different",
        "in out",
        "on off",
        "up down",
        "all none",
        # "on no service except X" of "on every service except X": a universal made none.
        "every no",
        "all no",
        "each no",
        "within after",
        "within beyond",
        "before after",
        "until from",
        "until since",
        "least most",
        "more less",
        "more fewer",
        "over under",
        "above below",
        "same next",
        "next previous",
        "next last",
    )
}


_GLUE_WORDS = frozenset().union(*_GLUE_OPPOSITES)


_NOT = frozenset(("not", "cannot", "never", "can't", "won't", "don't", "doesn't", "isn't"))


def glue_opposite(mine: Sequence[str], theirs: Sequence[str]) -> str:
    """A word the overlap reads as glue put in the place of its opposite in the span ("with"
    for "without", "before" for "after", "no" for "any" after a negation)."""
    twice = "no" in mine and "any" in theirs and not _NOT.isdisjoint(mine)
    if not twice and (_GLUE_WORDS.isdisjoint(mine) or _GLUE_WORDS.isdisjoint(theirs)):
        return ""
    for i, j in replaced(mine, theirs):
        if frozenset((mine[i], theirs[j])) in _GLUE_OPPOSITES:
            return f"{mine[i]!r} stands where the span says {theirs[j]!r}"
        if (mine[i], theirs[j]) == ("no", "any") and not _NOT.isdisjoint(mine[:i]):
            # "cannot be given a permit of no kind" of "... of any kind": negated twice
            return "'no' stands where the span says 'any', after a negation"
    return ""
