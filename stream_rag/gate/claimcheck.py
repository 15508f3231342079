"""A sentence's claims, each checked against the span of a cited block it aligns to (issue 27).

`clauses` (clauses.py) splits a unit the model wrote into clauses, each with the blocks its
own marker cites. `check` then holds each clause to the span (support.py) that shares most of
its weighted words: enough of its words there; every number stated there and counting what it
counts there ("$80 per month" against "$8 per month, or $80 per year" fails); no word put in
the place of the span's (places.py); polarity both ways against that span. Deterministic and
pure; the first failure is the verdict's detail.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from ..language.quantities import Quantity, canonical, numerals, scan
from ..language.statements import negated_terms
from ..language.terms import DISCOURSE_WORDS, NEGATION_CUE, stem
from .binding import binding_mismatch
from .clauses import Clause, clauses, quoted_marker
from .parallel import moved_between_parts
from .places import misplaced, part_words
from .support import Span, Word, align, attached, placed_quantities, read_words
from .unsaid import unsaid

__all__ = ["Clause", "Mode", "Rules", "check", "clauses", "quoted_marker"]

Mode = str  # "strict" or "balanced"


@dataclass(frozen=True, slots=True)
class Rules:
    """An operating point: how much of a clause's weight (of a sentence of several clauses) its
    span must have, how much an example's or aside's head span must have of it, and by how much
    a span of a block it does not cite may beat its own before it is another block's claim."""

    min_share: float
    aside_share: float
    elsewhere: float = 0.6
    margin: float = 0.25
    names_in_span: bool = True  # else a name need only be in an issued block
    numbers_in_part: bool = True  # else a number need only be in a statement of a cited block
    ranged_second_look: bool = False  # whether a range citation may go to the later stages
    bare_answers: bool = False  # whether a clause that only says "Yes." is left unchecked

    @classmethod
    def of(cls, mode: str) -> Rules:
        return BALANCED if mode == "balanced" else STRICT


STRICT = Rules(min_share=0.25, aside_share=0.75)
BALANCED = Rules(
    min_share=0.1,
    aside_share=0.5,
    elsewhere=0.7,
    margin=0.35,
    names_in_span=False,
    numbers_in_part=False,
    ranged_second_look=True,
    bare_answers=True,
)


# -- the checks ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Read:
    """A clause as the checks read it: number words as digits, and a frame that negates the
    whole clause ("It is not true that ...") counted in its polarity."""

    text: str
    words: tuple[Word, ...]
    quantities: tuple[Quantity, ...]
    negates: bool
    negated: frozenset[str]
    folded: str = ""
    framed: bool = False  # "It is not true that ...": the clause denies all it says
    spelled: tuple[tuple[str, str], ...] = ()  # numbers in words ("thirty days")

    @classmethod
    def of(cls, text: str) -> Read:
        frame = _NEGATING_FRAME.match(text)
        inner = text[frame.end() :] if frame else text
        _, words = scan(canonical(inner))
        placed, folded = placed_quantities(text)
        negates = NEGATION_CUE.search(words) is not None
        return cls(
            text,
            read_words(text, folded),
            placed,
            negates != (frame is not None),
            frozenset(stem(t) for t in negated_terms(words)),
            folded,
            frame is not None,
            _spelled(text, placed),
        )

    @property
    def keys(self) -> list[str]:
        return list(dict.fromkeys(w.key for w in self.words if not w.number))


def _spelled(text: str, placed: Sequence[Quantity]) -> tuple[tuple[str, str], ...]:
    """The numbers `text` writes in words, as digits ("30"), each with the word written after
    it ("day"): a number and what it counts, for the span to write together."""
    written = numerals(text)
    if written == text:
        return ()
    found, folded = placed_quantities(written)
    out = []
    for q in found:
        if any(_same(q, p) for p in placed):
            continue
        for match in _NUMBER_THEN.finditer(folded, q.span[0], q.span[1] + 40):
            out.append((match.group(1), stem(match.group(2) or "")))
            break
    return tuple(out)


_NUMBER_THEN = re.compile(r"(?<![\d.,])(\d+(?:[.,]\d+)?)(?![\d.,]\d)\W*([^\W\d_]+)?")


def _states(span: Span, number: str, counted: str) -> bool:
    """Whether the span states `number` and does not write what it counts after another
    number instead ("five months" against "3 months ... EUR 5 per month")."""
    pairs = {
        (m.group(1), stem(m.group(2) or "")) for m in _NUMBER_THEN.finditer(canonical(span.text))
    }
    if not any(n == number for n, _ in pairs):
        return False
    if not counted or (number, counted) in pairs:
        return True
    return not any(c == counted for n, c in pairs if n != number)


