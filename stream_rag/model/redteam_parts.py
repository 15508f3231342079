"""The red team's coordinated parts: a word of one coordinated part of a sentence moved into the
parallel place of another, no number involved ("The gym has heated pools and cold showers." ->
"The gym has cold pools."; "Wifi is free in the lobby and paid in the rooms." -> "Wifi is free
in the rooms."). Built from the block's own sentence by structure alone.

- `parts_mix` (false): the first part written with one of its words, in the stretch parallel to
  the second part, replaced by the second part's word in the same place, while another word of
  its own stays.
- `control_part` (true): the second part restated on its own with the words the parts share
  ("The gym has cold showers.", "The library is open Tuesday from 9 am." of "open Monday and
  Tuesday from 9 am").
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..text import STOP_WORDS
from .redteam import Option, Scene

__all__ = ["PARTS", "parts_mix"]

# Where one coordinated part ends and the next begins, the strongest first.
_CUTS = (
    re.compile(r";\s+"),
    re.compile(r",\s+(?:and|but|while|whereas)\s+"),
    re.compile(r"\s+(?:and|but|while|whereas)\s+"),
    re.compile(r",\s+"),
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.,:]\d+)*")
# A second part opening with one of these is a qualifier, a condition or a new clause about
# something else, not a part parallel to the first.
_NOT_PARALLEL = frozenset(
    "only not if unless when whenever except even also then so because which who that it they "
    "this there these those he she we you i its their after before until once".split()
)


@lru_cache(maxsize=8192)
def _kinds(word: str) -> frozenset[str]:
    """The word classes a word can be: NOUN, ADJ (a participle counts), VERB."""
    import lemminflect

    found = lemminflect.getAllLemmas(word.lower())
    kinds = set(found) & {"NOUN", "ADJ", "VERB"}
    for lemma in found.get("VERB", ()):
        if word.lower() in lemminflect.getInflection(lemma, tag="VBN"):
            kinds.add("ADJ")
    return frozenset(kinds)


def _content(text: str, start: int = 0) -> list[re.Match[str]]:
    return [
        m
        for m in _WORD.finditer(text, start)
        if not m.group()[0].isdigit() and m.group().lower() not in STOP_WORDS
    ]


def _split(sentence: str) -> tuple[str, str] | None:
    """(first part, second part) of a sentence of two coordinated parts, cut at its last
    coordinator of the strongest kind it has."""
    body = sentence.rstrip().rstrip(".!")
    for cut in _CUTS:
        found = list(cut.finditer(body))
        if not found:
            continue
        last = found[-1]
        first, second = body[: last.start()], body[last.end() :]
        if len(_WORD.findall(first)) < 3 or not _content(second):
            continue
        opener = second.split()[0]
        if opener.lower() in _NOT_PARALLEL or not opener[0].isalpha():
            return None  # a qualifier, a condition, a time or a number, not a parallel part
        if "," in first or _CONDITION.match(first) or _AND.search(first):
            return None  # a list of three or more, or parts a condition or a phrase governs
        if any(c.isdigit() for c in body):
            return None  # numbers: the number families move them
        if "NOUN" not in _kinds(opener) and "VERB" in _kinds(opener) and len(_content(second)) > 2:
            return None  # a second predicate ("... and uploaded when ..."), not a complement
        return first, second
    return None


_CONDITION = re.compile(
    r"\W*(?:if|when|whenever|unless|once|after|before|for|in|on|at|with|during|within|by|from)\b",
    re.IGNORECASE,
)
_AND = re.compile(r"\s(?:and|or)\s", re.IGNORECASE)
# A second part with a verb of its own is a clause: it lines up with the first from its start.
_FINITE = re.compile(
    r"\b(?:is|are|was|were|has|have|had|can|cannot|will|must|may|should|does|do|get|gets)\b", re.I
)


def parts_mix(scene: Scene) -> list[Option]:
    split = _split(scene.sentence)
    if split is None:
        return []
    first, second = split
    mine, theirs = _content(first), _content(second)
    # The stretch of the first part parallel to the second: its last words, as many as the
    # second has (what comes before it is shared: "The gym has" of "heated pools"); all of
    # it from its start when the second part is a clause of its own.
    size = min(len(theirs), len(mine))
    clause = _FINITE.search(second) is not None
    region = mine[:size] if clause else mine[len(mine) - size :]
    other = theirs[:size]
    keys = {m.group().lower() for m in mine}
    their_keys = {m.group().lower() for m in theirs}
    own = [m for m in region if m.group().lower() not in their_keys]
    out: list[Option] = []
    for x, y in zip(region, other, strict=True):
        old, new = x.group(), y.group()
        if old.lower() == new.lower() or new.lower() in keys or old.lower() in their_keys:
            continue
        if not (_kinds(old) & _kinds(new) & {"NOUN", "ADJ"}):
            continue  # a word for a word of its class: "heated" for "cold", "lobby" for "rooms"
        if not [m for m in own if m is not x]:
            continue  # nothing of the first part's own stays: "open Tuesday" is true
        if new[:1].isupper() and not old[:1].isupper():
            continue  # a name moved is the name checks' family
        word = new.lower() if x.start() else new[:1].upper() + new[1:]
        out.append(Option("mix", f"{first[: x.start()]}{word}{first[x.end() :]}.", True))
    if region:
        shared = "" if clause else first[: region[0].start()]
        control = f"{shared}{second}." if shared.strip() else f"{second[:1].upper()}{second[1:]}."
        out.append(Option("control_part", control, False))
    return out


PARTS = {"parts_mix": parts_mix}
