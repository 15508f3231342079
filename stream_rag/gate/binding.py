"""What a clause's small words bind, against its aligned span (issue 27, the red team's cases):
the bound on a number ("at least" is not "up to", "after 30 days" is not "within"), a modal
("must" where the span says "can"), a word of scope or excess ("free", "unlimited", "only",
"permanently") the span does not say of the same thing, one end of a range stated alone, a
condition ("if", "unless", "only for") dropped, and opposites among words the overlap reads as
glue ("with"/"without", "same"/"different": `places.glue_opposite`, a word in another's place).

General English: closed lists of bound phrases, modals and scope words, none from a data set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

from ..language.quantities import Quantity
from ..language.terms import NEGATION_CUE
from ..text import STOP_WORDS
from .asserted import asserted_mismatch
from .magnitude import magnitude_mismatch
from .places import glue_opposite
from .support import Span, Word
from .traded import repaired, traded

__all__ = ["binding_mismatch"]

# -- bounds on a number -------------------------------------------------------------------------

_UPPER = (
    "up to|at most|within|less than|fewer than|under|below|no more than|not more than"
    "|a maximum of|maximum|max|before|by|until|till|no later than|in under|inside|at the latest"
)
_LOWER = (
    "at least|more than|over|above|no less than|no fewer than|not less than|a minimum of"
    "|minimum|min|after|from|since|no earlier than|beyond|exceeding|starting|starting at"
)
_BEFORE = re.compile(
    rf"(?:^|\W)({_UPPER}|{_LOWER})\W*(?:[$€£]\s*)?$",
)
_AFTER = re.compile(
    r"^[^\s]*\s*(?:\w+\s+)?(or more|or over|or longer|or later|and over|and above|or above"
    r"|or less|or fewer|or under|or shorter|or earlier|or below|at most|at the latest"
    r"|after|later|before|earlier)\b"
)
_UPPER_SET = frozenset(_UPPER.split("|")) | {"or less", "or fewer", "or under", "or shorter"}
_UPPER_SET |= {"or earlier", "or below", "at most", "at the latest", "earlier"}
# Bounds of time a faithful wording adds where the span has none ("expires after 7 days" for
# "expires in 7 days"): only an explicit comparative is held to a span that states none.
_TEMPORAL = frozenset(
    "within before by until till after from since inside starting later earlier".split()
)


def _bound(text: str, start: int, end: int) -> tuple[str, str] | None:
    """The direction ("upper", "lower") of the bound written on the number at `start:end`,
    with the phrase."""
    before = _BEFORE.search(text[max(0, start - 24) : start])
    if before is not None:
        phrase = before.group(1)
        return ("upper" if phrase in _UPPER_SET else "lower"), phrase
    after = _AFTER.match(text[end : end + 30])
    if after is not None:
        phrase = after.group(1)
        return ("upper" if phrase in _UPPER_SET else "lower"), phrase
    return None


def _same(q: Quantity, other: Quantity) -> bool:
    return bool(
        set(q.values) & set(other.values)
        or set(q.dates) & set(other.dates)
        or set(q.times) & set(other.times)
    )


def _bounds(lowered: str, quantities: Sequence[Quantity], span: Span) -> str:
    for q in quantities:
        mine = _bound(lowered, *q.span)
        theirs = [_bound(span.lowered, *s.span) for s in span.quantities if _same(q, s)]
        # A limit dropped: "includes 3 notebooks" of "up to 3" promises 3 (a lower bound
        # dropped says less than the span, which is no promise). A bound of time ("within 14
        # days") is the period itself, which a restatement may write bare.
        capped = [t for t in theirs if t is not None and t[0] == "upper"]
        timed = any(t[1] in _TEMPORAL for t in capped)
        if mine is None and capped and len(capped) == len(theirs) and not timed:
            return f"{q.text!r} without {capped[0][1]!r}, which the span writes"
        if mine is None or not theirs:
            continue
        if any(t is not None and t[0] == mine[0] for t in theirs):
            continue
        stated = next((t for t in theirs if t is not None), None)
        if stated is None and mine[1] in _TEMPORAL:
            continue
        said = f"{stated[1]!r}" if stated else "no bound"
        return f"{mine[1]!r} {q.text!r}: the span says {said}"
    return ""


# -- modals -------------------------------------------------------------------------------------

_NECESSARY = re.compile(
    r"\b(?:must|mustn't|shall|ha(?:s|ve|d) to|needs? to|need not|needn't|required|mandatory"
    r"|compulsory|obligatory|obliged)\b"
)
# A span that says a thing "needs" or "requires" another makes it necessary: "must have a
# parent" restates "need a parent" ("the need", "your needs" are nouns). Read in the span
# only: a clause's "you need X" is held as before.
_NEEDED = re.compile(
    r"\b(?:requires?|(?<!\bthe )(?<!\byour )(?<!\bour )(?<!\btheir )(?<!\bany )(?<!\bin )"
    r"(?<!\bspecial )needs?)\b(?!\s+not\b)"
)
_POSSIBLE = re.compile(r"\b(?:can|cannot|can't|could|couldn't|may|might|(?:is|are|be) able to)\b")
_ADVISED = re.compile(r"\b(?:should|shouldn't|ought to)\b")


def _modals(text: str, span: bool = False) -> set[str]:
    found = set()
    if _NECESSARY.search(text) or (span and _NEEDED.search(text)):
        found.add("necessary")
    if _POSSIBLE.search(text):
        found.add("possible")
    if _ADVISED.search(text):
        found.add("advised")
    return found


def _modal(lowered: str, span: Span) -> str:
    mine, theirs = _modals(lowered), _modals(span.lowered, span=True)
    if "necessary" in mine and "necessary" not in theirs:
        said = ", ".join(sorted(theirs)) or "no modal"
        return f"the clause makes it necessary; the span says {said}"
    if "possible" in mine and "necessary" in theirs and "possible" not in theirs:
        return "the clause makes it optional; the span makes it necessary"
    return ""


# -- words of scope and excess ------------------------------------------------------------------

_SCOPE_CLASSES = (
    "free",
    "unlimited limitless infinite",
    "lifetime forever",
    "permanent permanently",
    "complete completely fully entire entirely whole totally",
    "instant instantly immediate immediately",
    "always",
    "all every everyone everybody everything",
    "anyone anybody anything",
    "guaranteed",
    "unconditional unconditionally",
    "only solely exclusively sole exclusive",
    "automatic automatically",
)
_SCOPE = {w: i for i, line in enumerate(_SCOPE_CLASSES) for w in line.split()}
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'’-]*")
_NEAR = 3  # how far from the word it qualifies a span's scope word may stand


def _nearest(tokens: Sequence[str], step: int) -> list[str | None]:
    """For each place of `tokens`, the first word from it on, by `step`, that is neither filler
    nor a scope word: found in one pass, where a search from each scope word read a run of
    them again every time (a sentence of 8k "only" took 10 s)."""
    out: list[str | None] = [None] * len(tokens)
    found = None
    for k in range(len(tokens)) if step < 0 else range(len(tokens) - 1, -1, -1):
        if tokens[k] not in _FILLER and tokens[k] not in _SCOPE:
            found = tokens[k]
        out[k] = found
    return out


def _at(found: Sequence[str | None], k: int) -> str | None:
    return found[k] if 0 <= k < len(found) else None


_FILLER = frozenset("a an the of to for and or is are be been your our their its this".split())


def _scope(mine: Sequence[str], theirs: Sequence[str], context: frozenset[str]) -> str:
    """A scope word of the clause the span does not write of the word it qualifies: the next
    word for an adjective ("unlimited GB"), the next or the one before for an adverb."""
    if not any(token in _SCOPE for token in mine):
        return ""
    ahead, behind = _nearest(mine, 1), _nearest(mine, -1)
    for i, token in enumerate(mine):
        kind = _SCOPE.get(token)
        if kind is None or (token == "only" and i and mine[i - 1] == "not"):
            continue  # "not only X but also Y" affirms X and Y
        # "per euro" and "each euro" say "every euro".
        alike = _DISTRIBUTIVE if kind == _SCOPE["every"] else ()
        places = [j for j, t in enumerate(theirs) if _SCOPE.get(t) == kind or t in alike]
        if not places:
            if token in context:
                continue
            return f"{token!r} is not in the span"
        # "for free" qualifies what is done, wherever it stands in a span that does it.
        done = _at(behind, i - 2) if mine[i - 1 : i] == ["for"] else None
        if (
            token == "free"
            and done is not None
            and _phrase(theirs, "for", token)
            and any(_alike(done, t) for t in theirs)
        ):
            continue
        if (
            mine[i - 1 : i]
            and mine[i - 1] in _COPULA
            and any(theirs[j - 1] in _COPULA for j in places if j)
        ):
            continue  # "are free" says it of the subject, as the span's "They are free" does
        adverb = token.endswith("ly") or token == "always"
        after = _at(ahead, i + 1)
        near = {w for w in (after, _at(behind, i - 1) if adverb else None) if w}
        head = mine[i + 2 : i + 3] if not adverb and mine[i + 1 : i + 2] == [after] else []
        if head and head[0] not in _FILLER and head[0] not in _SCOPE:
            near.add(head[0])  # a compound's head: "every card payment" qualifies the payment
        # A word the span does not write (a synonym) has no place there to compare.
        near = {w for w in near if any(_alike(w, t) for t in theirs)}
        if not near:
            continue
        for j in places:
            window = theirs[max(0, j - _NEAR) : j + _NEAR + 1] if adverb else theirs[j + 1 : j + 3]
            if any(_alike(w, t) for w in near for t in window):
                break
        else:
            return f"{token!r} qualifies {sorted(near)} here, not in the span"
    return ""


_DISTRIBUTIVE = ("per", "each")
_COPULA = frozenset("is are was were be been being remain remains stay stays".split())


def _phrase(tokens: Sequence[str], first: str, second: str) -> bool:
    return any(a == first and b == second for a, b in pairwise(tokens))


def _alike(a: str, b: str) -> bool:
    return a == b or (len(a) > 3 and len(b) > 3 and a[:4] == b[:4])


# -- ranges and conditions ----------------------------------------------------------------------

_RANGE_GLUE = re.compile(r"\s*(?:to|-|–|—|through|until|till)\s*|\s+and\s+", re.IGNORECASE)


def _own_fact(key: str) -> bool:
    """A time of day or a year: one end of a range of them is a fact of its own."""
    return ":" in key or (key[1:].isdigit() and 1000 <= int(key[1:]) <= 2100)


def _range_end(words: Sequence[Word], span: Span) -> str:
    """A number the span writes as one end of a range ("aged 5 to 15"), written alone."""
    partners: dict[str, set[str]] = {}
    for x, y in pairwise(span.words):
        if x.number and y.number and _RANGE_GLUE.fullmatch(span.text[x.end : y.start]):
            if _own_fact(x.key) or _own_fact(y.key):
                continue  # "9:00 to 18:00", "1616-17": an end of hours or years is a fact
            partners.setdefault(x.key, set()).add(y.key)
            partners.setdefault(y.key, set()).add(x.key)
    if not partners:
        return ""
    for k, word in enumerate(words):
        if not word.number or word.key not in partners:
            continue
        beside = {w.key for w in words[max(0, k - 1) : k + 2] if w is not word and w.number}
        if not beside & partners[word.key]:
            other = sorted(partners[word.key])[0][1:]
            return f"{word.key[1:]} is one end of the range {word.key[1:]} to {other} there"
    return ""


_CONDITION = re.compile(
    r"\b(?:only\s+)?(?:if|unless|except|provided|as long as|so long as)\b|\bonly\s+(?:for|after"
    r"|within|with|on|to|when|in)\b"
)
_CONDITION_WORDS = frozenset(
    "if unless except provided long when whenever where once subject condition".split()
)
# "only with an adult" states a condition; a closing "... for permit holders only." does not,
# nor "only" before the clause's last word ("Glass is only covered." of "... only covered if
# it is packed in padding": the condition is cut off).
_ONLY_BEFORE = re.compile(r"\bonly\s+[a-z0-9][\w'’-]*\W+[a-z0-9]")


# A colon between digits is a time of day ("until 14:00"), not a break between parts.
_PARTS = re.compile(r";|(?<!\d):|:(?!\d)|,\s+(?:and|but|while|whereas|so)\s+|(?<=[.!?])\s+|\n")


# A time or an amount is one word here: "booked by 11:00" is not stated by "by 21:00".
_WHOLE = re.compile(r"[a-z0-9][a-z0-9'’-]*(?:[:.,]\d+)*")


def _condition(lowered: str, span: Span) -> str:
    """The span's part the clause states says it holds only on a condition ("if ...", "unless
    ...", "only for ...") the clause leaves out, words and all."""
    mine = set(_WHOLE.findall(lowered))
    if _CONDITION_WORDS & mine or _ONLY_BEFORE.search(lowered):
        return ""
    best, shared = "", 0
    for part, tokens in _whole_parts(span.lowered):
        count = len(mine & tokens)
        if count > shared:
            best, shared = part, count
    found = _CONDITION.search(best)
    if found is None:
        return ""
    after = re.split(r"[,;]|\.(?!\d)", best[found.end() :], maxsplit=1)[0]
    # The condition's own words: those the part's claim writes too ("pay" of "you pay ...,
    # unless you ask to pay in 12") tell nothing of whether the clause states it.
    claim = set(_WHOLE.findall(best[: found.start()] + " " + best[found.end() + len(after) :]))
    words = [t for t in _WHOLE.findall(after) if t not in _FILLER]
    words = [t for t in words if t not in claim and t not in STOP_WORDS] or words
    if words and sum(t in mine for t in words) * 2 >= len(words):
        return ""  # the condition is stated in other words
    return f"the span says it holds {found.group()!r} ...; the clause drops the condition"


