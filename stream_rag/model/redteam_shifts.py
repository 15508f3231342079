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
- `unit_change`: a unit of length, mass or volume swapped, "working days" as "calendar days",
  a share as an amount ("25%" -> "£25"), the days a statement holds on narrowed or changed
  ("every day" as "on weekdays"); controls: "7 working days" as "seven working days", "every
  day" as "daily"
- `range_narrow`: a range narrowed ("15 to 29" -> "15 to 20") or cut to its upper end
- `only_shift`: the statement's "only" dropped or moved to another word; control: "solely"
"""

from __future__ import annotations

import re
from functools import lru_cache

from .redteam import Option, Scene, case_as, lower_first, sub_at

__all__ = [
    "SHIFTS",
    "comparative",
    "condition_flip",
    "frequency",
    "obligation",
    "only_shift",
    "range_narrow",
    "unit_change",
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


# -- units --------------------------------------------------------------------------------------

_UNITS = {
    "km": "miles",
    "kilometres": "miles",
    "kilometers": "miles",
    "miles": "km",
    "mile": "km",
    "metres": "feet",
    "meters": "feet",
    "m": "ft",
    "feet": "metres",
    "kg": "lb",
    "lb": "kg",
    "lbs": "kg",
    "litres": "gallons",
    "liters": "gallons",
    "l": "gal",
    "minutes": "hours",
    "minute": "hour",
    "mins": "hours",
    "cm": "inches",
    "inches": "cm",
}
_NUMBER_UNIT = re.compile(
    r"(?<=\d)(\s?)(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")\b(?!\.\d)"
)
_DAY_KIND = {"working": "calendar", "business": "calendar", "calendar": "working"}
# The days a statement holds on narrowed or changed ("every day" as "on weekdays"); control:
# "every day" as "daily".
_DAY_SET = re.compile(
    r"\b(?:(?:on )?every day|daily|(?:on )?weekdays|(?:at|on) (?:the )?weekends?)\b", re.I
)
_DAY_SETS = ("every day", "on weekdays", "at weekends")
_PERCENT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s?(%|percent|per cent)")
_CURRENCY = re.compile(r"[$€£]")


def unit_change(scene: Scene) -> list[Option]:
    """A unit of length, mass, volume or minutes swapped with the number kept, "working days"
    as "calendar days", a share as an amount, other days; controls: "7 working days" as
    "seven working days" (under ten, as written words), "every day" as "daily"."""
    s = scene.sentence
    out = []
    for match in _NUMBER_UNIT.finditer(s):
        new = _UNITS[match.group(2)]
        out.append(Option("unit", s[: match.start(2)] + new + s[match.end(2) :], True))
    for match in re.finditer(r"\b(working|business|calendar)(?= days?\b)", s, re.I):
        out.append(Option("day_kind", sub_at(s, match, _DAY_KIND[match.group().lower()]), True))
        after = s[: match.start()].rstrip()
        if match.group().lower() != "calendar" and re.search(r"\d$", after):
            out.append(Option("day_kind_dropped", s[: match.start()] + s[match.end() + 1 :], True))
    for match in _DAY_SET.finditer(s):
        said = match.group().lower()
        kind = "weekday" if "weekday" in said else "weekend" if "weekend" in said else "day"
        for new in _DAY_SETS:
            if not new.endswith((kind, kind + "s")):
                out.append(Option("day_set", sub_at(s, match, new), True))
        if "every day" in said:
            out.append(Option("control_daily", sub_at(s, match, "daily"), False))
    block = " ".join(scene.own)
    sign = _CURRENCY.search(block) or _CURRENCY.search(" ".join(scene.blocks.values())) or None
    for match in _PERCENT.finditer(s):
        symbol = sign.group() if sign is not None else "$"
        text = f"{s[: match.start()]}{symbol}{match.group(1)}{s[match.end() :]}"
        out.append(Option("share_as_amount", text, True))
    words = ("one two three four five six seven eight nine").split()
    for match in re.finditer(r"(?<![\d.,$€£])([1-9])(?= (?:working|business|calendar) days?)", s):
        if re.search(r"\d\s*(?:-|–|to)\s*$", s[: match.start()]):
            continue  # a range's end: "3 to five" is no way to write it
        text = s[: match.start()] + words[int(match.group()) - 1] + s[match.end() :]
        out.append(Option("control_words", text, False))
    return out


# -- ranges narrowed ----------------------------------------------------------------------------

_RANGE = re.compile(r"\b(\d+)(\s*(?:-|–|to)\s*)(\d+)\b(?![:.]\d)")


def range_narrow(scene: Scene) -> list[Option]:
    """A range narrowed from either end ("15 to 29" -> "15 to 20", "20 to 29") or cut to its
    upper end; control: the range written with "and" ("between 15 and 29")."""
    s = scene.sentence
    out = []
    for match in _RANGE.finditer(s):
        low, high = int(match.group(1)), int(match.group(3))
        if high - low < 2:
            continue
        mid = (low + high + 1) // 2
        for a, b in ((low, mid), (mid, high)):
            text = s[: match.start()] + f"{a}{match.group(2)}{b}" + s[match.end() :]
            out.append(Option("narrowed", text, True))
        out.append(Option("upper_end", s[: match.start()] + str(high) + s[match.end() :], True))
        if not s[max(0, match.start() - 8) : match.start()].lower().strip().endswith(("from",)):
            text = s[: match.start()] + f"between {low} and {high}" + s[match.end() :]
            out.append(Option("control_between", text, False))
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
