"""The red team's fifth round: false sentences that keep every word of the block's sentence and
shift how strongly, how often, in which order or under which condition it holds. Each is a
general edit of English (closed-class words: modals, frequency words, comparatives), built from
the block's own sentence, with faithful controls where one exists.

- `comparative`: a comparative appended ("... within 7 days earlier") or put in the place of
  its opposite ("first" / "last", "ahead of" / "behind", "before" / "after"; "before" as
  "below", "above" as "after": a word of the other sense pointing the other way); controls:
  "Also, ...", a comparison said from its other side ("B costs less than A" of "A costs
  more than B")
- `obligation`: an instruction or duty made a recommendation or a choice ("must" -> "should",
  "required" -> "recommended", an imperative -> "It is recommended that you ...",
  "You should ...", "Optionally, ..."); control: "must" -> "have to", an imperative ->
  "Please ..."
- `frequency`: "always" / "never" / "usually" / "sometimes" shifted; "all" / "each" -> "many";
  control: "always" -> "at all times"
- `condition_flip`: "if" -> "unless" / "even if", "unless" -> "if"; an exception ("except",
  "excluding", "other than") dropped or flipped to "including"
- `only_shift`: the statement's "only" dropped or moved to another word; control: "solely"

Its units and ranges (`unit_change`, `range_narrow`) are model/redteam_units.py.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .redteam import Option, Scene, case_as, lower_first, sub_at
from .redteam_units import range_narrow, unit_change

__all__ = [
    "SHIFTS",
    "comparative",
    "condition_flip",
    "frequency",
    "obligation",
    "only_shift",
]


def _body(sentence: str) -> tuple[str, str]:
    s = sentence.rstrip()
    return (s[:-1], s[-1]) if s[-1:] in ".!?" else (s, ".")


def _block_words(scene: Scene) -> set[str]:
    return set(re.findall(r"[a-z]+", " ".join(scene.own).lower()))


# -- comparatives -------------------------------------------------------------------------------

_APPENDED = ("earlier", "later", "faster", "sooner", "more often", "for longer")
_ORDER = {
    "first": "last",
    "last": "first",
    "next": "previous",
    "previous": "next",
    "earlier": "later",
    "later": "earlier",
    "sooner": "later",
    "newest": "oldest",
    "oldest": "newest",
    "newer": "older",
    "older": "newer",
    "ahead of": "behind",
    "ahead": "behind",
    "behind": "ahead of",
    "before": "after",
    "after": "before",
    "in advance": "afterwards",
    "prior to": "after",
    "following": "preceding",
    "larger": "smaller",
    "smaller": "larger",
    "bigger": "smaller",
    "heavier": "lighter",
    "lighter": "heavier",
    "fewer": "more",
}

# A word of order in time put as one of position pointing the other way, and back ("sails
# below" of "sails before", "listed after" of "listed above").
_SENSE = {
    "before": "below",
    "ahead of": "below",
    "after": "above",
    "behind": "above",
    "above": "after",
    "below": "before",
}


_CONVERSE = {"more": "less", "less": "more", "fewer": "more"}
_CONVERSE |= {"earlier": "later", "later": "earlier", "faster": "slower", "slower": "faster"}
_CONVERSE |= {"higher": "lower", "lower": "higher", "larger": "smaller", "smaller": "larger"}
_COMPARISON = re.compile(
    r"(?P<a>[A-Z][^,;:]*?) (?P<verb>(?:is|are|was|were|costs?|takes?|lasts?|arrives?|runs?"
    r"|pays?|gets?)(?: \w+)?) (?P<than>(?:"
    + "|".join(_CONVERSE)
    + r")) than (?P<b>[^,;:.!?]+)[.!?]?"
)


def _converse(sentence: str) -> str | None:
    """ "A costs more than B" said from its other side: "B costs less than A"."""
    m = _COMPARISON.fullmatch(sentence.rstrip())
    if m is None or " than " in m.group("a") or m.group("a").split()[0] in ("It", "They"):
        return None
    b, a = m.group("b"), lower_first(m.group("a"))
    b = b[:1].upper() + b[1:]
    return f"{b} {m.group('verb')} {_CONVERSE[m.group('than')]} than {a}."


def comparative(scene: Scene) -> list[Option]:
    """A comparative the block never writes appended to the sentence, or a word of order put in
    the place of its opposite; controls: the sentence opened with "Also,", a comparison said
    from its other side."""
    s = scene.sentence
    body, end = _body(s)
    words = _block_words(scene)
    out = []
    if re.search(r"\d", body) or re.search(r"\b(?:within|after|before|by)\b", body):
        for word in _APPENDED:
            if not set(word.split()) & words:
                out.append(Option("appended", f"{body} {word}{end}", True))
    pattern = re.compile(r"\b(" + "|".join(sorted(_ORDER, key=len, reverse=True)) + r")\b", re.I)
    for match in pattern.finditer(s):
        new = _ORDER[match.group().lower()]
        if new not in words:
            out.append(Option("order", sub_at(s, match, new), True))
    sense = re.compile(r"\b(" + "|".join(sorted(_SENSE, key=len, reverse=True)) + r")\b", re.I)
    for match in sense.finditer(s):
        new = _SENSE[match.group().lower()]
        if new not in words:
            out.append(Option("order_sense", sub_at(s, match, new), True))
    if out and s[:1].isupper():
        out.append(Option("control_also", f"Also, {lower_first(s)}", False))
    converse = _converse(s)
    if converse is not None:
        out.append(Option("control_converse", converse, False))
    return out


# -- obligation ---------------------------------------------------------------------------------

_DUTY = {
    "must": ("should", "can"),
    "have to": ("should", "may"),
    "has to": ("should", "may"),
    "need to": ("should", "may"),
    "needs to": ("should", "may"),
    "is required": ("is recommended", "is optional"),
    "are required": ("are recommended", "are optional"),
    "required": ("recommended", "optional"),
    "mandatory": ("recommended", "optional"),
    "compulsory": ("recommended", "optional"),
    "should": ("must", "can"),
    "recommended": ("required", "mandatory"),
    "advised": ("required",),
    "is not allowed": ("is not recommended",),
    "are not allowed": ("are not recommended",),
    "must not": ("should not", "need not"),
}
_DUTY_SAME = {"must": ("have to",), "required": ("mandatory",), "should": ("ought to",)}
_TO_DET = frozenset("the a an your our their this these those all any each every it them".split())


@lru_cache(maxsize=4096)
def _base_verb(word: str) -> bool:
    """Whether `word` is a verb's base form and no noun's or adjective's ("Claim" is both)."""
    import lemminflect

    low = word.lower()
    lemmas = lemminflect.getAllLemmas(low)
    if "VERB" not in lemmas or "ADJ" in lemmas:
        return False
    return low in lemminflect.getInflection(lemmas["VERB"][0], tag="VB")


