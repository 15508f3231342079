"""The red team's fifth round, its numbers' units and ranges (model/redteam_shifts.py has the
rest): false sentences that keep the block's number and change what it counts or how far it
reaches.

- `unit_change`: a unit of length, mass or volume swapped, "working days" as "calendar days",
  a share as an amount ("25%" -> "£25"), the days a statement holds on narrowed or changed
  ("every day" as "on weekdays"); controls: "7 working days" as "seven working days", "every
  day" as "daily"
- `range_narrow`: a range narrowed ("15 to 29" -> "15 to 20") or cut to its upper end
"""

from __future__ import annotations

import re

from .redteam import Option, Scene, sub_at

__all__ = ["range_narrow", "unit_change"]

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
