"""Two numbers of a statement traded ("The 22:45 screening ends at 20:30." of "The 20:30
screening ends at 22:45."): each number is one the span states, so no count of them tells; a
number standing after the words that lead to the span's other number, and no longer before
the words that follow it there, has changed places with it.
"""

from __future__ import annotations

import re
from collections import defaultdict

__all__ = ["traded"]

# A date or a time is one number however written ("05/01/2024", "2024-05-01", "9:30"): its
# parts in another order are another spelling, not numbers traded.
_TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*|[a-z]+(?:'[a-z]+)?")


def _number(token: str) -> bool:
    return token[0].isdigit()


def traded(lowered: str, span_lowered: str) -> str:
    """Why the clause (`lowered`, casefolded) puts a number of its span in the place of another
    number the clause also states ("" if it does not)."""
    mine = _TOKEN.findall(lowered)
    stated = {t for t in mine if _number(t)}
    if len(stated) < 2:
        return ""
    theirs = _TOKEN.findall(span_lowered)
    led: defaultdict[tuple[str, str], set[str]] = defaultdict(set)  # two words -> numbers after
    follows: defaultdict[str, set[tuple[str, ...]]] = defaultdict(set)  # number -> words after
    for j, token in enumerate(theirs):
        if _number(token):
            if j >= 2 and not _number(theirs[j - 1]) and not _number(theirs[j - 2]):
                led[theirs[j - 2], theirs[j - 1]].add(token)
            follows[token].add(tuple(theirs[j + 1 : j + 3]))
    for i, token in enumerate(mine):
        if not _number(token) or token not in follows or i < 2:
            continue  # a number the span does not state is the number checks' to judge
        lead = (mine[i - 2], mine[i - 1])
        if _number(lead[0]) or _number(lead[1]) or token in led.get(lead, ()):
            continue
        other = sorted((led.get(lead, set()) - {token}) & stated)
        if other and tuple(mine[i + 1 : i + 3]) not in follows[token]:
            return f"{token} stands after {' '.join(lead)!r}, where the span has {other[0]}"
    return ""
