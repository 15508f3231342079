"""Numbers, dates and times in text, for the citation gate's number check.

`canonical` rewrites number words as digits ("thirty" -> 30, 三十 -> 30) so that words and
digits compare alike; `scan` finds what a text states; `Stated` is what a block vouches for.
Values compare by number and unit: "$8" matches "8 dollars", "50%" matches "50 percent", and
a block's unitless 8 vouches for "$8", but "$8" never matches "8 days" once a unit is stated.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..text import normalise

__all__ = [
    "NUMBER_WORDS",
    "UNIT_WORDS",
    "Quantity",
    "Stated",
    "canonical",
    "numerals",
    "quantities",
    "scan",
]

_SMALL_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    " fifteen sixteen seventeen eighteen nineteen"
)
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_ORDINAL_WORDS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"
_SMALL = {w: i for i, w in enumerate(_SMALL_WORDS.split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate(_TENS_WORDS.split())}
_SCALES = {"hundred": 10**2, "thousand": 10**3, "million": 10**6, "billion": 10**9}
_SCALES["trillion"] = 10**12
_ORDINALS = {w: i + 1 for i, w in enumerate(_ORDINAL_WORDS.split())}
NUMBER_WORDS = frozenset(_SMALL) | frozenset(_TENS) | frozenset(_SCALES)
_ORDINAL_RE = re.compile(rf"(?<![a-z])(one|{'|'.join(_ORDINALS)})(?![a-z])")
_WORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_WORD_RUN = re.compile(rf"\b(?:{_WORD})(?:(?:\s+|-|(?<=hundred)\s+and\s+)(?:{_WORD}))*\b")

_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"\u3007": 0, "两": 2}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10**4, "亿": 10**8}
_ZH_COUNTERS = "天日年月周个元%号点分秒次人岁倍件"  # a lone digit before these is a number
_ZH_RUN = re.compile(f"[{''.join(_ZH_DIGITS)}{''.join(_ZH_UNITS)}]+(?=([{_ZH_COUNTERS}]?))")

_MONTH_ABBR = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTHS = {m: i + 1 for i, m in enumerate(_MONTH_ABBR)}
_MONTH = (
    r"\b(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
# A number starts at a digit not preceded by a letter, digit or separator (b2c, 3.50). The
# look-behind follows the digit so that re scans for digits instead of trying it everywhere.
# Only Latin letters count: a digit right after CJK text starts a number (后45天).
_START = r"\d(?<![a-z\d_.,]\d)"
_DATE_RES = (
    re.compile(rf"(?P<y>{_START}\d{{3}})-(?P<m>\d{{1,2}})-(?P<d>\d{{1,2}})(?!\d)"),
    re.compile(rf"(?P<a>{_START}\d?)[/.](?P<b>\d{{1,2}})[/.](?P<y>\d{{4}}|\d{{2}})(?![\d.])"),
    re.compile(rf"{_MONTH}\s+(?P<d>{_START}\d?)(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}})\b)?"),
    re.compile(
        rf"(?P<d>{_START}\d?)(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+(?P<y>\d{{4}})\b)?"
    ),
    re.compile(rf"{_MONTH},?\s+(?P<y>\d{{4}})\b"),
)
_MONTH_HINT = re.compile("|".join(_MONTH_ABBR))
_TIME_RE = re.compile(
    rf"(?P<h>{_START}\d?)(?::(?P<m>\d{{2}}))?\s*(?P<mer>[ap])(?:m\b|\.m\.)"
    rf"|(?P<h2>{_START}\d?):(?P<m2>\d{{2}})(?::\d{{2}})?(?![\d:])"
)
_QUANTITY_RE = re.compile(
    rf"(?P<cur>[$€£¥]\s?)?(?P<num>{_START}(?:\d{{0,2}}(?:,\d{{3}})+|\d*)(?:\.\d+)?)"
    r"(?:st|nd|rd|th|s)?(?:\s*(?P<scale>hundred|thousand|million|billion|trillion)\b)?"
    r"(?:\s*(?P<unit>%|percent\b|per\s+cent\b|dollars?\b|usd\b|euros?\b|eur\b))?"
)
_DIGIT = re.compile(r"\d")
_UNIT_OF = {"%": "%", "percent": "%", "per cent": "%", "dollar": "$", "dollars": "$", "usd": "$"}
_UNIT_OF |= {"euro": "€", "euros": "€", "eur": "€"}
_NEXT_WORD = re.compile(r"\s*([^\W\d_]+)")
# A year range written short ("2018-19", "1998-99", "2018/19", with any dash): the two digits
# after a year and a dash or slash are also read as the year they end on.
_SHORT_RANGE = re.compile(r"(?<![\d.,])([12]\d)(\d\d)\s?[-\u2013\u2014/]\s?$")
# Quantity words are checked by value, not as words: "thirty" must match "30".
UNIT_WORDS = frozenset(_UNIT_OF) - {"%", "per cent"} | {"cent"}

Date = tuple[int | None, int, int | None]  # year (None: not stated), month, day (None: not stated)
Time = tuple[int, int]
Value = tuple[float, str | None]  # value, unit ("%", "$", "€", "£", "¥") or None


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number, date or time stated in a text, with every way it can be read."""

    text: str
    values: tuple[Value, ...] = ()
    dates: tuple[Date, ...] = ()
    times: tuple[Time, ...] = ()
    span: tuple[int, int] = field(default=(0, 0), compare=False)  # where, in the scanned text


