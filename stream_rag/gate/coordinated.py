"""A word moved between two coordinated parts of one statement, no number involved (issue 27,
found in review): "The gym has heated pools and cold showers." does not say "The gym has cold
pools.", though every word of it is in the statement (parallel.py reads parts with a number).

The parts (cut at ";", ",", "and", "but", "or", "while", "whereas" and a statement's end) are
lined up word for word, next parts only: on the words they share ("staff parking ... north lot"
/ "visitor parking ... south lot"), else from where they meet and from their starts ("heated
pools" / "cold showers" after the shared "The gym has"; "Monthly plans ..." / "the current
month ..."). A clause fails when it writes one part's word where the other's stood (next to
one of its neighbours) and keeps another word of the other part whose counterpart it leaves
out, the two not joined by a coordinator in the clause: a mix of the two. One part restated
with the words they share ("The gym has cold showers", "open Tuesday from 9 am" of "open
Monday and Tuesday from 9 am"), both with words left out ("pools and showers"), or the span's
items listed ("Tobacco and alcohol"), pass.

Two more moves of one statement's words, numbers or not: what only one of two clauses joined
by "and"/"but"/";" says (each with a verb of its own) joined to what only the other says, the
rest of each left out ("Parking at the station is free." of "Parking at the station is 3 euros
a day, and free parking is available downtown."); and a word the statement writes only right
before one mention of a noun said of another mention, named by another modifier ("Adult
tickets are free." of "Children get a free ticket with every adult ticket sold online.");
and one word of the statement put in the place of another between the same words, the one it
replaced written nowhere in the clause ("Vans must have lights at each hydrant at night." of
"Vans must have lights at each corner at night and must not block a fire hydrant.").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from difflib import SequenceMatcher
from itertools import pairwise

from ..language.quantities import numerals
from ..language.statements import titled
from ..language.terms import stem
from ..language.wordclass import can_be_noun, known
from .support import Span, Word

__all__ = ["mixed_parts", "moved_in"]

_CUT = re.compile(r";|,\s|[.!?](?:\s|$)|\n|\s(?:and|but|or|while|whereas)\s", re.IGNORECASE)


def _cuts(text: str, start: int = 0, end: int | None = None) -> Iterator[re.Match[str]]:
    """Where `text` is cut into parts; a title's or a dotted abbreviation's full stop is none
    ('who goes by "Dr. Drum,"' is one part, as it is one statement)."""
    for m in _CUT.finditer(text, start, len(text) if end is None else end):
        if not (m.group()[0] == "." and titled(text, m.start())):
            yield m


def mixed_parts(text: str, words: Sequence[Word], span: Span) -> tuple[str, str] | None:
    """(the word the clause brought in, the word of its own part it left out) when the clause
    (`text`, its `words`) mixes two coordinated parts of `span`, else None."""
    mine_forms = _forms(text, words)
    written = frozenset(f for f in mine_forms if not f.startswith("#"))
    span_forms = _forms(span.text, span.words)
    for (mine, _, _), (theirs, their_text, _) in pairwise(_placed_parts(span, span_forms)):
        if any(k.startswith("#") for k in (*mine, *theirs)):
            continue  # a part with a number: gate/parallel.py reads it
        if _EXAMPLE.match(their_text):
            continue  # examples of the part before, not a part of their own ("most fees, e.g.
            # entry and parking": "Vouchers cover entry" is no mix)
        pairs = _pairs(mine, theirs)
        shared = set(mine) & set(theirs)
        pairs = [
            (x, y)
            for x, y in pairs
            if x != y and x not in shared and y not in shared and not (_counts(x) or _counts(y))
        ]
        # One pair traded ("cold" written, "heated" left out) and another kept as the first
        # part has it ("pools" written, "showers" left out), or the other way round; the word
        # brought in stands where the one left out stood, next to one of its neighbours.
        brought = [(x, y) for x, y in pairs if y in written and x not in written]
        kept = [(x, y) for x, y in pairs if x in written and y not in written]
        for x, y in brought:
            # Where `x` stood in its own part: a word the span writes in other parts too has
            # other neighbours there ("team controlling", "without control").
            if not _beside(mine_forms, y) & _beside(mine, x):
                continue
            # The kept word and the one brought in are one phrase of the clause, not two of its
            # own parts ("Tobacco and alcohol are not allowed" lists the span's items).
            if any(k != (x, y) and not _apart(text, words, mine_forms, k[0], y) for k in kept):
                return y, x
    return None


def moved_in(text: str, words: Sequence[Word], span: Span) -> tuple[str, str] | None:
    """(the noun moved, the span's noun whose place it took) when the clause writes a noun of
    its span where the span has another, the words on both sides the span's own, and the noun
    it replaced nowhere in the clause, else None. Verbs are left out: "allowed into the area"
    restates "allowed to enter the area"."""
    mine = [(f, w) for w, f in zip(words, _forms(text, words), strict=True) if not w.number]
    theirs = [(f, w) for w, f in zip(span.words, _forms(span.text, span.words), strict=True)]
    theirs = [(f, w) for f, w in theirs if not w.number]
    forms, span_forms = [f for f, _ in mine], [f for f, _ in theirs]
    for i in range(1, len(mine) - 1):
        new, near = forms[i], (forms[i - 1], forms[i + 1])
        if new not in span_forms or _counts(new) or not can_be_noun(_of(text, mine[i][1])):
            continue
        places = [
            j for j in range(1, len(theirs) - 1) if (span_forms[j - 1], span_forms[j + 1]) == near
        ]
        # Where the span writes the word itself, a neighbour in common: its own place.
        if not places or any(
            _meets(span_forms, j, near) for j, f in enumerate(span_forms) if f == new
        ):
            continue
        for j in places:
            was = span_forms[j]
            noun = can_be_noun(_of(span.text, theirs[j][1]))
            if was != new and was not in forms and not _counts(was) and noun:
                return new, was
    return None


def _of(text: str, word: Word) -> str:
    return text[word.start : word.end].lower()


def _meets(forms: Sequence[str], j: int, near: tuple[str, str]) -> bool:
    return (j > 0 and forms[j - 1] == near[0]) or (j + 1 < len(forms) and forms[j + 1] == near[1])


def _forms(text: str, words: Sequence[Word]) -> list[str]:
    """Each word's stem as written: "monthly" is not "month" here (its key reads it as the
    unit), a modifier of one part against the head noun of the other."""
    return [w.key if w.number else _form(text[w.start : w.end]) for w in words]


def _form(word: str) -> str:
    return stem(word.lower().replace("’", "'").removesuffix("'s"))


def _apart(text: str, words: Sequence[Word], forms: Sequence[str], a: str, b: str) -> bool:
    """Whether a coordinator or a comma stands between the words `a` and `b` of the clause."""
    at = dict(zip(forms, words, strict=True))
    if a not in at or b not in at:
        return True
    first, second = sorted((at[a], at[b]), key=lambda w: w.start)
    return next(_cuts(text, first.end, second.start), None) is not None


def _beside(forms: Sequence[str], form: str) -> set[str]:
    """The forms next to `form` wherever it stands in `forms`."""
    out = set()
    for i, f in enumerate(forms):
        if f == form:
            out |= {forms[j] for j in (i - 1, i + 1) if 0 <= j < len(forms)}
    return out


def _counts(key: str) -> bool:
    """A number written in words ("two", "five"): the number checks' to place."""
    return numerals(key) != key


