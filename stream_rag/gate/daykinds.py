"""A count of days or hours of another kind: "7 calendar days" or "7 days" where the statement
a sentence restates says "7 working days" (and the other way round). Working, business and
banking days (and "weekdays") are one kind; calendar days and plain days another; school days
a third. English closed class: the number must match for the kind to be compared.

Which days (`day_set`): "on weekdays" where the statement a sentence restates says "every day"
or "at weekends" (days narrowed or changed), and the other way round.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .reading import Reading, reading

__all__ = ["day_kind", "day_set"]

_KIND = {
    "working": "working",
    "business": "working",
    "banking": "working",
    "week": "working",
    "school": "school",
    "calendar": "calendar",
    "": "calendar",
}
_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_NUMBER = r"\d+(?:[.,]\d+)?|" + "|".join(_WORDS) + r"|thirty|forty|sixty|ninety"
# A count, then its unit; the kind word, if any, between them ("5 to 10 business days",
# "three working days", "2 weekdays").
_COUNT = re.compile(
    rf"\b({_NUMBER})(?:\s*(?:-|–|to|or|and)\s*({_NUMBER}))?"
    r"\s+(?:(working|business|banking|school|calendar|week)[\s-]?)?(days?|hours?)\b"
)
_WORD_VALUE = {w: str(i) for i, w in enumerate(_WORDS)} | {
    "thirty": "30",
    "forty": "40",
    "sixty": "60",
    "ninety": "90",
}
_TOKEN = re.compile(r"[a-z0-9]+")


# A day or an hour named with its kind, counted or not ("the next working day").
_KINDED = re.compile(r"\b(working|business|banking|school|calendar)[\s-]?(days?|hours?)\b")


def _kinds(text: str) -> set[tuple[str, str]]:
    """(unit, kind) of each day or hour `text` names with a kind word."""
    return {(m.group(2).rstrip("s"), _KIND[m.group(1)]) for m in _KINDED.finditer(text)}


def _value(number: str) -> str:
    return _WORD_VALUE.get(number, number.replace(",", "."))


def _counts(text: str) -> set[tuple[str, str, str]]:
    """(number, unit, kind) of each count of days or hours in `text` (both ends of a range)."""
    out = set()
    for match in _COUNT.finditer(text):
        unit = match.group(4).rstrip("s")
        kind = _KIND[match.group(3) or ""]
        for number in match.group(1, 2):
            if number is not None:
                out.add((_value(number), unit, kind))
    return out


def day_kind(sentence: str, evidence: Iterable[str]) -> str:
    """Why `sentence` counts days or hours of another kind than its cited `evidence` ("" if it
    does not)."""
    lowered = " ".join(sentence.lower().split())
    mine = _counts(lowered)
    named = _kinds(lowered)
    if not mine and not named:
        return ""
    # The words the sentence shares with a statement, less the kind words themselves.
    words = set(_TOKEN.findall(lowered)) - set(_KIND)
    blocks = [reading(text) for text in evidence]
    statements = [pair for block in blocks for pair in block.worded() if pair[0]]
    best = max(statements, key=lambda pair: len(words & pair[1]), default=("", frozenset()))[0]
    # A day of a kind without a count ("on the next calendar day" of "... working day").
    theirs_named = _kinds(best)
    for unit, kind in sorted(named):
        kinds = {k for u, k in theirs_named if u == unit}
        if kinds and kind not in kinds:
            return (
                f"says a {kind} {unit} where the statement says a {' or '.join(sorted(kinds))} one"
            )
    every = set().union(*map(_all_counts, blocks))
    # Held to the statement the sentence restates, else to any cited statement counting so.
    for theirs in (_counts(best), every):
        for number, unit, kind in sorted(mine):
            kinds = {k for n, u, k in theirs if (n, u) == (number, unit)}
            if kinds and kind not in kinds:
                said = " or ".join(sorted(kinds))
                return f"counts {number} {kind} {unit}s where the block counts {said} ones"
        if any((n, u) in {(a, b) for a, b, _ in theirs} for n, u, _ in mine):
            return ""
    return ""


@lru_cache(maxsize=256)
def _all_counts(block: Reading) -> frozenset[tuple[str, str, str]]:
    """The counts of days or hours of every statement of `block`."""
    return frozenset().union(*(_counts(s) for s in block.statements if s))


# The days a statement says something holds on: all of them, weekdays, weekends. Not a count
# ("5 working days" is `day_kind`'s) nor a rate ("per day", "a day"). English closed class.
_SETS = (
    (
        "all",
        re.compile(
            r"\b(?:every|each) day\b|\bdaily\b|\b(?:7|seven) days a week\b"
            r"|\b(?:all|every day of the) week\b"
        ),
    ),
    (
        "weekdays",
        re.compile(
            r"\bweekdays?\b|\b(?:working|business) days?\b"
            r"|\bmon(?:day)?s?\s*(?:-|–|to|through|till|until)\s*fri(?:day)?s?\b"
        ),
    ),
    (
        "weekends",
        re.compile(r"\bweekends?\b|\bsat(?:urday)?s?\s*(?:and|&|-|–|or)\s*sun(?:day)?s?\b"),
    ),
)
_EXCEPT = re.compile(
    r"\b(?:except|excluding|other than|apart from|but not|not)\s+(?:on\s+|at\s+)?$"
)
_OTHER = {"weekdays": "weekends", "weekends": "weekdays"}
# Weekdays and weekends joined: every day (not each in its own part: "opens at 7 on weekdays
# and is closed at weekends").
_BOTH = re.compile(
    r"\bweekdays?\s+(?:and|&)\s+(?:on\s+|at\s+)?(?:the\s+)?weekends?\b"
    r"|\bweekends?\s+(?:and|&)\s+(?:on\s+)?weekdays?\b"
)


def _sets(text: str) -> set[str]:
    """The day sets `text` names: "every day except weekends" names weekdays, "weekdays and
    weekends" every day."""
    named, excepted = set(), set()
    for name, pattern in _SETS:
        for match in pattern.finditer(text):
            if name == "weekdays" and _COUNT.search(text[max(0, match.start() - 12) : match.end()]):
                continue  # "5 working days": a count, `day_kind`'s
            before = text[max(0, match.start() - 16) : match.start()]
            if name in _OTHER and _EXCEPT.search(before):
                excepted.add(name)
            else:
                named.add(name)
    if excepted:
        return (named - {"all"}) | {_OTHER[name] for name in excepted}
    if _BOTH.search(text):
        named.add("all")
    return named


def day_set(sentence: str, evidence: Iterable[str]) -> str:
    """Why `sentence` says something holds on other days than the statement of `evidence` it
    restates ("" if it does not); each part of a sentence joining statements ("..., and ...")
    is held to its own."""
    statements = [pair for text in evidence for pair in reading(text).worded() if pair[0]]
    for part in _JOINED.split(" ".join(sentence.lower().split())):
        mine = _sets(part)
        if not mine:
            continue
        words = set(_TOKEN.findall(part)) - _DAY_WORDS
        best = max(statements, key=lambda pair: len(words & pair[1]), default=("", frozenset()))
        theirs = _sets(best[0])
        if theirs and not mine <= theirs:
            said = " and ".join(sorted(theirs))
            wrote = " and ".join(sorted(mine - theirs))
            return f"says {wrote} where the statement it restates says {said}"
    return ""


_JOINED = re.compile(r",\s+(?:and|but|while|whereas)\s+|;\s+")
_DAY_WORDS = frozenset(
    "every each day days daily week weekday weekdays weekend weekends working business".split()
) | {"on", "at", "a"}
