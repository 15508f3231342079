"""Who does what to whom, of how many, how surely: a clause that keeps the span's words but
trades the places of its subject and object around their verb ("Live chat support gets Team
customers" of "Team customers get live chat support"), says "some" or "most" of what the span
says of all, or makes certain ("will") what the span says is possible ("can").

Structure only: the clause's and the span's statement's words in order, a verb both write
once, closed classes of English.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from functools import lru_cache

from ..language.quantities import Quantity, canonical, scan
from ..text import STOP_WORDS

__all__ = ["roles"]

_TOKEN = re.compile(r"[a-z0-9][a-z0-9'’-]*")
_END = re.compile(r"[.!?](?:\s|$)|\n")
_BE = frozenset("is are was were be been being get gets got".split())
_SOME = frozenset("some most many several few".split())
_ALL = frozenset("all every each".split())
_CERTAIN = re.compile(r"\bwill\b(?!\s+not\b)|\bwon't\b")
_POSSIBLE = re.compile(r"\b(?:can|could|may|might)\b")


def roles(lowered: str, span_lowered: str, span_quantities: Sequence[Quantity] = ()) -> str:
    """Why the clause (`lowered`) says of others, of fewer or more surely what the span's
    statement (`span_lowered`, its `span_quantities`) says ("" if it does not)."""
    mine = _TOKEN.findall(lowered)
    theirs = max(
        (_TOKEN.findall(part) for part in _statements(span_lowered)),
        key=lambda words: len(set(words) & set(mine)),
    )
    return (
        _swapped(mine, theirs)
        or _pronoun_after(mine, theirs)
        or _fewer(mine, theirs)
        or _surer(lowered, span_lowered)
        or _when(mine, theirs)
        or _unit_dropped(lowered, span_lowered, span_quantities)
    )


def _statements(text: str) -> list[str]:
    cuts = [0, *(m.end() for m in _END.finditer(text)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(cuts) if text[a:b].strip()]


def _swapped(mine: Sequence[str], theirs: Sequence[str]) -> str:
    """Subject and object traded around a verb both write once: what stands before the verb
    in the clause stands after it in the span, and some of what stands before it in the span
    stands after it in the clause. A passive ("is reviewed by") trades them faithfully."""
    for i, verb in enumerate(mine):
        if not _verb(verb) or mine.count(verb) != 1:
            continue
        same = [j for j, t in enumerate(theirs) if _lemmas(t) & _lemmas(verb) and _verb(t)]
        if len(same) != 1:
            continue
        j = same[0]
        if _passive(mine, i) or _passive(theirs, j):
            continue  # a passive, either side: its object is the other's subject
        before, after = _content(mine[:i]), _content(mine[i + 1 :])
        span_before, span_after = _content(theirs[:j]), _content(theirs[j + 1 :])
        if not before or not after or not span_before or before & span_before:
            continue
        if before <= span_after and after & span_before:
            mine_said, theirs_said = " ".join(sorted(before)), " ".join(sorted(span_before))
            return f"{mine_said!r} and {theirs_said!r} trade places around {verb!r}"
    return ""


def _pronoun_after(mine: Sequence[str], theirs: Sequence[str]) -> str:
    """A subject pronoun the span writes before its verb ("We send a reminder", "You get a
    code") written after that verb in the clause ("A reminder send we", "A code get you"): the
    verb's object made its subject. An auxiliary's inversion ("can you") is no verb here."""
    said = {
        (p, v)
        for p, v in itertools.pairwise(theirs)
        if p in _PRONOUNS and v not in _AUXILIARIES and _verb(v)
    }
    if not said:
        return ""
    written = set(itertools.pairwise(mine))
    for v, p in itertools.pairwise(mine):
        if (p, v) in said and (p, v) not in written:
            return f"{p!r} stands after {v!r}, where the span says {p!r} {v!r}"
    return ""


_AUXILIARIES = frozenset(
    "can could will would shall should may might must do does did is are was were have has had "
    "am be been".split()
)


def _passive(words: Sequence[str], i: int) -> bool:
    """Whether the verb at `i` is a passive's ("is covered", "not covered by")."""
    before = [w for w in words[max(0, i - 3) : i] if w not in ("not", "also", "never")]
    return bool(before and before[-1] in _BE) or "by" in words[i + 1 :]


def _fewer(mine: Sequence[str], theirs: Sequence[str]) -> str:
    """ "Some notes" or "most notes" where the span says "all notes": a claim of all made of
    part (which says that the rest are not)."""
    for i, word in enumerate(mine[:-1]):
        if word not in _SOME or (i and mine[i - 1] == "not"):
            continue
        noun = mine[i + 1]
        if noun in STOP_WORDS:
            continue  # "some of the ...": a part named, not a claim of part of all
        for j, said in enumerate(theirs[:-1]):
            if said in _ALL and noun in theirs[j + 1 : j + 3] and word not in theirs:
                return f"{word!r} {noun!r} where the span says {said!r}"
    return ""


def _surer(lowered: str, span_lowered: str) -> str:
    """ "will" where the span says "can" or "may" and never "will"."""
    said = _CERTAIN.search(lowered) and _POSSIBLE.search(span_lowered)
    if said and not _CERTAIN.search(span_lowered):  # the span's own "will" covers the clause's
        return "the clause says it will happen; the span says it can"
    return ""


def _content(words: Sequence[str]) -> frozenset[str]:
    """Content words, and the pronouns a subject may be ("It includes ...")."""
    return frozenset(
        w for w in words if (w not in STOP_WORDS or w in _PRONOUNS) and not w[0].isdigit()
    )


_PRONOUNS = frozenset("it they we you he she".split())
_THEN = re.compile(r"(?:after|before|since|until|till|from) (?:that|then|this)|by then")


_SIGNED = frozenset("%$€£¥")


def _unit_dropped(lowered: str, span_lowered: str, span_quantities: Sequence[Quantity]) -> str:
    """A number the span writes as a share or an amount, written bare before the word the span
    writes after it ("at 50 off" of "50% off"): the reader supplies a unit the span does not
    give. (A number at the clause's end, "by 40", is a cut, not a unit dropped.)"""
    if not span_quantities or not any(c.isdigit() for c in lowered):
        return ""
    signed = {
        (v, _next_word(span_lowered, q.span[1]))
        for q in span_quantities
        for v, unit in q.values
        if unit in _SIGNED
    }
    bare = {v for q in span_quantities for v, unit in q.values if unit is None}
    text = canonical(lowered)
    for quantity in scan(text)[0]:
        after = _next_word(text, quantity.span[1])
        for value, unit in quantity.values:
            if unit is None and value not in bare and after and (value, after) in signed:
                return f"{quantity.text!r} drops the unit the span writes it with"
    return ""


def _next_word(text: str, at: int) -> str:
    match = _TOKEN.match(text, len(text) - len(text[at:].lstrip()))
    return match.group() if match is not None and match.group()[0].isalpha() else ""


def _when(mine: Sequence[str], theirs: Sequence[str]) -> str:
    """An opening "After that", "Before then" the statement does not write: a time set by
    another statement ("After that they stay in the Trash for 30 days")."""
    opening = " ".join(mine[:2])
    if _THEN.fullmatch(opening) and opening not in " ".join(theirs):
        return f"{opening!r} sets a time the span does not"
    return ""


@lru_cache(maxsize=8192)
def _lemmas(word: str) -> frozenset[str]:
    import lemminflect

    return frozenset({word, *(v for vs in lemminflect.getAllLemmas(word).values() for v in vs)})


@lru_cache(maxsize=8192)
def _verb(word: str) -> bool:
    """A word that can be a finite verb ("gets", "has", "keep"); which one is the verb the
    places traded around it decide."""
    import lemminflect

    found = lemminflect.getAllLemmas(word)
    if word in ("has", "have", "had"):
        return True
    forms = {
        f
        for v in found.get("VERB", ())
        for tag in ("VBZ", "VBD", "VBP")
        for f in lemminflect.getInflection(v, tag=tag)
    }
    return word in forms
