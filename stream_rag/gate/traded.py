"""Two numbers of a statement traded ("The 22:45 screening ends at 20:30." of "The 20:30
screening ends at 22:45."): each number is one the span states, so no count of them tells; a
number standing after the words that lead to the span's other number, and no longer before
the words that follow it there, has changed places with it.

Or paired anew across two coordinated parts, each part with a number of either unit ("a 10 GB
add-on for 3 pounds" of "a 2 GB add-on for 3 pounds or a 10 GB add-on for 7 pounds"): every
number and every word is the span's, but one part's size is said at the other's price.
"""

from __future__ import annotations

import re
from collections import defaultdict

__all__ = ["repaired", "traded"]

# A date or a time is one number however written ("05/01/2024", "2024-05-01", "9:30"): its
# parts in another order are another spelling, not numbers traded.
_TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*|[a-z]+(?:'[a-z]+)?")


# A number and the word or currency sign that says what it counts ("10 gb", "£3").
_UNITED = re.compile(r"([$€£¥])?\s?(\d+(?:[.,]\d+)*)(?:[\s-]?([a-z]+))?")
# Where one coordinated part of a text ends and the next begins (as parallel.py cuts them).
_COORDINATED = re.compile(r";|,\s|\s(?:and|but|while|whereas|or)\s|[.!?](?:\s|$)")


_NEAR = 6  # words read on either side of a number


def _number(token: str) -> bool:
    return token[0].isdigit()


def traded(lowered: str, span_lowered: str) -> str:
    """Why the clause (`lowered`, casefolded) puts a number of its span in the place of another
    number the clause also states ("" if it does not)."""
    mine = _TOKEN.findall(lowered)
    stated = {t for t in mine if _number(t)}
    theirs = _TOKEN.findall(span_lowered)
    led: defaultdict[tuple[str, str], set[str]] = defaultdict(set)  # two words -> numbers after
    follows: defaultdict[str, set[tuple[str, ...]]] = defaultdict(set)  # number -> words after
    at: defaultdict[str, list[int]] = defaultdict(list)  # number -> where the span states it
    for j, token in enumerate(theirs):
        if _number(token):
            if j >= 2 and not _number(theirs[j - 1]) and not _number(theirs[j - 2]):
                led[theirs[j - 2], theirs[j - 1]].add(token)
            follows[token].add(tuple(theirs[j + 1 : j + 3]))
            at[token].append(j)
    for i, token in enumerate(mine):
        if not _number(token) or token not in follows:
            continue  # a number the span does not state is the number checks' to judge
        if other := _in_place_of(mine, i, theirs, at):
            return f"{token} stands where the span has {other}"
        if i < 2 or len(stated) < 2:
            continue
        lead = (mine[i - 2], mine[i - 1])
        if _number(lead[0]) or _number(lead[1]) or token in led.get(lead, ()):
            continue
        others = sorted((led.get(lead, set()) - {token}) & stated)
        if others and tuple(mine[i + 1 : i + 3]) not in follows[token]:
            return f"{token} stands after {' '.join(lead)!r}, where the span has {others[0]}"
    return ""


def _in_place_of(mine: list[str], i: int, theirs: list[str], at: dict[str, list[int]]) -> str:
    """The other number of the span whose words, before and after alike, the clause writes
    around its number `mine[i]` more closely than around the number's own mentions ("opens 2
    hours before departure and closes" of "opens 30 hours before departure and closes 2 hours
    before departure"); two leading words alone may be both numbers'."""
    before, after = mine[max(0, i - _NEAR) : i], mine[i + 1 : i + 1 + _NEAR]

    def fit(j: int) -> tuple[int, int]:
        return _shared(before[::-1], theirs[max(0, j - _NEAR) : j][::-1]), _shared(
            after, theirs[j + 1 : j + 1 + _NEAR]
        )

    own = [fit(j) for j in at[mine[i]]]
    left, right = max(a for a, _ in own), max(b for _, b in own)
    for other in sorted(set(at) - {mine[i]}):
        for j in at.get(other, ()):
            a, b = fit(j)
            if a > left and b > right:
                return other
    return ""


def _shared(a: list[str], b: list[str]) -> int:
    """How many words two sequences share from their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _united(part: str) -> list[tuple[str, str]]:
    """(number, unit) of each number a part writes with a unit after or a currency sign before."""
    return [(m[2], m[1] or m[3]) for m in _UNITED.finditer(part) if m[1] or m[3]]


def repaired(lowered: str, span_lowered: str) -> str:
    """Why one part of the clause (`lowered`, casefolded) joins a number of one coordinated part
    of its span to a number of another, where each of those parts has its own of both units
    ("" if it does not)."""
    parts = [_united(p) for p in _COORDINATED.split(span_lowered)]
    if sum(1 for p in parts if p) < 2:
        return ""
    home: dict[tuple[str, str], int] = {}
    for k, part in enumerate(parts):
        for pair in part:
            home[pair] = -1 if home.get(pair, k) != k else k  # stated in two parts: no home
    for written in _COORDINATED.split(lowered):
        mine = [(pair, home[pair]) for pair in _united(written) if home.get(pair, -1) >= 0]
        for (a, p), (b, q) in ((x, y) for x in mine for y in mine):
            if p == q or a[1] == b[1]:
                continue
            # Part p has a number of b's unit other than b, and part q one of a's unit.
            if any(u == b[1] and n != b[0] for n, u in parts[p]) and any(
                u == a[1] and n != a[0] for n, u in parts[q]
            ):
                return f"{b[0]} {b[1]} is said with {a[0]} {a[1]}, which the span pairs otherwise"
    return ""
