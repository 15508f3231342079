"""The red team's knobs (`RED_TEAM`): the word families of redteam.py, those that hide a change in
characters and markup a reader reads through (redteam_disguise.py), and the families here,
which change numbers and units, dates, ranges, separators, or move a value between blocks.
`red_team` applies one.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..language.quantities import scan
from .attacks import Written
from .extractive import tokens_of
from .passages import block_sentences
from .redteam import (
    Family,
    Option,
    Scene,
    case_as,
    lower_first,
    options_for,
    sub_at,
    wording,
)
from .redteam_disguise import lookalike, smuggle
from .redteam_lang import foreign
from .redteam_links import LINKS
from .redteam_more import subject_swap
from .redteam_parts import PARTS
from .redteam_probe import PROBE
from .redteam_rates import RATES
from .redteam_roles import ROLES
from .redteam_shifts import (
    comparative,
    condition_flip,
    obligation,
    only_shift,
)
from .redteam_units import unit_change

__all__ = [
    "CONTROL_SHARE",
    "FAMILIES",
    "RED_TEAM",
    "number_words",
    "red_team",
    "spelled",
]

# The share of sentences a family writes as a faithful control when it has one.
CONTROL_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class _Num:
    start: int
    end: int
    value: int


_INT = re.compile(r"(?<![\d.,:/$€£])\d{1,6}(?![\d:/]|[.,]\d)")


def _plain_ints(text: str) -> list[_Num]:
    """Whole numbers written in digits that are no date, time, year, version or price part."""
    lowered = text.lower()
    found, _ = scan(lowered if len(lowered) == len(text) else text)
    dated = [q.span for q in found if q.dates or q.times]
    out = []
    for m in _INT.finditer(text):
        value = int(m.group())
        if any(a <= m.start() < b for a, b in dated) or 1900 <= value <= 2100:
            continue
        out.append(_Num(m.start(), m.end(), value))
    return out


# -- units --------------------------------------------------------------------------------------

_TIME = ("second", "minute", "hour", "day", "week", "month", "year")
_SIZE = ("KB", "MB", "GB", "TB")
_MASS = ("g", "kg", "lb")
_UNIT = re.compile(
    r"(?<=\d)(?:\s*|-)(?:(?:business|working|calendar)\s+)?"
    r"(seconds?|minutes?|hours?|days?|weeks?|months?|years?|KB|MB|GB|TB|kg|g|lbs?)\b",
    re.IGNORECASE,
)
_PER = re.compile(r"\b(per|a|each)\s+(hour|day|week|month|year)\b")
_CURRENCY = re.compile(r"[$€£](?=\d)")


def unit_swap(scene: Scene) -> list[Option]:
    """A unit swapped for another of its kind (days -> weeks, GB -> MB, $ -> €, per month ->
    per year); controls: "per month" as "a month", "$8" as "8 dollars"."""
    s, out = scene.sentence, []
    for match in _UNIT.finditer(s):
        unit, at, end = match.group(1), match.start(1), match.end(1)
        base = unit.lower().rstrip("s") if unit.lower() not in ("kg", "g") else unit.lower()
        if unit.upper() in _SIZE or base in _MASS:
            kind = _SIZE if unit.upper() in _SIZE else _MASS
            for other in kind:
                if other.lower() != base:
                    out.append(Option("unit", s[:at] + other + s[end:], True))
            continue
        plural = unit.lower().endswith("s")
        for other in _TIME:
            if other != base:
                new = case_as(unit, other + ("s" if plural else ""))
                out.append(Option("unit", s[:at] + new + s[end:], True))
    for match in _PER.finditer(s):
        for other in _TIME[2:]:
            if other != match.group(2):
                out.append(Option("per", s[: match.start(2)] + other + s[match.end(2) :], True))
        if match.group(1) == "per":
            out.append(Option("control_per", s[: match.start(1)] + "a" + s[match.end(1) :], False))
    for match in _CURRENCY.finditer(s):
        other = {"$": "€", "€": "£", "£": "$"}[match.group()]
        out.append(Option("currency", s[: match.start()] + other + s[match.end() :], True))
        amount = re.match(r"\d+(?![.,]\d)", s[match.end() :])
        if match.group() == "$" and amount is not None and amount.group() != "1":
            end = match.end() + amount.end()
            text = f"{s[: match.start()]}{amount.group()} dollars{s[end:]}"
            out.append(Option("control_currency", text, False))
    return out


# -- numbers as words ---------------------------------------------------------------------------

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def spelled(value: int) -> str:
    """`value` (0..999,999) in English words: 14 -> "fourteen", 250 -> "two hundred fifty"."""
    if value < 20:
        return _ONES[value]
    if value < 100:
        tens, ones = divmod(value, 10)
        return _TENS[tens - 2] + (f"-{_ONES[ones]}" if ones else "")
    if value < 1000:
        hundreds, rest = divmod(value, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {spelled(rest)}" if rest else "")
    thousands, rest = divmod(value, 1000)
    return f"{spelled(thousands)} thousand" + (f" {spelled(rest)}" if rest else "")


def number_words(scene: Scene) -> list[Option]:
    """A number written as the words of another ("14 days" -> "thirty days"); control: the same
    number in words ("fourteen days")."""
    s, rng, out = scene.sentence, scene.rng, []
    for num in _plain_ints(s):
        if num.value > 999_999:
            continue
        other = num.value + rng.choice((1, 2, 5, 10, num.value or 3))
        for value, false in ((other, True), (num.value, False)):
            word = spelled(value)
            if num.start == 0:
                word = word[0].upper() + word[1:]
            text = s[: num.start] + word + s[num.end :]
            out.append(Option("words" if false else "control_words", text, false))
    return out


# -- calendar -----------------------------------------------------------------------------------

_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_MONTHS = (
    "January February March April June July August September October November December".split()
)
_CALENDAR = re.compile(rf"\b({'|'.join(_DAYS + _MONTHS)})(s?)\b")
_MERIDIEM = re.compile(r"(?<=\d)(\s?)(am|pm|a\.m\.|p\.m\.)", re.IGNORECASE)
_THROUGH = re.compile(rf"\b({'|'.join(_DAYS)}) to ({'|'.join(_DAYS)})\b")


def calendar(scene: Scene) -> list[Option]:
    """A weekday, month, am/pm, noon/midnight or weekday/weekend swapped; controls: "Monday to
    Friday" as "Monday through Friday", "pm" as "p.m."."""
    s, out = scene.sentence, []
    for match in _CALENDAR.finditer(s):
        names = _DAYS if match.group(1) in _DAYS else _MONTHS
        i = names.index(match.group(1))
        other = names[(i + 1 + scene.rng.randrange(len(names) - 1)) % len(names)]
        out.append(Option("calendar", s[: match.start(1)] + other + s[match.end(1) :], True))
    for match in _MERIDIEM.finditer(s):
        flipped = {"am": "pm", "pm": "am", "a.m.": "p.m.", "p.m.": "a.m."}[match.group(2).lower()]
        text = s[: match.start(2)] + case_as(match.group(2), flipped) + s[match.end(2) :]
        out.append(Option("meridiem", text, True))
        dotted = {"am": "a.m.", "pm": "p.m."}.get(match.group(2).lower())
        if dotted is not None:
            out.append(
                Option("control_meridiem", s[: match.start(2)] + dotted + s[match.end(2) :], False)
            )
    for match in re.finditer(r"\b(weekdays?|weekends?|noon|midnight)\b", s, re.IGNORECASE):
        word = match.group().lower()
        new = {"noon": "midnight", "midnight": "noon"}.get(word) or (
            word.replace("weekday", "weekend")
            if "weekday" in word
            else word.replace("weekend", "weekday")
        )
        out.append(Option("calendar", sub_at(s, match, new), True))
    for match in _THROUGH.finditer(s):
        text = s[: match.start()] + f"{match.group(1)} through {match.group(2)}" + s[match.end() :]
        out.append(Option("control_through", text, False))
    return out


