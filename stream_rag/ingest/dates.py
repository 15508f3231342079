"""When a document says it was last updated, as an ISO date ("2024-01-15"): a "Last updated"
line near its top (also in German or French: "Stand: 15. Januar 2024", "Mis à jour le 3 mars
2025", "15.01.2024"), Markdown front matter, an HTML `<meta>` date, else the DOCX or PDF
properties its editor saved. None when it says nothing a reader could check ("03/04/2024"
after an English cue: March or April).

What the author wrote wins over what the file records: a word processor stamps a copy, a
template, or a file saved again unchanged with the day it was saved.
"""

from __future__ import annotations

import re
from datetime import date, datetime

__all__ = ["pdf_date", "property_date", "stated_date"]

# English, German and French names, written out and shortened.
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "january jan januar jänner janvier janv",
            "february feb februar februari février fevrier févr fevr",
            "march mar märz maerz mrz mär mars",
            "april apr avril avr",
            "may mai",
            "june jun juni juin",
            "july jul juli juillet juil",
            "august aug août aout",
            "september sep sept septembre",
            "october oct oktober okt octobre",
            "november nov novembre",
            "december dec dezember dez décembre decembre déc",
        ),
        start=1,
    )
    for name in names.split()
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATE = re.compile(
    r"(?P<iso>(?P<y1>\d{4})-(?P<m1>\d{1,2})-(?P<d1>\d{1,2}))"
    # "15.01.2024" (day first), "15/01/2024" or "01/15/2024" (`_numeric`)
    r"|(?P<num>(?P<d5>\d{1,2})(?P<sep>[./])(?P<m5>\d{1,2})(?P=sep)(?P<y5>\d{4}))"
    # "15 January 2024", "15. Januar 2024", "1er juin 2023"
    rf"|(?P<dmy>(?P<d2>\d{{1,2}})(?:st|nd|rd|th|er|\.)?\s+{_MONTH}\s+(?P<y2>\d{{4}}))"
    rf"|(?P<mdy>{_MONTH.replace('month', 'month3')}\s+(?P<d3>\d{{1,2}})(?:st|nd|rd|th)?,?\s+"
    r"(?P<y3>\d{4}))"
    rf"|(?P<my>{_MONTH.replace('month', 'month4')}\s+(?P<y4>\d{{4}}))",
    re.IGNORECASE,
)
# "Last updated: 15 January 2024", "Updated on March 3, 2025", "Revised 2025-02-01",
# "Effective from 1 June 2023", "These fees apply from 1 June 2023", "Valid as of May 2024".
# In German or French ("Stand: 15.01.2024", "Gültig ab 1. Juni 2023", "Mis à jour le 3 mars
# 2025", "En vigueur à partir du 01/06/2023"), where a numeric date puts the day first.
_SAID = re.compile(
    r"\b(?:(?:last\s+)?(?:updated|revised|modified|reviewed|changed)(?:\s+on)?"
    r"|effective(?:\s+(?:from|as\s+of|on))?|valid\s+(?:from|as\s+of)|appl(?:y|ies)\s+from"
    r"|in\s+force\s+from|as\s+of"
    r"|(?P<local>(?:zuletzt\s+)?(?:aktualisiert|geändert|überarbeitet)(?:\s+am)?"
    r"|letzte\s+(?:aktualisierung|änderung)|stand(?=\s*:)|gültig\s+(?:ab|seit)|gilt\s+ab"
    r"|in\s+kraft\s+(?:ab|seit)|(?:dernière\s+)?mise\s+à\s+jour(?:\s+le)?"
    r"|(?:mis|mise)\s+à\s+jour\s+le|modifié\s+le|révisé\s+le"
    r"|en\s+vigueur\s+(?:à\s+partir\s+du|depuis\s+le|du|le)"
    r"|valable\s+(?:à\s+partir\s+du|dès\s+le|depuis\s+le)|à\s+compter\s+du))\s*:?\s*",
    re.IGNORECASE,
)
# Front matter keys and `<meta>` names that hold when a page was last changed, in order.
_KEYS = (
    "last_modified",
    "last-modified",
    "lastmod",
    "modified",
    "updated",
    "last_updated",
    "dcterms.modified",
    "article:modified_time",
    "og:updated_time",
    "date",
    "dc.date",
    "dcterms.date",
    "article:published_time",
)
_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_FRONT_KEY = re.compile(r"^([\w.:-]+)[ \t]*:[ \t]*['\"]?([^'\"\r\n]+?)['\"]?[ \t]*$", re.M)
_META = re.compile(r"<meta\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"""([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_TOP_LINES = 12  # a "Last updated" line stands near the top (or is the page's last line)


def stated_date(text: str, raw: str = "", media_type: str = "") -> str | None:
    """The date a document's own words give it: front matter or `<meta>` in `raw` (the
    Markdown or HTML source), else a "Last updated ..." line of its extracted `text`."""
    if media_type.startswith("text/markdown") and (found := _front_matter(raw)):
        return found
    if media_type.startswith("text/html") and (found := _meta(raw)):
        return found
    lines = [line for line in text.splitlines() if line.strip()]
    for line in [*lines[:_TOP_LINES], *lines[-2:]]:
        said = _SAID.search(line)
        if said is None:
            continue
        day_first = True if said.group("local") else None
        if found := _parse(line[said.end() : said.end() + 40], True, day_first):
            return found
    return None


def property_date(value: object) -> str | None:
    """A DOCX core property (`modified`, `created`): a datetime, or None."""
    if isinstance(value, datetime | date):
        return _iso(value.year, value.month, value.day)
    return None


def pdf_date(value: object) -> str | None:
    """A PDF information date ("D:20260120103000Z"), as pypdf hands it (a datetime) or raw."""
    if isinstance(value, datetime | date):
        return property_date(value)
    match = re.match(r"(?:D:)?(\d{4})(\d{2})?(\d{2})?", str(value or ""))
    if match is None:
        return None
    year, month, day = match.groups()
    return _iso(int(year), int(month or 1), int(day or 1))


def _front_matter(raw: str) -> str | None:
    front = _FRONT.match(raw)
    if front is None:
        return None
    keys = {k.casefold(): v for k, v in _FRONT_KEY.findall(front.group(1))}
    return next((d for key in _KEYS if key in keys and (d := _parse(keys[key]))), None)


def _meta(raw: str) -> str | None:
    found: dict[str, str] = {}
    for tag in _META.findall(raw[:65536]):  # <meta> is in the head
        attrs = {m[0].casefold(): m[1] or m[2] or m[3] for m in _ATTR.findall(tag)}
        name = attrs.get("name") or attrs.get("property") or attrs.get("http-equiv") or ""
        if name.casefold() in _KEYS and attrs.get("content"):
            found.setdefault(name.casefold(), attrs["content"])
    return next((d for key in _KEYS if key in found and (d := _parse(found[key]))), None)


def _parse(text: str, at_start: bool = False, day_first: bool | None = None) -> str | None:
    """The first date written in `text` (at its very start, with `at_start`); `day_first`:
    whether "03/04/2024" is the 3rd of April (None: it is no date a reader could check)."""
    match = _DATE.search(text)
    if match is None or (at_start and match.start() > 0):
        return None
    groups = match.groupdict()
    if groups["iso"]:
        return _iso(int(groups["y1"]), int(groups["m1"]), int(groups["d1"]))
    if groups["num"]:
        return _numeric(
            int(groups["d5"]), int(groups["m5"]), int(groups["y5"]), groups["sep"], day_first
        )
    if groups["dmy"]:
        month = _MONTHS[groups["month"].casefold()]
        return _iso(int(groups["y2"]), month, int(groups["d2"]))
    if groups["mdy"]:
        month = _MONTHS[groups["month3"].casefold()]
        return _iso(int(groups["y3"]), month, int(groups["d3"]))
    return _iso(int(groups["y4"]), _MONTHS[groups["month4"].casefold()], 1)


def _numeric(first: int, second: int, year: int, sep: str, day_first: bool | None) -> str | None:
    """A date of numbers only: dotted is day first (German); with slashes, a part over 12 is
    the day, else the cue's language says (French: day first) or nothing does."""
    if sep == "." or first > 12 or day_first:
        return _iso(year, second, first)
    if second > 12:
        return _iso(year, first, second)
    return None


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:  # "2024-13-45": no date
        return None
