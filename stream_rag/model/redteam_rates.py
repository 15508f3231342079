"""The red team's rates: "per day" as "per visit" (a rate of another thing the block names),
and a passive's agent swapped ("accompanied by an adult" as "by a member", a noun the block
writes elsewhere after an article). Controls: "per day" as "a day", "by an adult" kept with
the verb's object left as it is and "Also," before it.
"""

from __future__ import annotations

import re

from ..language.wordclass import noun_not_verb_or_adjective
from .redteam import Option, Scene, lower_first

__all__ = ["RATES", "rates"]

_PER = re.compile(r"\bper ([a-z]+)\b")
_AGENT = re.compile(r"\b([a-z]+(?:ed|en)) by (a|an|the) ([a-z]+)\b")
_NOUN_AFTER = re.compile(r"\b(?:a|an|the|each|per) ([a-z]{4,})\b")
_NOT_NOUNS = frozenset(
    "same other first last next most more less such only very full whole total free".split()
)


def _article(noun: str) -> str:
    return "an" if noun[0] in "aeio" or noun.startswith(("hour", "und", "unl")) else "a"


def rates(scene: Scene) -> list[Option]:
    """A rate of another thing ("per visit" of "per day") and a passive's agent swapped ("by a
    member" of "by an adult"), each with a noun the block writes; control: "per day" as "a
    day"."""
    s = scene.sentence
    block = " ".join(scene.own).lower()
    out: list[Option] = []
    nouns = [
        n
        for n in dict.fromkeys(_NOUN_AFTER.findall(block))
        if n not in _NOT_NOUNS and noun_not_verb_or_adjective(n.lower())
    ]
    for m in _PER.finditer(s):
        noun = m.group(1)
        pers = [n for n in dict.fromkeys(_PER.findall(block)) if n != noun]
        for other in pers[:2] or [n for n in nouns if n != noun][:1]:
            out.append(Option("per", s[: m.start(1)] + other + s[m.end(1) :], True))
        out.append(
            Option("control_a", f"{s[: m.start()]}{_article(noun)} {s[m.start(1) :]}", False)
        )
    for m in _AGENT.finditer(s):
        noun = m.group(3)
        if noun in _NOT_NOUNS:
            continue
        for other in [n for n in nouns if n != noun and n not in s.lower()][:2]:
            text = f"{s[: m.start(2)]}{_article(other)} {other}{s[m.end(3) :]}"
            out.append(Option("agent", text, True))
        if s[:1].isupper():
            out.append(Option("control_also", f"Also, {lower_first(s)}", False))
    return out


RATES = {"rates": rates}
