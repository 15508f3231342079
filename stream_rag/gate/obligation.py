"""A duty made advice or a choice: "should", "is recommended" or "optional" where the statement
a sentence restates says "must" or "is required" ("Claims should be made within 28 days" of
"Claims must be made ..."), and "It is recommended that you ...", "You should ..." or
"Optionally, ..." of an instruction ("Store them in a linked cloud drive"). The binding
checks (gate/binding.py) hold the other way round ("must" where the span says "can").
English closed classes only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .reading import reading
from .support import replaced

__all__ = ["obliged"]

_NECESSARY = re.compile(
    r"\b(?:must|ha(?:s|ve) to|needs? to|required|requires?|mandatory|compulsory|obligatory"
    r"|obliged)\b(?!\s+not\b)"
)
_ADVISED = re.compile(
    r"\b(?:should|ought to|recommend(?:s|ed)?|advis(?:ed|able)|encouraged|suggested|best to)\b"
)
_OPTIONAL = re.compile(
    r"\b(?:optional|optionally|may|might|free to|if you (?:wish|like|want)|are able to"
    r"|can choose|(?:you|customers|users|members) can)\b"
)
# A permission: what advice is not ("Guests can arrive early" of "Guests should ...").
_PERMITTED = re.compile(r"\b(?:can|could|may|might|optional|optionally|free to)\b")
# What makes an instruction a choice (a "can" or "may" of it says how it is done).
_CHOSEN = re.compile(r"\b(?:optional|optionally|free to|if you (?:wish|like|want))\b")
_WORD = re.compile(r"[a-z0-9]+")
_PHRASAL = frozenset("up out off the your it them this these those".split())
# What follows an instruction's verb: its object's determiner, a pronoun, a particle.
_OBJECT = frozenset(
    "the a an your our their this these those all any each every it them up out in on off "
    "to".split()
)


@lru_cache(maxsize=4096)
def _base_verb(word: str) -> bool:
    """Whether `word` is a verb's base form and no adjective ("Store", "Click"; not "Open"
    read as "open")."""
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word)
    if "VERB" not in lemmas or "ADJ" in lemmas:
        return False
    return word in lemminflect.getInflection(lemmas["VERB"][0], tag="VB")


def _instruction(statement: str) -> bool:
    """Whether `statement` is an imperative: a base-form verb opening it, then its object."""
    words = _WORD.findall(statement)
    if len(words) < 3 or words[1] not in _OBJECT:
        return False
    if _base_verb(words[0]):
        return True
    # A verb that is also an adjective ("back", "clean", "empty") is one before a particle or
    # a definite object; "Open every day" stays a fragment.
    return words[1] in _PHRASAL and _verb(words[0])


@lru_cache(maxsize=4096)
def _verb(word: str) -> bool:
    """Whether `word` is a verb's base form, whatever else it is."""
    import lemminflect

    lemmas = lemminflect.getAllLemmas(word).get("VERB", ())
    return bool(lemmas) and word in lemminflect.getInflection(lemmas[0], tag="VB")


# The force of a modal or a word of duty: one of another class in a modal's place changes
# what is said, however many of each the statement writes ("may drop off ... and must collect").
_FORCE = {
    **dict.fromkeys("must shall need needs required mandatory compulsory".split(), "a duty"),
    "obligatory": "a duty",
    **dict.fromkeys("may can could might allowed permitted optional".split(), "a permission"),
    **dict.fromkeys("should ought recommended advised advisable encouraged".split(), "advice"),
    **dict.fromkeys("prohibited forbidden banned".split(), "a prohibition"),
    "will": "a certainty",
}
# Before "not" the force turns: "must not" forbids, "need not" frees from a duty.
_NEGATED = {
    **dict.fromkeys("must shall may can could".split(), "a prohibition"),
    **dict.fromkeys("need needs".split(), "no duty"),
    "should": "advice against",
    "will": "a certainty it does not",
}
_FORCE_WORD = re.compile(r"\b(?:" + "|".join(_FORCE) + r")\b")
_CONTRACTED = (
    ("cannot", "can not"),
    ("can't", "can not"),
    ("mustn't", "must not"),
    ("won't", "will not"),
)
_TOKEN = re.compile(r"[a-z0-9']+")


def _tokens(text: str) -> list[str]:
    for contracted, full in _CONTRACTED:
        text = text.replace(contracted, full)
    return _TOKEN.findall(text)


def _force_replaced(lowered: str, statement: str) -> str:
    """A modal or a word of duty in the place of the statement's one of another force."""
    mine, theirs = _tokens(lowered), _tokens(statement)
    for i, j in replaced(mine, theirs):
        a, b = mine[i], theirs[j]
        if a not in _FORCE or b not in _FORCE:
            continue
        negated = mine[i + 1 : i + 2] == theirs[j + 1 : j + 2] == ["not"]
        force = _NEGATED if negated and a in _NEGATED and b in _NEGATED else _FORCE
        if force[a] != force[b]:
            return f"says {a!r} ({force[a]}) where {statement[:60]!r} says {b!r}"
    return ""


def obliged(sentence: str, evidence: Iterable[str]) -> str:
    """Why `sentence` weakens a duty or an instruction its cited `evidence` states, or says a
    modal of another force in the place of the statement's ("" if it does not)."""
    lowered = " ".join(sentence.lower().split())
    advised = _ADVISED.search(lowered)
    optional = _OPTIONAL.search(lowered)
    forced = _FORCE_WORD.search(lowered)
    if advised is None and optional is None and forced is None and not _PERMITTED.search(lowered):
        return ""
    mine = set(_WORD.findall(lowered))
    statements = [
        pair for block in map(reading, evidence) for pair in block.worded() if pair[0].strip()
    ]
    best = max(statements, key=lambda pair: len(mine & pair[1]), default=("", frozenset()))[0]
    if forced is not None and (why := _force_replaced(lowered, best)):
        return why
    if advised is None and optional is None and not _PERMITTED.search(lowered):
        return ""
    quoted = repr(best[:60])
    if _NECESSARY.search(best) and not _ADVISED.search(best) and not _OPTIONAL.search(best):
        if advised is not None:
            return f"says {advised.group()!r} where {quoted} makes it a duty"
        if optional is not None and not _NECESSARY.search(lowered):
            return f"says {optional.group()!r} where {quoted} makes it a duty"
    if _ADVISED.search(best) and not _NECESSARY.search(best) and not _PERMITTED.search(best):
        permitted = _PERMITTED.search(lowered)
        if permitted is not None and advised is None and not _NECESSARY.search(lowered):
            return f"says {permitted.group()!r} where {quoted} advises it"
    if _instruction(best) and not _ADVISED.search(best) and not _OPTIONAL.search(best):
        # "You can click ..." of "Click ..." says how it is done, as the instruction does.
        chosen = _CHOSEN.search(lowered)
        word = advised.group() if advised is not None else chosen.group() if chosen else ""
        if word:
            return f"says {word!r} of what {quoted} instructs"
    return ""