# "It is not true that X", "It's false that X": the clause says X does not hold.
_NEGATING_FRAME = re.compile(
    r"\s*(?:(?:it\s+(?:is|was)|it's)\s+not|it\s+(?:isn't|wasn't))\s+(?:true|the\s+case|so|correct)"
    r"\s+that\s+|\s*(?:it\s+is|it's)\s+(?:false|untrue|incorrect)\s+that\s+",
    re.IGNORECASE,
)


def check(
    units: Sequence[Clause],
    spans: Callable[[int], Sequence[Span]],
    weight: Callable[[str], float],
    names: Callable[[str], bool],
    rules: Rules = STRICT,
    n_blocks: int = 0,
) -> str:
    """Why a clause of the sentence is not what a span of its cited blocks says ("" if every
    clause is); blocks 1..`n_blocks` were issued."""
    aligned: list[Span | None] = []
    for clause in units:
        read = Read.of(clause.text)
        if rules.bare_answers and _affirms_only(read):
            # "Yes." / "Yes it does." agrees with a question the gate does not see: strict
            # refuses to vouch for it, balanced checks the rest of the sentence alone.
            aligned.append(None)
            continue
        if clause.head is not None and clause.head < len(aligned):
            span = aligned[clause.head]
            share = _share(read.keys, span, weight) if span is not None else 0.0
        else:
            if not clause.cited:
                aligned.append(None)
                return f"{_quote(clause.text)} cites no block (a marker covers its own clause)"
            candidates = [s for n in clause.cited for s in spans(n)]
            span, share = align(read.keys, read.quantities, candidates, weight)
        aligned.append(span)
        if span is None:
            return f"{_quote(clause.text)}: no span of {_refs(clause.cited)} to check it against"
        if len(units) == 1:
            share = 1.0  # the whole sentence's overlap was judged before
        elif clause.head is None and share < rules.elsewhere:
            others = [s for n in range(1, n_blocks + 1) if n not in clause.cited for s in spans(n)]
            other, theirs = align(read.keys, read.quantities, others, weight)
            if other is not None and theirs >= rules.elsewhere and theirs >= share + rules.margin:
                return (
                    f"clause {_quote(read.text)} is what [{other.block}] says "
                    f"({theirs:.2f} of its words), not {_refs(clause.cited)} ({share:.2f})"
                )
        if clause.head is not None:
            candidates = [span]
        why = _against(read, span, share, clause, candidates, weight, names, rules)
        issued = partial(_issued, spans, n_blocks)
        why = why or _placed(unsaid(read.text, read.words, span, candidates, issued), span)
        if why:
            return why
    return ""


def _affirms_only(read: Read) -> bool:
    """Whether the clause is an interjection answering the question ("Yes.", "yes it does")."""
    keys = read.keys
    return bool(keys) and not read.quantities and not read.negates and set(keys) <= _AFFIRM


# As a clause's keys are: stems ("sure" is read as "sur").
_AFFIRM = frozenset(stem(word) for word in DISCOURSE_WORDS | {"sure", "indeed"})


def _placed(why: str, span: Span) -> str:
    return f"{why} ([{span.block}] {_quote(span.text, 60)})" if why else ""


def _issued(spans: Callable[[int], Sequence[Span]], n_blocks: int) -> frozenset[str]:
    """The words of every issued block (read only for a word a clause puts in a span's place)."""
    return frozenset().union(*(s.keys for n in range(1, n_blocks + 1) for s in spans(n)))


def _share(keys: Sequence[str], span: Span, weight: Callable[[str], float]) -> float:
    total = sum(weight(k) for k in keys)
    return sum(weight(k) for k in keys if k in span.keys) / total if total > 0 else 1.0


