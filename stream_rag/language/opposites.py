"""Words that say the opposite of each other, and closed classes of words that bind values
(time units, weekdays, months, sizes): a claim that puts one in the place of the other says
something else, however many of its words it shares with the source.

General English, not any knowledge base's words: pairs of common opposites (compared by
stem, so "includes" meets "exclude"), negating prefixes ("unavailable", "disallow",
"non-refundable"), and classes whose members never stand for each other ("week" for "month").
"""

from __future__ import annotations

import re
from functools import lru_cache

from .terms import stem

__all__ = ["UNIT_FORMS", "closed_class", "counterparts", "opposite", "unit_form"]

_PAIRS = """
include exclude|includes excludes|included excluded|inclusive exclusive|keep lose|kept lost
keeps loses|allow forbid|allow prohibit|allow deny|permit prohibit|permit forbid|accept reject
accept decline|accept refuse|approve reject|approve deny|grant deny|enable disable|open close
opened closed|open closed|opens closes|available unavailable|required optional
mandatory optional|compulsory optional|automatic manual|automatically manually|free paid
before after|always never|more less|more fewer|most least|earliest latest|early late
earlier later|minimum maximum|min max|first last|public private|increase decrease
increase reduce|raise lower|rise fall|rose fell|add remove|add delete|adds removes|start end
start stop|begin end|begin finish|began ended|win lose|won lost|gain lose|buy sell|bought sold
give take|gave took|send receive|sent received|push pull|import export|upload download
internal external|inside outside|above below|over under|higher lower|high low|success failure
succeed fail|pass fail|true false|correct incorrect|valid invalid|legal illegal
possible impossible|likely unlikely|same different|similar different|positive negative
major minor|majority minority|long short|longer shorter|large small|big small|larger smaller
old new|older newer|young old|younger older|fast slow|faster slower|quick slow|hot cold
heavy light|strong weak|rich poor|cheap expensive|cheaper dearer|safe dangerous|safe unsafe
secure insecure|present absent|online offline|visible hidden|visible invisible|show hide
lock unlock|join leave|arrive depart|arrival departure|enter exit|entry exit|input output
inbound outbound|incoming outgoing|north south|east west|left right|top bottom|front back
morning evening|day night|weekday weekend|full partial|full empty|approve decline
confirm cancel|activate deactivate|connect disconnect|support oppose|victory defeat
male female|man woman|men women|husband wife|father mother|son daughter|brother sister
king queen|born died|birth death|live die|alive dead|war peace|friend enemy|ancient modern
winner loser|remote local|domestic international|domestic foreign|national international
urban rural|guilty innocent|wet dry|soft hard|easy difficult|easy hard|simple complex
refund charge|credit debit|income expense|profit loss|borrow lend|deposit withdraw
upper lower|senior junior|encrypted unencrypted|encrypted plain|sync unsync|allowed banned
included extra|cancel renew|expire renew|indoor outdoor
|permanent temporary|permanently temporarily|unlimited limited
|include omit|includes omits|included omitted|keep delete|keeps deletes|kept deleted
|keep remove|retain delete|retained deleted|retain discard|save discard|personal shared
|grant revoke|granted revoked|upgrade downgrade|mandatory voluntary|fixed variable
|lowest highest|best worst|better worse|fastest slowest|cheapest dearest|succeed fail
|allow block|allows blocks|allowed blocked|arrive leave
|sooner later|sunrise sunset|ascending descending|maximum minimum|upstream downstream
"""
_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "de")


def _stems(pair: str) -> tuple[str, str]:
    a, b = pair.split()
    return stem(a), stem(b)


_OPPOSITES: frozenset[tuple[str, str]] = frozenset(
    p
    for line in re.split(r"[|\n]", _PAIRS)
    if line.strip()
    for p in (_stems(line), _stems(line)[::-1])
)