def _pairs(mine: Sequence[str], theirs: Sequence[str]) -> list[tuple[str, str]]:
    """The words of two parts in the same place, lined up on the words they share, else from
    where the parts meet (the later, shorter part against the earlier one's last words)."""
    ops = SequenceMatcher(None, list(mine), list(theirs), autojunk=False).get_opcodes()
    if not any(tag == "equal" for tag, *_ in ops):
        # No word in common: the later part lines up with the earlier one's end (an elided
        # "The gym has") or, a clause of its own, with its start ("Monthly plans ..., but the
        # current month ...").
        n = min(len(mine), len(theirs))
        right = zip(mine[len(mine) - n :], theirs[:n], strict=True)
        return [*right, *zip(mine[:n], theirs[:n], strict=True)]
    out: list[tuple[str, str]] = []
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "replace":
            continue
        a, b = list(mine[i1:i2]), list(theirs[j1:j2])
        n = min(len(a), len(b))
        if k > 0 and ops[k - 1][0] == "equal":
            out += zip(a[:n], b[:n], strict=True)  # lined up after a shared word
        else:
            out += zip(a[len(a) - n :], b[len(b) - n :], strict=True)  # before one
    return out


def predicate_carried(
    text: str, words: Sequence[Word], span: Span, finite: Callable[[str], bool]
) -> tuple[str, str] | None:
    """(a word of the later clause, a word of the earlier) when the clause joins words only the
    earlier of two coordinated clauses of one sentence writes to words only the later writes,
    each clause's others left out ("Parking at the station is free." of "Parking at the station
    is 3 euros a day, and free parking is available downtown."); `finite` tells a verb."""
    forms = _forms(text, words)
    written = frozenset(forms)
    span_forms = _forms(span.text, span.words)
    placed = _placed_parts(span, span_forms)
    for (a, a_text, _), (b, b_text, cut) in pairwise(placed):
        if not _COORDINATOR.match(f"{cut} {b_text}".lstrip(" ,")) or _SENTENCE_END.search(cut):
            continue  # a comma (an apposition, a relative clause) or two statements
        if not (_verb(a_text, finite) and _verb(b_text, finite)):
            continue  # a part that borrows its verb from the other
        only_a, only_b = set(a) - set(b), set(b) - set(a)
        said_a, said_b = only_a & written, only_b & written
        if not (said_a and said_b and only_a - written and only_b - written):
            continue
        for x in sorted(said_b):
            for y in sorted(said_a):
                if not _apart(text, words, forms, x, y):
                    return _written(text, words, forms, x), _written(text, words, forms, y)
    return None