def _against(
    read: Read,
    span: Span,
    share: float,
    clause: Clause,
    candidates: Sequence[Span],
    weight: Callable[[str], float],
    names: Callable[[str], bool],
    rules: Rules,
) -> str:
    where = f"[{span.block}] {_quote(span.text, 60)}"
    least = rules.aside_share if clause.head is not None else rules.min_share
    if read.keys and share < least - 1e-9:
        kind = "an example or aside" if clause.head is not None else "clause"
        return f"{kind} {_quote(read.text)} shares {share:.2f} of its words with {where}"
    for number, counted in read.spelled:
        # Held to every statement of the cited blocks, as a part of the clause may align to
        # another statement than the whole clause does.
        if not any(_states(s, number, counted) for s in candidates):
            return f"{number} {counted} (in words) is not in {_refs(clause.cited)}"
    if spelled_why := _spelled_moved(read, span, candidates, weight):
        return spelled_why
    for q in read.quantities:
        # A number is held to the span its own part of the clause aligns to ("..., with 20 GB
        # of storage", "... and the Team plan $12 per user per month").
        near = part_words(read.text, read.words, q.span)
        keys = [w.key for w in near if not w.number]
        if _unit_only(q, near):
            # A part of the number and its unit alone ("... lost only after | 30 days") names
            # nothing the number is of: the clause's words say which statement it is held to.
            keys = list(read.keys)
        local, _ = align(keys, [q], candidates, weight)
        if local is not span and _same_slot(q, near, keys, span):
            # A part that names nothing the clause's span does not ("... and costs 1,400
            # pounds" of "A seasonal licence ... costs 600 pounds") counts what the span's own
            # number counts: another statement stating the number vouches for nothing here.
            local = span
        if local is None or not _vouched(q, local):
            if rules.numbers_in_part or not any(_vouched(q, s) for s in candidates):
                return f"{q.text!r} is not in {where}"
            continue  # balanced: stated in another statement of a cited block
        if (trade := moved_between_parts(near, q, local, _same)) is not None:
            return f"{q.text!r} is said of {trade[1]!r} here, not {trade[0]!r}, in " + _quote(
                local.text, 60
            )
        before = not attached(near, q)
        mine = attached(near, q, before) & local.keys
        if not mine:
            continue
        own = frozenset().union(
            *(local.attached(s, before) for s in local.quantities if _same(q, s))
        )
        others = frozenset().union(
            *(local.attached(s, before) for s in local.quantities if not _same(q, s))
        )
        moved = (mine & others) - own
        if own and moved:
            return f"{q.text!r} is said of {sorted(moved)} here, not in [{local.block}] " + _quote(
                local.text, 60
            )
    if read.negates and not span.negates:
        return f"{_quote(read.text)} negates, {where} does not"
    if read.framed and read.negates and not span.negated & set(read.keys):
        return f"{_quote(read.text)} denies what {where} does not negate"
    if span.negates and not read.negates and span.negated & set(read.keys):
        flipped = next(iter(span.negated & set(read.keys)))
        return f"{where} negates {flipped!r}, {_quote(read.text)} does not"
    swapped = misplaced(read, span, where, candidates, weight, names, rules)
    if swapped:
        return swapped
    negates = read.negates and not read.framed
    scoped = binding_mismatch(read.folded, read.words, read.quantities, span, negates)
    return f"{scoped} ({where})" if scoped else ""


def _spelled_moved(
    read: Read, span: Span, candidates: Sequence[Span], weight: Callable[[str], float]
) -> str:
    """Why a number the clause writes in words is said of another coordinated part of the
    statement it is stated in ("three business days for Pro plans" where 3 is Free's), or
    stands where the span has a number of its own ("Price on a 12-month contract twenty-four
    pounds" of "... 20 pounds", another row's 24 pounds)."""
    digits = numerals(read.text)
    if digits == read.text:
        return ""
    placed, folded = placed_quantities(digits)
    words = read_words(digits, folded)
    for q in placed:
        near = part_words(digits, words, q.span)
        keys = [w.key for w in near if not w.number]
        if _same_slot(q, near, keys, span):
            return f"{q.text!r} (in words) is not in [{span.block}] " + _quote(span.text, 60)
        local, _ = align(keys, [q], candidates, weight)
        if local is not None and (trade := moved_between_parts(near, q, local, _same)):
            return f"{q.text!r} (in words) is said of {trade[1]!r} here, not {trade[0]!r}"
    return ""


def _same_slot(q: Quantity, near: Sequence[Word], keys: Sequence[str], span: Span) -> bool:
    """Whether every word of `q`'s part is the span's and the span has a number of its own
    counting what `q` counts there (the same unit, or the same word after it)."""
    if not keys or not set(keys) <= span.keys or _vouched(q, span):
        return False
    units = {unit for _, unit in q.values if unit}
    counts = attached(near, q)
    return any(
        units & {unit for _, unit in s.values} or counts & span.attached(s) for s in span.quantities
    )


def _unit_only(q: Quantity, near: Sequence[Word]) -> bool:
    """Whether the part of the clause `q` stands in (`near`) is an amount and its unit alone
    ("... after | 30 days"): no date or time, and no word but the one after the number."""
    if not q.values or q.dates or q.times:
        return False
    at = [i for i, w in enumerate(near) if w.number]
    return len(near) == 2 and at == [0]


def _vouched(q: Quantity, span: Span) -> bool:
    """Whether the span states `q` as a number, date or time of its own (not the 30 of its
    "22:30", which the lenient `Stated` counts for a sentence's bare numbers)."""
    if any(_same(q, s) for s in span.quantities):
        return True
    stated = span.stated  # number words ("thirty days"), scales, a date's year
    clock = {part for time in stated.times for part in time}
    for value, unit in q.values:
        if value in stated.bare or (value, unit) in stated.with_unit:
            return True
        if unit is None and value in stated.values and value not in clock:
            return True
    return bool(q.dates or q.times) and stated.vouches_for(q)


def _same(q: Quantity, other: Quantity) -> bool:
    return bool(
        set(q.values) & set(other.values)
        or set(q.dates) & set(other.dates)
        or set(q.times) & set(other.times)
    )


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _refs(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)
