"""French, German and Spanish claims held to the statement they restate: a negation added or
dropped ("ne ... pas", "nicht", "kein", "no"), or a closed-class word in the place of another of
its class (peut/doit, kann/muss, todos/algunos, avant/après, mensuel/annuel, lundi/mardi), or a
bound or a restriction that statement does not write ("au moins", "bis zu", "nur", "solo"),
which the English checks do not read (language/closed.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..language.closed import CLASSES, members, negations, qualifiers, tokens
from ..language.detect import detect_language
from .reading import reading

__all__ = ["foreign_mismatch"]

# Where a clause ends: each is held to the statement it restates.
_CLAUSE = re.compile(
    r"[;:]|(?<=[.!?])\s+|,\s+"
    r"|\s(?:and|but|or|und|aber|sondern|oder|et|mais|ou|y|e|pero|sino|o)\s",
    re.I,
)


def foreign_mismatch(sentence: str, evidence: Sequence[str]) -> str:
    """Why `sentence`, in French, German or Spanish, says otherwise than the statement of
    `evidence` it restates ("" if it does not, or is in another language)."""
    lang = detect_language(sentence)
    if lang is None:
        lang = detect_language(" ".join(evidence)[:2000])
    if lang not in CLASSES:
        return ""
    # Clauses of the evidence too: "..., wenn keine Vormerkung vorliegt" negates its own part.
    statements = [
        [*tokens(c), c]
        for text in evidence
        for s in reading(text).raw_statements
        for c in _parts(s)
    ]
    for clause in _parts(sentence):
        mine = tokens(clause)
        if len(mine) >= 3 and (why := _against(lang, mine, statements)):
            return why
    return ""


def _parts(text: str) -> list[str]:
    return [p for p in _CLAUSE.split(text) if p and p.strip()]


def _against(lang: str, mine: list[str], statements: list[list[str]]) -> str:
    """Why the clause's words `mine` say otherwise than the statement they share most with."""
    words = set(mine)
    scored = [(len(words & set(s[:-1])), s) for s in statements if len(s) > 1]
    if not scored:
        return ""
    _, best = max(scored, key=lambda x: x[0])
    theirs, quoted = best[:-1], repr(best[-1].strip()[:60])
    ours, its = negations(lang, mine), negations(lang, theirs)
    if ours and not its:
        return f"negates where {quoted} does not"
    if its and not ours:
        return f"{quoted} negates, the sentence does not"
    senses = {sense for sense, _ in qualifiers(lang, theirs)}
    for sense, phrase in qualifiers(lang, mine):
        if sense not in senses:
            return f"says {phrase!r}, which {quoted} does not say"
    table = members(lang)
    theirs_ids = {table[w] for w in theirs if w in table}
    for word in mine:
        found = table.get(word)
        if found is None or found in theirs_ids:
            continue
        other = [w for w in theirs if w in table and table[w][0] == found[0]]
        if other:
            return f"says {word!r} where {quoted} says {other[0]!r}"
    return ""
