"""The red team's fourth round: false sentences that keep every word of the block's sentence
and change who does what to whom, of how many, how surely. Built from the block's own sentence
by general edits of English, each with a faithful control.

- `role_swap`: subject and object traded around their verb ("Live chat support gets Team
  customers"); control: the passive ("Live chat support is got by ..."), which says the same
- `weaken`: "All notes" as "Some notes" or "Most notes"; control: "All the notes"
- `certain`: "can"/"may" as "will"; control: "can" as "may" and back
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..language.wordclass import can_be_noun
from .redteam import Option, Scene, lower_first

__all__ = ["ROLES", "certain", "role_swap", "weaken"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_DETERMINERS = frozenset("the a an this that these those its their our your each every".split())
# Where an object's noun phrase ends: a preposition, a conjunction, punctuation.
_STOPS = frozenset(
    "in on at for with without to from by of inside outside within after before during until "
    "and or but when if unless so because instead than as one two three four five six seven "
    "eight nine ten twelve".split()
)
_AUX = frozenset(
    "is are was were be been can could will would should must may might do does did not also "
    "cannot".split()
)
_CLAUSE = _STOPS - {"and", "or"}
_OPENS = frozenset(
    "the a an this that these those its their our your every all both some any".split()
)


@lru_cache(maxsize=8192)
def _finite(word: str) -> tuple[str, str] | None:
    """(lemma, tag) of a verb's -s, plural or past form that is no noun's plural or adjective."""
    import lemminflect

    low = word.lower()
    found = lemminflect.getAllLemmas(low)
    if low in ("has", "have", "had"):
        return "have", "VBZ" if low == "has" else "VBP" if low == "have" else "VBD"
    if "VERB" not in found or "ADJ" in found or low in _AUX:
        return None
    for lemma in found["VERB"]:
        for tag in ("VBZ", "VBD", "VBP"):
            if low in lemminflect.getInflection(lemma, tag=tag):
                return lemma, tag
    return None


def _parts(sentence: str) -> tuple[str, str, str, str] | None:
    """(subject, verb, object, rest) of a plain active sentence: a subject of one to five
    words opening it, a finite verb, an object of one to five words up to a preposition, a
    conjunction or punctuation."""
    body = sentence.rstrip()
    words = list(_WORD.finditer(body))
    for i, match in enumerate(words[1:6], start=1):
        if _finite(match.group()) is None or match.group()[:1].isupper():
            continue
        following = words[i + 1].group().lower() if i + 1 < len(words) else ""
        if can_be_noun(match.group().lower()) and following not in _OPENS:
            continue  # "All notes are": a plural noun, not "The nurse phones every patient"
        subject = body[: match.start()].strip()
        if not subject or "," in subject or any(c.isdigit() for c in subject):
            return None
        if any(w.group().lower() in _AUX or w.group().lower() in _CLAUSE for w in words[:i]):
            return None  # "Removing a seat after 30 days gives ...": no plain subject
        after = body[match.end() :]
        cut = len(after)
        for w in _WORD.finditer(after):
            if w.group().lower() in _STOPS:
                cut = w.start()
                break
        punct = re.search(r"[,.;:!?]", after)
        if punct is not None:
            cut = min(cut, punct.start())
        obj = after[:cut].strip()
        if not 1 <= len(obj.split()) <= 5 or obj.split()[-1].lower() in _DETERMINERS:
            return None
        if any(c.isdigit() for c in obj):
            return None  # "costs $8": a value, not an object
        rest = after[cut:]
        return subject, match.group(), obj, (" " + rest if rest[:1].isalpha() else rest)
    return None


def _participle(lemma: str) -> str | None:
    import lemminflect

    forms = lemminflect.getInflection(lemma, tag="VBN")
    return forms[0] if forms else None


def role_swap(scene: Scene) -> list[Option]:
    """ "Team customers get live chat support" -> "Live chat support gets Team customers";
    control: "Live chat support is got by Team customers" (the passive says the same)."""
    parts = _parts(scene.sentence)
    if parts is None:
        return []
    subject, verb, obj, rest = parts
    first = obj[0].upper() + obj[1:]
    head = subject.split()[0]
    named = re.search(rf"(?<=[a-z,] ){re.escape(head)}\b", " ".join(scene.own))
    low = subject if named else lower_first(subject)
    out = [Option("swap", f"{first} {verb} {low}{rest}", True)]
    finite = _finite(verb)
    participle = _participle(finite[0]) if finite is not None and finite[0] != "have" else None
    if participle is not None:
        plural = obj.split()[-1].endswith("s") and not obj.split()[-1].endswith("ss")
        be = ("were" if plural else "was") if finite and finite[1] == "VBD" else None
        be = be or ("are" if plural else "is")
        out.append(Option("control_passive", f"{first} {be} {participle} by {low}{rest}", False))
    return out


_ALL = re.compile(r"\b(All|all)\s+(?!the\b|of\b)([a-z][a-z-]+s)\b")


def weaken(scene: Scene) -> list[Option]:
    """ "All notes are encrypted" -> "Some notes ..." / "Most notes ..."; control: "All the
    notes ..."."""
    s = scene.sentence
    match = _ALL.search(s)
    if match is None:
        return []
    out = []
    for word in ("some", "most"):
        new = word.capitalize() if match.group(1) == "All" else word
        out.append(Option(word, s[: match.start()] + new + s[match.start(1) + 3 :], True))
    control = s[: match.start(2)] + "the " + s[match.start(2) :]
    out.append(Option("control_the", control, False))
    return out


_POSSIBLE = re.compile(r"\b(can|may)\b(?!\s+not\b)")


def certain(scene: Scene) -> list[Option]:
    """ "Plans can be cancelled" -> "Plans will be cancelled": what may happen said to happen;
    control: "can" as "may" (and "may" as "can"), which the span's permission allows."""
    s = scene.sentence
    match = _POSSIBLE.search(s)
    if match is None:
        return []
    other = "may" if match.group(1) == "can" else "can"
    return [
        Option("will", s[: match.start()] + "will" + s[match.end() :], True),
        Option("control_modal", s[: match.start()] + other + s[match.end() :], False),
    ]


ROLES = {"role_swap": role_swap, "weaken": weaken, "certain": certain}