def _imperative(sentence: str) -> bool:
    words = sentence.split()
    if len(words) < 3 or not _base_verb(words[0]):
        return False
    second = words[1].lower().strip(",")
    return second in _TO_DET or second.isdigit() or second in ("up", "out", "in", "on", "off")


def obligation(scene: Scene) -> list[Option]:
    """An instruction or duty weakened to a recommendation or a choice, or a recommendation
    made a duty; controls: "must" as "have to", an imperative opened with "Please"."""
    s = scene.sentence
    out = []
    pattern = re.compile(r"\b(" + "|".join(sorted(_DUTY, key=len, reverse=True)) + r")\b", re.I)
    for match in pattern.finditer(s):
        for new in _DUTY[match.group().lower()]:
            text = sub_at(s, match, new)
            if not re.search(r"\b(?:should|can|may|must) not not\b", text):
                out.append(Option("modal", text, True))
    same = re.compile(r"\b(" + "|".join(_DUTY_SAME) + r")\b(?! not)", re.I)
    for match in same.finditer(s):
        out.append(Option("control_modal", sub_at(s, match, _DUTY_SAME[match.group()][0]), False))
    if _imperative(s):
        rest = lower_first(s)
        out.append(Option("recommended", f"It is recommended that you {rest}", True))
        out.append(Option("optional", f"Optionally, {rest}", True))
        out.append(Option("should", f"You should {rest}", True))
        out.append(Option("control_please", f"Please {rest}", False))
    return out


# -- frequency and quantity ---------------------------------------------------------------------

_OFTEN = {
    "always": ("usually", "sometimes"),
    "never": ("rarely", "sometimes"),
    "usually": ("never", "rarely"),
    "often": ("rarely",),
    "sometimes": ("never", "usually"),
    "rarely": ("often",),
    "every day": ("most days",),
    "daily": ("weekly",),
    "each": ("many",),
    "all": ("many",),
    "none": ("some",),
    "every": ("most",),
}
_OFTEN_SAME = {"always": "at all times", "never": "at no time", "usually": "normally"}