# -- polarity of the part ------------------------------------------------------------------------


def _negated_part(lowered: str, negates: bool, span: Span) -> str:
    """A negating clause against a span whose negation is in another of its parts ("trains
    marked do not stop at X, and trains marked run on Saturdays not only"). A clause of
    several parts ("Never wash raw chicken: splashing spreads germs") is held part by part:
    the part that negates, to the span's part it states."""
    if not negates:
        return ""
    mine = _parts(lowered)
    negating = [tokens for part, tokens in mine if NEGATION_CUE.search(part) is not None]
    for tokens in negating or [frozenset().union(*(t for _, t in mine))]:
        best, shared = "", 0
        for part, theirs in _parts(span.lowered):
            count = len(theirs & tokens)
            if count > shared:
                best, shared = part, count
        if best and NEGATION_CUE.search(best) is None and " without " not in f" {best} ":
            return "the clause negates, the part of the span it states does not"
    return ""


# A span is read by every clause aligned to it: its tokens and parts are read once.
@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(text))


@lru_cache(maxsize=4096)
def _whole_parts(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple((part, frozenset(_WHOLE.findall(part))) for part, _ in _parts(text))


@lru_cache(maxsize=4096)
def _parts(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple((part, frozenset(_TOKEN.findall(part))) for part in _PARTS.split(text))


# -- all of them --------------------------------------------------------------------------------


def binding_mismatch(
    lowered: str,
    words: Sequence[Word],
    quantities: Sequence[Quantity],
    span: Span,
    negates: bool = False,
) -> str:
    """Why the clause (`lowered` its casefolded text, positions as `quantities`'; `negates`
    its plain polarity) binds its words otherwise than `span` does ("" if it does not)."""
    mine = _TOKEN.findall(lowered)
    theirs = _tokens(span.lowered)
    return (
        _negated_part(lowered, negates, span)
        or asserted_mismatch(lowered, span)
        or magnitude_mismatch(lowered, span.lowered)
        or traded(lowered, span.lowered)
        or repaired(lowered, span.lowered)
        or _bounds(lowered, quantities, span)
        or _modal(lowered, span)
        or _scope(mine, theirs, span.context)
        or glue_opposite(mine, theirs)
        or _range_end(words, span)
        or _condition(lowered, span)
    )