def _zh_number(run: str) -> int:
    if not any(c in _ZH_UNITS for c in run):
        return int("".join(str(_ZH_DIGITS[c]) for c in run))  # 二〇二四 -> 2024
    total = section = digit = 0
    for char in run:
        if char in _ZH_DIGITS:
            digit = _ZH_DIGITS[char]
        elif char in ("万", "亿"):
            total += (section + digit) * _ZH_UNITS[char]
            section = digit = 0
        else:
            section += (digit or 1) * _ZH_UNITS[char]
            digit = 0
    return total + section + digit


def _zh_sub(match: re.Match[str]) -> str:
    run = match.group()
    # Numerals are also parts of words: 统一, 一些 (a lone digit, no counter), 十分 ("very"),
    # 万一 ("in case"). Read a run only if it opens with a digit (or 十 and a digit: 十五) and
    # is a lone digit only before a counter (一天).
    opens = run[0] in _ZH_DIGITS or (run[0] == "十" and len(run) > 1 and run[1] in _ZH_DIGITS)
    if not opens or (len(run) == 1 and not match.group(1)):
        return run
    return str(_zh_number(run))


def _words_to_numbers(words: list[str]) -> list[int]:
    out: list[int] = []
    total = current = 0
    last = ""
    for word in words:
        if word in _SMALL or word in _TENS:
            tens = word in _TENS
            if last in ("small", "tens+small") or (tens and last == "tens"):
                out.append(total + current)
                total = current = 0
            current += _TENS[word] if tens else _SMALL[word]
            last = "tens" if tens else ("tens+small" if last == "tens" else "small")
        elif last:  # a scale word after a number
            if word == "hundred":
                current *= 100
            else:
                total, current = total + current * _SCALES[word], 0
            last = "scale"
    if last:
        out.append(total + current)
    return out


def _en_sub(match: re.Match[str]) -> str:
    run = match.group()
    if run == "one":  # "one of them", "no one": not a claimed quantity
        return run
    numbers = _words_to_numbers(re.split(r"\s+and\s+|[\s-]+", run))
    return " ".join(str(n) for n in numbers) if numbers else run


def numerals(text: str) -> str:
    """`text` with English number words written as digits ("fifteen to 18" -> "15 to 18"), its
    case and everything else kept."""
    lowered = text.lower()
    if len(lowered) != len(text) or _WORD_RUN.search(lowered) is None:
        return text
    out, pos = [], 0
    for match in _WORD_RUN.finditer(lowered):
        out += [text[pos : match.start()], _en_sub(match)]
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)


def canonical(text: str) -> str:
    """NFKC + casefold, with number words ("thirty", "三十") rewritten as digits."""
    text = _ZH_RUN.sub(_zh_sub, normalise(text))
    return _WORD_RUN.sub(_en_sub, text)


def _year(raw: str | None) -> int | None:
    if raw is None:
        return None
    year = int(raw)
    return year + (2000 if year < 70 else 1900) if len(raw) == 2 else year


def _date(match: re.Match[str]) -> Quantity:
    g = match.groupdict()
    year = _year(g.get("y"))
    dates: set[Date]
    if "a" in g:  # 05/01/2024 reads either way round
        a, b = int(g["a"]), int(g["b"])
        dates = {(year, m, d) for m, d in ((a, b), (b, a)) if 1 <= m <= 12 and d <= 31}
    else:
        month = int(g["m"]) if "m" in g else _MONTHS[g["mon"][:3]]
        dates = {(year, month, int(g["d"]) if g.get("d") else None)}
    dated = tuple(sorted(dates, key=str))
    return Quantity(match.group().strip(), dates=dated, span=match.span())


