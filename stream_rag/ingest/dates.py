"""When a document says it was last updated, as an ISO date ("2024-01-15"): a "Last updated"
line near its top, Markdown front matter, an HTML `<meta>` date, else the DOCX or PDF
properties its editor saved. None when it says nothing a reader could check.

What the author wrote wins over what the file records: a word processor stamps a copy, a
template, or a file saved again unchanged with the day it was saved.
"""

from __future__ import annotations

import re
from datetime import date, datetime

__all__ = ["pdf_date", "property_date", "stated_date"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        ),
        start=1,
    )
    for name in names.split()
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATE = re.compile(
    r"(?P<iso>(?P<y1>\d{4})-(?P<m1>\d{1,2})-(?P<d1>\d{1,2}))"
    rf"|(?P<dmy>(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\s+(?P<y2>\d{{4}}))"
    rf"|(?P<mdy>{_MONTH.replace('month', 'month3')}\s+(?P<d3>\d{{1,2}})(?:st|nd|rd|th)?,?\s+"
    r"(?P<y3>\d{4}))"
    rf"|(?P<my>{_MONTH.replace('month', 'month4')}\s+(?P<y4>\d{{4}}))",
    re.IGNORECASE,
)
# "Last updated: 15 January 2024", "Updated on March 3, 2025", "Revised 2025-02-01",
# "Effective from 1 June 2023", "These fees apply from 1 June 2023", "Valid as of May 2024".
_SAID = re.compile(
    r"\b(?:(?:last\s+)?(?:updated|revised|modified|reviewed|changed)(?:\s+on)?"
    r"|effective(?:\s+(?:from|as\s+of|on))?|valid\s+(?:from|as\s+of)|appl(?:y|ies)\s+from"
    r"|in\s+force\s+from|as\s+of)\s*:?\s*",
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
        if said is not None and (found := _parse(line[said.end() : said.end() + 40], True)):
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


def _parse(text: str, at_start: bool = False) -> str | None:
    """The first date written in `text` (at its very start, with `at_start`)."""
    match = _DATE.search(text)
    if match is None or (at_start and match.start() > 0):
        return None
    groups = match.groupdict()
    if groups["iso"]:
        return _iso(int(groups["y1"]), int(groups["m1"]), int(groups["d1"]))
    if groups["dmy"]:
        month = _MONTHS[groups["month"].casefold()]
        return _iso(int(groups["y2"]), month, int(groups["d2"]))
    if groups["mdy"]:
        month = _MONTHS[groups["month3"].casefold()]
        return _iso(int(groups["y3"]), month, int(groups["d3"]))
    return _iso(int(groups["y4"]), _MONTHS[groups["month4"].casefold()], 1)


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:  # "2024-13-45": no date
        return None