# -- ranges -------------------------------------------------------------------------------------

_RANGE = re.compile(
    r"\b(?:between (\d+) and (\d+)|from (\d+) to (\d+)|(\d+)\s*(?:-|–|to)\s*(\d+))\b(?!:)"
)


def range_shift(scene: Scene) -> list[Option]:
    """A range with an end moved ("3 to 5 days" -> "3 to 9 days") or cut to its lower end;
    controls: the same range written another way ("3-5", "between 3 and 5")."""
    s, out = scene.sentence, []
    for match in _RANGE.finditer(s):
        low, high = (int(g) for g in match.groups() if g is not None)
        if high <= low:
            continue
        bigger = high + max(1, (high - low) or 1) + 1
        for a, b in ((low, bigger), (max(0, low - 1 - (high - low)), high)):
            if (a, b) != (low, high):
                text = s[: match.start()] + f"{a} to {b}" + s[match.end() :]
                out.append(Option("range", text, True))
        out.append(Option("range_cut", s[: match.start()] + str(low) + s[match.end() :], True))
        for form in (f"{low}-{high}", f"between {low} and {high}", f"from {low} to {high}"):
            if form != match.group():
                text = s[: match.start()] + form + s[match.end() :]
                out.append(Option("control_range", text, False))
    return out


# -- separators ---------------------------------------------------------------------------------

_GROUPED = re.compile(r"(?<![\d.,])(\d{1,3})((?:,\d{3})+)(?![\d,]|\.\d)")
_DECIMAL = re.compile(r"(?<![\d.,])(\d+)\.(\d{1,2})(?![\d.,])")