@lru_cache(maxsize=16384)
def opposite(a: str, b: str) -> bool:
    """Whether stems `a` and `b` say opposite things ("includ"/"exclud", "avail"/"unavail")."""
    if a == b:
        return False
    if (a, b) in _OPPOSITES:
        return True
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if len(short) < 4:
        return False
    return any(long == p + short or long == p + "-" + short for p in _PREFIXES)


# Adjectives and adverbs of time units, as the unit: "$8 monthly" binds 8 to the month.
UNIT_FORMS = {
    "hourly": "hour",
    "daily": "day",
    "nightly": "night",
    "weekly": "week",
    "fortnightly": "fortnight",
    "monthly": "month",
    "quarterly": "quarter",
    "yearly": "year",
    "annual": "year",
    "annually": "year",
    "annum": "year",
    "biannual": "half-year",
}

_CLASSES = (
    "second minute hour day night week fortnight month quarter season semester year decade century",
    "monday tuesday wednesday thursday friday saturday sunday weekday weekend",
    "january february march april may june july august september october november december",
    "byte kb mb gb tb pb kilobyte megabyte gigabyte terabyte",
    "mm cm km metre meter kilometre kilometer mile inch foot feet yard",
    "mg g kg gram kilogram pound ounce tonne ton lb",
    "ml litre liter gallon pint",
    "dollar euro pound yen franc cent penny rupee yuan",
    "morning afternoon evening night midnight noon",
    "spring summer autumn fall winter",
    "north south east west northeast northwest southeast southwest",
    "user seat device account member licence license",
)


def _classes() -> dict[str, int]:
    out: dict[str, int] = {}
    for i, words in enumerate(_CLASSES):
        for word in words.split():
            out.setdefault(stem(word), i)
    for form, unit in UNIT_FORMS.items():
        out.setdefault(stem(form), out.get(stem(unit), 0))
    return out


_CLASS_OF = _classes()


# British and American spellings of one unit are one word, not two members of its class.
_SPELLINGS = {
    "metre": "meter",
    "kilometre": "kilometer",
    "centimetre": "centimeter",
    "millimetre": "millimeter",
    "litre": "liter",
    "millilitre": "milliliter",
    "licence": "license",
}
_UNIT_STEMS = {stem(form): stem(unit) for form, unit in UNIT_FORMS.items()}
_UNIT_STEMS |= {stem(form): stem(unit) for form, unit in _SPELLINGS.items()}


def unit_form(key: str) -> str:
    """A time unit's adjective or adverb as the unit's stem ("monthly" -> "month")."""
    return _UNIT_STEMS.get(key, key)


def closed_class(a: str, b: str) -> bool:
    """Whether stems `a` and `b` are different members of one closed class (week, month)."""
    ca, cb = _CLASS_OF.get(a), _CLASS_OF.get(b)
    return ca is not None and ca == cb and unit_form(a) != unit_form(b)


_PAIRED: dict[str, frozenset[str]] = {}
for _a, _b in _OPPOSITES:
    _PAIRED[_a] = _PAIRED.get(_a, frozenset()) | {_b}


@lru_cache(maxsize=16384)
def counterparts(a: str) -> frozenset[str]:
    """Every stem `b` with `opposite(a, b)` or `closed_class(a, b)`: a word is held to all of
    a span's words with one set intersection, not two calls per pair."""
    out = set(_PAIRED.get(a, ()))
    if len(a) >= 4:  # a negating prefix added ("avail" -> "unavail", "non-refund")
        out.update(p + a for p in _PREFIXES)
        out.update(f"{p}-{a}" for p in _PREFIXES)
    for p in _PREFIXES:  # or taken away
        for head in (p, p + "-"):
            if a.startswith(head) and len(a) - len(head) >= 4:
                out.add(a[len(head) :])
    kind = _CLASS_OF.get(a)
    if kind is not None:
        out.update(b for b, c in _CLASS_OF.items() if c == kind and unit_form(b) != unit_form(a))
    out.discard(a)
    return frozenset(out)