def _time(match: re.Match[str]) -> Quantity:
    hour = int(match.group("h") or match.group("h2"))
    minute = int(match.group("m") or match.group("m2") or 0)
    if meridiem := match.group("mer"):
        hours = [hour % 12 + (12 if meridiem == "p" else 0)]
    else:
        hours = [hour, hour + 12] if 1 <= hour < 12 else [hour]
    timed = tuple((h, minute) for h in hours)
    return Quantity(match.group().strip(), times=timed, span=match.span())


def _value(match: re.Match[str], text: str) -> Quantity:
    value = float(match.group("num").replace(",", ""))
    if scale := match.group("scale"):
        value *= _SCALES[scale]
    unit_word, currency = match.group("unit"), match.group("cur")
    unit = _UNIT_OF[" ".join(unit_word.split())] if unit_word else currency and currency.strip()
    shown = match.group().strip()
    if not unit and (after := _NEXT_WORD.match(text, match.end())):
        word = after.group(1)  # "45 days" says more than "45"
        shown += word[0] if word[0] >= "\u3040" else f" {word}"  # CJK: 45天
    values: tuple[Value, ...] = ((round(value, 6), unit or None),)
    num = match.group("num")
    if len(num) == 2 and not unit and not match.group("scale"):
        year = _SHORT_RANGE.search(text, max(0, match.start() - 8), match.start())
        if year is not None and int(year.group(2)) < int(num):
            values += ((float(int(year.group(1)) * 100 + int(num)), None),)
    return Quantity(shown, values=values, span=match.span())


def quantities(text: str) -> list[Quantity]:
    """Dates, then times, then numbers (with their unit) in `canonical` text."""
    return scan(text)[0]


def scan(text: str) -> tuple[list[Quantity], str]:
    """`quantities(text)`, and `text` with its dates and times blanked out (their words, such
    as "june" or "pm", are checked as values, not as terms)."""
    found: list[Quantity] = []
    if not _DIGIT.search(text):
        return found, text

    def blank(read: Callable[[re.Match[str]], Quantity]) -> Callable[[re.Match[str]], str]:
        def replace(match: re.Match[str]) -> str:
            found.append(read(match))
            return " " * len(match.group())  # later patterns must not read it again

        return replace

    patterns = _DATE_RES if _MONTH_HINT.search(text) else _DATE_RES[:2]
    for pattern in patterns:
        text = pattern.sub(blank(_date), text)
    text = _TIME_RE.sub(blank(_time), text)
    found.extend(_value(match, text) for match in _QUANTITY_RE.finditer(text))
    return found, text


@dataclass(frozen=True, slots=True)
class Stated:
    """The numbers, dates and times one block states, read leniently: a sentence's quantity
    passes if any reading of it is here."""

    values: frozenset[float]  # vouch for a sentence's unitless numbers
    bare: frozenset[float]  # also vouch for numbers with a unit
    with_unit: frozenset[Value]
    dates: frozenset[Date]
    times: frozenset[Time]

    @classmethod
    def of(cls, found: list[Quantity], words: str) -> Stated:
        """From `scan(text)`: its quantities and its text with dates and times blanked."""
        values: set[float] = set()
        bare: set[float] = set()
        with_unit: set[Value] = set()
        dates: set[Date] = set()
        times: set[Time] = set()
        for quantity in found:
            for value, unit in quantity.values:
                (with_unit.add((value, unit)) if unit else bare.add(value))
            for date in quantity.dates:
                dates.add(date)
                values.update(part for part in date if part is not None)  # "in 2024"
            for time in quantity.times:
                times.add(time)
                values.update(time)
        # "1.5 million" also states 1.5; "one" and "third" state 1 and 3.
        for match in _QUANTITY_RE.finditer(words):
            if match.group("scale"):
                values.add(round(float(match.group("num").replace(",", "")), 6))
        bare.update(float(_ORDINALS.get(w, 1)) for w in _ORDINAL_RE.findall(words))
        values |= bare | {value for value, _ in with_unit}
        return cls(
            frozenset(values),
            frozenset(bare),
            frozenset(with_unit),
            frozenset(dates),
            frozenset(times),
        )

    def vouches_for(self, quantity: Quantity) -> bool:
        for value, unit in quantity.values:
            if unit is None and value in self.values:
                return True
            if value in self.bare or (value, unit) in self.with_unit:
                return True
        if any(time in self.times for time in quantity.times):
            return True
        for year, month, day in quantity.dates:
            for b_year, b_month, b_day in self.dates:
                if (
                    month == b_month
                    and day in (None, b_day)
                    and (year in (None, b_year) or (b_year is None and year in self.values))
                ):
                    return True
        return False