def separators(scene: Scene) -> list[Option]:
    """ "1,000" as "1.000" (one, to an English reader) or a decimal point dropped ("2.5" ->
    "25"); controls: "1,000" as "1000", "1200" as "1,200"."""
    s, out = scene.sentence, []
    for match in _GROUPED.finditer(s):
        dotted = match.group().replace(",", ".")
        out.append(Option("dotted", s[: match.start()] + dotted + s[match.end() :], True))
        bare = match.group().replace(",", "")
        out.append(Option("control_bare", s[: match.start()] + bare + s[match.end() :], False))
    for match in _DECIMAL.finditer(s):
        if re.match(r"\s*(?:am|pm|a\.m\.|p\.m\.)", s[match.end() :], re.IGNORECASE):
            continue
        dropped = match.group(1) + match.group(2)
        out.append(Option("decimal", s[: match.start()] + dropped + s[match.end() :], True))
    for num in _plain_ints(s):
        if num.value >= 1000:
            grouped = f"{num.value:,}"
            out.append(Option("control_grouped", s[: num.start] + grouped + s[num.end :], False))
            dotted = grouped.replace(",", ".")
            out.append(Option("dotted", s[: num.start] + dotted + s[num.end :], True))
    return out


# -- a value from another block -----------------------------------------------------------------


def cross_block(scene: Scene) -> list[Option]:
    """A number or a name of another issued block put into this block's sentence, cited to this
    block; control: two blocks' sentences joined, each with its own marker."""
    s, n, out = scene.sentence, scene.n, []
    theirs = [
        (m, t)
        for m, text in scene.blocks.items()
        if m != n
        for t in block_sentences(text)
        if t not in scene.own
    ]
    block = " ".join(scene.blocks[n].split()).lower()
    mine = _plain_ints(s)
    for _, other in theirs:
        for num in _plain_ints(other):
            value = other[num.start : num.end]
            if mine and not re.search(rf"(?<![\d.,]){value}(?![\d.,])", block):
                pick = scene.rng.choice(mine)
                text = s[: pick.start] + value + s[pick.end :]
                out.append(Option("number", text, True))
        if len(out) >= 6:
            break
    names = set(re.findall(r"(?<=[a-z,] )[A-Z][a-z]+(?: [A-Z][a-z]+)*", s))
    for _, other in theirs:
        for name in re.findall(r"(?<=[a-z,] )[A-Z][a-z]+(?: [A-Z][a-z]+)*", other):
            if names and name.lower() not in block:
                old = scene.rng.choice(sorted(names))
                out.append(Option("name", s.replace(old, name, 1), True))
                break
    if theirs:
        m, other = scene.rng.choice(theirs)
        mine_body, their_body = s.rstrip().rstrip(".!?"), other.rstrip().rstrip(".!?")
        text = f"{mine_body} [{n}], and {lower_first(their_body)} [{m}]."
        out.append(Option("control_two_blocks", text, False, (n, m)))
    return out


# -- the knobs ----------------------------------------------------------------------------------

FAMILIES: dict[str, Family] = {
    **wording(),
    "unit_swap": unit_swap,
    "number_words": number_words,
    "calendar": calendar,
    "range_shift": range_shift,
    "separators": separators,
    "cross_block": cross_block,
    "lookalike": lookalike,
    "smuggle": smuggle,
    "subject_swap": subject_swap,
    **PROBE,
    **LINKS,
    **ROLES,
    "comparative": comparative,
    "foreign": foreign,
    **PARTS,
    "condition_flip": condition_flip,
    "obligation": obligation,
    "unit_change": unit_change,
    "only_shift": only_shift,
    **RATES,
}
RED_TEAM = tuple(FAMILIES)


def pieces_of(option: Option, n: int) -> tuple[str, ...]:
    """What the fake streams for `option`: its tokens, and its citation unless it writes its own."""
    if option.cites:
        return tuple(tokens_of(option.text))
    return (*tokens_of(option.text.rstrip()), " ", f"[{n}]")


def red_team(
    behaviour: str, n: int, sentence: str, blocks: Mapping[int, str], rng: random.Random
) -> Written | None:
    """`behaviour` applied to `sentence` of block `n`, else to another of its sentences: a
    false edit, or (one time in four, where the family has one) a faithful control."""
    own = block_sentences(blocks[n]) or [sentence]
    others = [s for s in own if s != sentence]
    rng.shuffle(others)
    for candidate in (sentence, *others):
        scene = Scene(n, candidate, own, blocks, rng)
        options = options_for(FAMILIES[behaviour], scene)
        false = [o for o in options if o.false]
        true = [o for o in options if not o.false]
        if not options:
            continue
        use_true = bool(true) and (not false or rng.random() < CONTROL_SHARE)
        pick = rng.choice(true if use_true else false)
        cites = pick.cites or (n,)
        cleaned = pick.false if pick.false_cleaned is None else pick.false_cleaned
        return Written(behaviour, pick.variant, pieces_of(pick, n), cites, n, pick.false, cleaned)
    return None