def _written(text: str, words: Sequence[Word], forms: Sequence[str], form: str) -> str:
    """The clause's word of that form, as written."""
    w = words[forms.index(form)]
    return text[w.start : w.end]


def modifier_carried(text: str, words: Sequence[Word], span: Span) -> tuple[str, str] | None:
    """(the modifier, the noun) when the clause says a word the span writes only before one
    mention of a noun of another mention, which another modifier names ("Adult tickets are
    free." of "Children get a free ticket with every adult ticket sold online.")."""
    forms = _forms(text, words)
    span_forms = _forms(span.text, span.words)
    for m2, h, noun in _adjacent(text, words, forms):
        if not can_be_noun(noun):
            continue  # names ("Dylan Lauren", "Ralph Lauren") are the name checks'
        mentions = [k for k, f in enumerate(span_forms) if f == h]
        mods = {k: _modifier(span.text, span.words, span_forms, k) for k in mentions}
        if len(mentions) < 2 or m2 not in mods.values():
            continue
        for m1 in sorted(set(forms) - {m2, h}):
            if not any(
                known(text[w.start : w.end].lower())
                for w, f in zip(words, forms, strict=True)
                if f == m1
            ):
                continue
            where = [j for j, f in enumerate(span_forms) if f == m1]
            # m1 stands in the span only right before mentions of the noun, m2 before another,
            # and the clause does not write m1 right before the noun.
            if (
                where
                and all(mods.get(j + 1) == m1 for j in where)
                and not _directly_before(text, words, forms, m1, h)
            ):
                return _written(text, words, forms, m1), _written(text, words, forms, h)
    return None


def _modifier(text: str, words: Sequence[Word], forms: Sequence[str], k: int) -> str:
    """The form of the word right before word `k` (only a space between), else ""."""
    if k == 0 or text[words[k - 1].end : words[k].start].strip():
        return ""
    return forms[k - 1]


def _adjacent(text: str, words: Sequence[Word], forms: Sequence[str]) -> list[tuple[str, str, str]]:
    """The forms of each two words written one right after the other, and the second as
    written."""
    return [
        (forms[k - 1], forms[k], text[words[k].start : words[k].end].lower())
        for k in range(1, len(words))
        if _modifier(text, words, forms, k)
    ]


def _directly_before(
    text: str, words: Sequence[Word], forms: Sequence[str], m: str, h: str
) -> bool:
    return any(
        forms[k - 1] == m and forms[k] == h and not text[words[k - 1].end : words[k].start].strip()
        for k in range(1, len(words))
    )


_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")
_EXAMPLE = re.compile(
    r"\s*(?:e\.\s?g\.|i\.\s?e\.|for example|for instance|such as|including|like|namely)(?:\W|$)",
    re.IGNORECASE,
)
# What joins two clauses as parts of one statement (a bare comma may open an apposition).
_COORDINATOR = re.compile(r";|(?:and|but|while|whereas)\b", re.IGNORECASE)
_TOKEN = re.compile(r"[a-z][a-z']*")


def _verb(text: str, finite: Callable[[str], bool]) -> bool:
    """Whether the part has a verb of its own: an auxiliary, or a finite form no noun shares
    ("Getty Images Lancôme" has none)."""
    return any(
        t in _AUXILIARY or (finite(t) and not can_be_noun(t)) for t in _TOKEN.findall(text.lower())
    )


_AUXILIARY = frozenset(
    "is are was were has have had can cannot will must may should does do did could would".split()
)


def _placed_parts(span: Span, forms: Sequence[str]) -> list[tuple[list[str], str, str]]:
    """Each coordinated part of `span`: its word forms, its text and the cut before it."""
    out = []
    start, cut = 0, ""
    for m in [*_cuts(span.lowered), None]:
        end = m.start() if m is not None else len(span.lowered)
        keys = [
            f for w, f in zip(span.words, forms, strict=True) if w.start >= start and w.end <= end
        ]
        if keys:
            out.append((keys, span.text[start:end], cut))
            cut = ""
        if m is not None:
            start, cut = m.end(), cut + m.group()
    return out