def frequency(scene: Scene) -> list[Option]:
    """A word of how often or of how many shifted ("always" -> "usually", "never" ->
    "rarely", "all" -> "many"); control: "always" as "at all times"."""
    s = scene.sentence
    out = []
    pattern = re.compile(r"\b(" + "|".join(sorted(_OFTEN, key=len, reverse=True)) + r")\b", re.I)
    for match in pattern.finditer(s):
        word = match.group().lower()
        if word == "all" and re.match(r"all (?:the|of|day|year|week)\b", s[match.start() :], re.I):
            continue
        for new in _OFTEN[word]:
            out.append(Option("often", sub_at(s, match, new), True))
    same = re.compile(r"\b(" + "|".join(_OFTEN_SAME) + r")\b", re.I)
    for match in same.finditer(s):
        new = _OFTEN_SAME[match.group().lower()]
        out.append(Option("control_often", sub_at(s, match, new), False))
    return out


# -- conditions and exceptions ------------------------------------------------------------------

_IF = re.compile(r"\b(if|unless|only if|even if|when)\b", re.I)
_FLIP_IF = {"if": ("unless", "even if"), "when": ("unless",), "unless": ("if",)}
_FLIP_IF |= {"only if": ("even if",), "even if": ("only if",)}
_EXCEPT = re.compile(
    r",?\s*\(?\b(except(?: for| on| when| that| in)?|excluding|other than|apart from|"
    r"with the exception of|not including|but not)\b[^.;:!?)]*\)?",
    re.I,
)


def condition_flip(scene: Scene) -> list[Option]:
    """A condition reversed ("if" -> "unless") or an exception dropped or turned into an
    inclusion ("except Sundays" -> "including Sundays"); control: "if" as "provided that"."""
    s = scene.sentence
    body, end = _body(s)
    out = []
    for match in _IF.finditer(s):
        word = match.group().lower()
        for new in _FLIP_IF.get(word, ()):
            out.append(Option("condition", sub_at(s, match, new), True))
        if word == "if":
            out.append(Option("control_provided", sub_at(s, match, "provided that"), False))
    for match in _EXCEPT.finditer(body):
        kept = (body[: match.start()] + body[match.end() :]).rstrip(" ,")
        if len(kept.split()) >= 3:
            out.append(Option("exception_dropped", kept + end, True))
        lead = match.group(1)
        at = match.start(1)
        flipped = body[:at] + case_as(lead, "including") + body[at + len(lead) :]
        if re.search(r"\bincluding (?:for|on|when|that|in)\b", flipped, re.I):
            flipped = re.sub(r"\b(including) (?:for|when|that) ", r"\1 ", flipped, flags=re.I)
        out.append(Option("exception_flipped", flipped + end, True))
    return out


# -- "only" dropped or moved ---------------------------------------------------------------------

_ONLY = re.compile(r"(?<!\bnot )(?<!\bif )\bonly\b ?", re.I)
_AUX = re.compile(r"\b(?:can|may|must|will|should|is|are|was|were|has|have)\b", re.I)


def only_shift(scene: Scene) -> list[Option]:
    """The statement's "only" dropped, or moved to another word ("Only members can book" ->
    "Members can only book"); control: "only" as "solely" in its place."""
    s = scene.sentence
    out = []
    for match in _ONLY.finditer(s):
        head = s[: match.start()]
        rest = (head if match.group().endswith(" ") else head.rstrip()) + s[match.end() :]
        dropped = rest[:1].upper() + rest[1:] if match.start() == 0 else rest
        if len(dropped.split()) >= 3:
            out.append(Option("only_dropped", dropped, True))
        aux = _AUX.search(dropped, match.start() + 1 if match.start() else 0)
        if match.start() == 0 and aux is not None:
            moved = f"{dropped[: aux.end()]} only{dropped[aux.end() :]}"
            out.append(Option("only_moved", moved, True))
        elif match.start() and s[:1].isupper() and not _AUX.match(s):
            out.append(Option("only_moved", f"Only {lower_first(rest)}", True))
        word = case_as(match.group().strip(), "solely")
        out.append(
            Option("control_solely", f"{s[: match.start()]}{word} {s[match.end() :]}", False)
        )
    return out


SHIFTS = {
    "comparative": comparative,
    "obligation": obligation,
    "frequency": frequency,
    "condition_flip": condition_flip,
    "unit_change": unit_change,
    "range_narrow": range_narrow,
    "only_shift": only_shift,
}
