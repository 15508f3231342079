"""A sentence's claims, each checked against the span of a cited block it aligns to (issue 27).

`clauses` splits a unit the model wrote into clauses (";", ", and", ", but", "but", "whereas",
parentheses, "e.g."/"such as"/"including"), each with the blocks its own marker cites: a
marker covers the clauses before it back to the previous marker, so text after a mid-sentence
marker is cited by nothing; a parenthesis or an example is a dependent clause that must hold in
its head's span. A marker quoted from a block ("... hourly [2]" where a block says so) is text,
not a citation.

`check` then holds each clause to the span (support.py) that shares most of its weighted
words: enough of its words there; every number stated there and counting what it counts there
("$80 per month" against "$8 per month, or $80 per year" fails); no word put in the place of the
span's when it is its opposite, another member of a closed class (week for month), a name, or a
word the issued blocks use elsewhere (entities and binding terms moved); polarity both ways
against that span. Deterministic and pure; the first failure is the verdict's detail.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import partial
from itertools import pairwise

from ..language.opposites import closed_class, counterparts, opposite
from ..language.quantities import Quantity, canonical, numerals, scan
from ..language.statements import negated_terms
from ..language.terms import DISCOURSE_WORDS, NEGATION_CUE, stem
from .binding import binding_mismatch, referent, transplanted
from .citations import MARKER_RE, MARKER_RUN_RE, parse_marker, strip_markers
from .parallel import moved_between_parts
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


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause: its text (markers out), the blocks its marker cites, whether it depends on
    the clause before it (an example, a parenthesis), and whether its citation is a range or
    every block (no benefit of the doubt)."""

    text: str
    cited: tuple[int, ...]
    head: int | None = None
    ranged: bool = False


_PAREN = re.compile(r"\(([^()]*)\)")
_BREAK = re.compile(
    r"\s*;\s*"
    r"|(?-i:(?<![A-Z]\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[\w%)\]\ue000-\ue7ff][.!?])\s+(?=[A-Z\"“]))"
    # A full stop after a word and before a lower-case one ("every day. a free place ...",
    # two list items run together) still ends a clause; abbreviations do not.
    r"|(?-i:(?<![A-Za-z]\.[a-z]\.)(?<!\b[A-Za-z]\.)(?<!\betc\.)(?<!\bapprox\.)(?<!\bincl\.)"
    r"(?<!\bexcl\.)(?<!\bvs\.)(?<!\bno\.)(?<!\bapp\.)(?<!\bmin\.)(?<!\bmax\.)"
    r"(?<=[a-z%)\]][.])\s+(?=[a-z]))"
    r"|(?-i:(?:(?<=[a-z%)\]][.][\ue000-\ue7ff])|(?<=[a-z%)\]][.]\s[\ue000-\ue7ff]))\s+(?=[a-z]))"
    r"|,\s+(?:and|but|or|while|whereas|yet|so|although|though)\s+"
    r"|\s+(?:but|whereas|although|though)\s+",
    re.IGNORECASE,
)
# An example or aside: "e.g.", "i.e.", "for example" anywhere; "such as", "including", "like"
# only after a comma ("spare parts such as lids are sold ..." is one clause).
_EXAMPLE = re.compile(
    r"(?:,?\s*\b(?:e\.\s?g\.|i\.\s?e\.|for example|for instance)|,\s*(?:such as|including|like))"
    r"(?:,|\s|$)\s*",
    re.IGNORECASE,
)
# While clauses are cut, marker run k stands as chr(_RUN + k), parenthesis k as chr(_HOLE + k).
_RUN, _HOLE, _MAX_RUNS = 0xE000, 0xE400, 1000
_RUNS = re.compile("[\ue000-\ue3ff]")
_HOLES = re.compile("[\ue400-\ue7ff]")
_CONTEXT = re.compile(r"[\w$%€£.,:'’-]+")
# The words before a marker that must also precede it in a block for it to count as quoted.
_QUOTED_WORDS = 3


def quoted_marker(before: str, marker: str, blocks: Sequence[str]) -> bool:
    """Whether `marker`, written after `before`, copies a marker written in a block's own text
    after the same words (a timetable's "[2]" footnote) rather than citing a block."""
    mark = marker.strip()
    if not any(mark in block for block in blocks):
        return False  # the usual case: no pattern to build (a compile per marker, ~0.5 ms)
    words = _CONTEXT.findall(strip_markers(before).casefold())[-_QUOTED_WORDS:]
    if not words:
        return False
    flat = re.escape(" ".join(words)).replace(r"\ ", r"\W+")
    pattern = re.compile(flat + r"\W*" + re.escape(mark), re.IGNORECASE)
    return any(mark in block and pattern.search(block) for block in blocks)


def clauses(raw: str, blocks: Sequence[str], n_blocks: int) -> list[Clause]:
    """The clauses of `raw` (markers kept) with the blocks each one's marker cites."""
    runs: list[tuple[tuple[int, ...], bool]] = []
    pieces: list[str] = []
    pos = 0
    for match in MARKER_RUN_RE.finditer(raw):
        if len(runs) >= _MAX_RUNS:
            break
        found: list[int] = []
        for one in MARKER_RE.finditer(match.group()):
            if quoted_marker(raw[: match.start() + one.start()], one.group(), blocks):
                continue
            found += [c.n for c in parse_marker(one.group())]
        runs.append((tuple(dict.fromkeys(found)), _ranged(match.group(), found, n_blocks)))
        pieces += (raw[pos : match.start()], chr(_RUN + len(runs) - 1))
        pos = match.end()
    pieces.append(raw[pos:])
    text = "".join(pieces)
    leading = _RUNS.match(text.lstrip()) is not None
    holes: list[str] = []

    def hole(match: re.Match[str]) -> str:
        holes.append(match.group(1))
        return f" {chr(_HOLE + len(holes) - 1)} " if len(holes) <= _MAX_RUNS else " "

    while _PAREN.search(text):
        text = _PAREN.sub(hole, text)
    out: list[Clause] = []
    pending: list[int] = []  # clauses waiting for the next marker
    heads: list[tuple[int, str]] = []  # parentheses and the clause they sit in
    last = None  # the last clause with words: an example's head
    dangling = False  # an example marker with nothing after it before a break
    for part in _BREAK.split(text):
        examples = _EXAMPLE.split(part)
        for k, body in enumerate(examples):
            index = len(out)
            heads += [(index, holes[ord(h) - _HOLE]) for h in _HOLES.findall(body)]
            cited, ranged = _runs_in(body, runs)
            words = _clean(body)
            head = last if (k > 0 or dangling) else None
            dangling = (k > 0 and not words) or (dangling and not words)
            out.append(Clause(words, cited, head, ranged))
            if words and head is None:
                last = index
            if cited:
                for waiting in pending:
                    out[waiting] = _cited(out[waiting], cited, ranged)
                pending = []
            else:
                pending.append(index)
    if pending and leading and runs:
        first, ranged = runs[0]
        for waiting in pending:
            out[waiting] = _cited(out[waiting], first, ranged)
    for index, inner in heads:
        head_clause = out[index]
        cited, ranged = _runs_in(inner, runs)
        if not cited:
            cited, ranged = head_clause.cited, head_clause.ranged
        inner = _clean(inner)
        out.append(Clause(f"({inner})" if inner else "", cited, index, ranged))
    kept = [c for c in out if c.text]
    if len(kept) == len(out):
        return kept
    # Heads point at positions in `out`: renumber them for the clauses kept.
    new_index: dict[int, int] = {}
    for old, clause in enumerate(out):
        if clause.text:
            new_index[old] = len(new_index)
    return [
        Clause(c.text, c.cited, new_index.get(c.head) if c.head is not None else None, c.ranged)
        for c in out
        if c.text
    ]


def _runs_in(
    text: str, runs: Sequence[tuple[tuple[int, ...], bool]]
) -> tuple[tuple[int, ...], bool]:
    cited: tuple[int, ...] = ()
    ranged = False
    for mark in _RUNS.findall(text):
        more, was_ranged = runs[ord(mark) - _RUN]
        cited = tuple(dict.fromkeys((*cited, *more)))
        ranged = ranged or was_ranged
    return cited, ranged


def _cited(clause: Clause, cited: tuple[int, ...], ranged: bool) -> Clause:
    return Clause(clause.text, cited, clause.head, ranged)


def _clean(text: str) -> str:
    text = _HOLES.sub(" ", _RUNS.sub(" ", text))
    text = re.sub(r"^[\s|>#*_•\-–—]+|[\s|*_]+$", "", text)
    text = re.sub(r"\s*\|\s*", " ", text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(text.split()))
    return text if re.search(r"[^\W_]", text) else ""


def _ranged(marker: str, cited: Sequence[int], n_blocks: int) -> bool:
    """A range of three or more blocks, or every issued block once there are three."""
    spans_range = re.search(r"\d\s*[-–]\s*\d", marker) is not None and len(cited) >= 3
    return spans_range or (n_blocks >= 3 and len(set(cited)) >= n_blocks)


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


_AFFIRM = DISCOURSE_WORDS | {"sure", "indeed"}


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
    for q in read.quantities:
        # A number is held to the span its own part of the clause aligns to ("..., with 20 GB
        # of storage", "... and the Team plan $12 per user per month").
        near = _local(read, q.span)
        local, _ = align([w.key for w in near if not w.number], [q], candidates, weight)
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
    swapped = _swapped(read, span, where, candidates, weight, names, rules)
    if swapped:
        return swapped
    negates = read.negates and not read.framed
    scoped = binding_mismatch(read.folded, read.words, read.quantities, span, negates)
    return f"{scoped} ({where})" if scoped else ""


# Where a part of a clause ends, for the words a number or a name is stated with.
_PART = re.compile(
    r"[;:()\u2013\u2014]|[,.!?](?=\s)|\s(?:and|but|or|while|whereas|which|who|although|though"
    r"|because|when|where|with|after|before|until|since)(?=\s)"
)


def _local(read: Read, at: tuple[int, int]) -> list[Word]:
    """The words of the part of the clause holding position `at`."""
    start, end = 0, len(read.text)
    for match in _PART.finditer(read.text, 0, at[0]):
        start = match.end()
    after = _PART.search(read.text, at[1])
    if after is not None:
        end = after.start()
    return [w for w in read.words if w.start >= start and w.end <= end]


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


def _swapped(
    read: Read,
    span: Span,
    where: str,
    candidates: Sequence[Span],
    weight: Callable[[str], float],
    names: Callable[[str], bool],
    rules: Rules = STRICT,
) -> str:
    """A word put in the place of the span's: a name not there (strict: not in the span or
    the statement its "It" names; balanced: in no cited block), names swapped or doubled, a
    range's ends from two ranges, its opposite, another of a closed class."""
    have = span.keys | span.context
    written = {w.key for w in read.words}
    # The span's own names the clause leaves out, with the words next to them: a name of the
    # clause written between the same words stands in their place ("does not leave the
    # Frankfurt" against "does not leave the European Union").
    left_out = [
        _neighbours(span.words, j)
        for j, w in enumerate(span.words)
        if w.name and w.key not in written
    ]
    cited = frozenset().union(*(s.keys for s in candidates))
    for k, word in enumerate(read.words):
        if any(q.span[0] <= word.start < q.span[1] for q in read.quantities):
            continue  # "May" of a date: the date is checked as a quantity
        if k and read.words[k - 1].number:
            continue  # a unit ("20 GB"), checked with its number
        if (word.name or (word.capital and names(word.key))) and word.key not in have:
            # Named by a cited block elsewhere (balanced: by any issued block), where it takes
            # no name's place in the span: evidence spread over statements.
            issued = not rules.names_in_span and names(word.key)
            displaced = any(_meets(_neighbours(read.words, k), near) for near in left_out)
            if (word.key in cited or issued) and not displaced:
                continue
            near = _local(read, (word.start, word.end))
            keys = [w.key for w in near if not w.number]
            local = None
            if len(set(keys) - {word.key}) >= 2:  # a part that says something of the name
                local, _ = align(keys, (), candidates, weight)
            if local is None or word.key not in local.keys | local.context:
                return f"the name {word.key!r} is not in {where}"
    if (ranged := _range(read, span)) is not None:
        return f"{ranged[0][1:]} to {ranged[1][1:]} is no range of {where}"
    if (doubled := _doubled(read.words, span)) is not None:
        return f"{doubled[0]!r} is written where {where} has {doubled[1]!r}"
    if (took := _took_place(read.words, span)) is not None:
        return f"{took[0]!r} stands where {where} has {took[1]!r}"
    if (named := referent(read.words, span)) is not None:
        return f"{named!r} is not what {where} refers to"
    if (moved := transplanted(read.words, read.text, span, cited)) is not None:
        return f"{moved[0]!r} stands where {where} has {moved[1]!r}"
    if (swapped := _transposed(read.words, span)) is not None:
        return f"{swapped[0]!r} and {swapped[1]!r} are the other way round in {where}"
    mine = [w.key for w in read.words]
    theirs = [w.key for w in span.words]
    matcher = SequenceMatcher(None, mine, theirs, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 != j2 - j1 or i2 - i1 > 2:
            continue
        for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
            a, b = mine[i], theirs[j]
            if a == b or read.words[i].number or span.words[j].number:
                continue
            if opposite(a, b):
                return f"{read.words[i].key!r} says the opposite of {b!r} in {where}"
            if closed_class(a, b):
                return f"{a!r} stands where {where} says {b!r}"
            if b in mine:
                if _anchor(read.words[i]) and not _listed(span, a, b):
                    return f"{a!r} and {b!r} trade places against {where}"
                continue  # a list written in another order
            if read.words[i].name or names(a) or span.words[j].name:
                return f"the name {a!r} stands where {where} says {b!r}"
    return ""


_LIST_GLUE = re.compile(r"[\s,;/&]*(?:\b(?:and|or|nor)\b)?[\s,;/&]*", re.IGNORECASE)


_NAME = re.compile(r"\b[A-Z][\w-]*")


def _anchor(word: Word) -> bool:
    return word.number or word.name or word.capital


def _neighbours(words: Sequence[Word], i: int) -> tuple[str | None, str | None]:
    before = words[i - 1].key if i > 0 else None
    after = words[i + 1].key if i + 1 < len(words) else None
    return before, after


def _meets(a: tuple[str | None, str | None], b: tuple[str | None, str | None]) -> bool:
    return (a[0] is not None and a[0] == b[0]) or (a[1] is not None and a[1] == b[1])


def _marked(word: Word, theirs: frozenset[str]) -> bool:
    """A capitalised word, or one with an opposite or a closed-class sibling in `theirs`."""
    return word.capital or not counterparts(word.key).isdisjoint(theirs)


def _took_place(words: Sequence[Word], span: Span) -> tuple[str, str] | None:
    """A name, a member of a closed class or a word with an opposite in the span, written where
    the span has another: the words next to it in the clause are next to none of its own
    places in the span, but next to the other's ("plain OneNote folders" against "plain
    Markdown folders and from OneNote"; "is open at weekends" against "is closed at
    weekends"). Names may trade places within a list."""
    theirs = span.words
    mine = [w.key for w in words]
    their_keys = frozenset(w.key for w in theirs)
    for i, word in enumerate(words):
        if word.number or not _marked(word, their_keys):
            continue
        near = _neighbours(words, i)
        if any(
            _meets(near, _neighbours(theirs, k)) for k, w in enumerate(theirs) if w.key == word.key
        ):
            continue
        for k, other in enumerate(theirs):
            if other.key == word.key or not _meets(near, _neighbours(theirs, k)):
                continue
            if closed_class(word.key, other.key) or opposite(word.key, other.key):
                return word.key, other.key
            if (
                word.capital
                and other.capital
                and other.key in mine
                and word.key in span.keys
                and not _listed(span, word.key, other.key)
            ):
                return word.key, other.key
    return None


_RANGE_GLUE = re.compile(r"\s*(?:to|-|–|—|and|through|until|till)\s*", re.IGNORECASE)


def _range(read: Read, span: Span) -> tuple[str, str] | None:
    """Two numbers written next to each other ("30 to 60 minutes") that the span does not
    write next to each other: a range's ends taken from two ranges."""
    theirs = {frozenset((x.key, y.key)) for x, y in pairwise(span.words) if x.number and y.number}
    for x, y in pairwise(read.words):
        pair = frozenset((x.key, y.key))
        glue = _RANGE_GLUE.fullmatch(read.text[x.end : y.start]) is not None
        both = x.number and y.number and len(pair) == 2 and glue
        if both and pair not in theirs and pair <= span.keys_numbers:
            return x.key, y.key
    return None


def _doubled(words: Sequence[Word], span: Span) -> tuple[str, str] | None:
    """A name written more often than the span writes it, where a name of the span is missing
    ("Larkspur Central, Larkspur Central and Ashgrove" against "..., Millbrook and ...")."""
    mine = [w.key for w in words if w.capital]
    theirs = [w.key for w in span.words if w.capital]
    missing = [k for k in theirs if k not in mine and not _NOT_NAMES.fullmatch(k)]
    if not missing:
        return None
    for key in dict.fromkeys(mine):
        if mine.count(key) > theirs.count(key) >= 1:
            return key, missing[0]
    return None


_NOT_NAMES = re.compile(r"[a-z]{1,2}")


def _listed(span: Span, a: str, b: str) -> bool:
    """Whether `a` and `b` are items of one list in the span (only list glue and other names
    between them)."""
    at = {w.key: w for w in span.words}
    x, y = at.get(a), at.get(b)
    if x is None or y is None:
        return True  # nothing to hold them to
    first, second = (x, y) if x.start < y.start else (y, x)
    between = _NAME.sub("", span.text[first.end : second.start])
    return _LIST_GLUE.fullmatch(between) is not None


def _transposed(words: Sequence[Word], span: Span) -> tuple[str, str] | None:
    """Two names or numbers next to each other in the span (nothing but glue between them,
    "Settings > Account", "Monday to Friday") written the other way round, next to each other,
    in the clause; a list ("Free, Pro and Team") may be written in any order."""
    theirs = span.words
    pairs = set()
    for x, y in pairwise(theirs):
        glue = span.text[x.end : y.start]
        if _anchor(x) and _anchor(y) and x.key != y.key and not _LIST_GLUE.fullmatch(glue):
            pairs.add((x.key, y.key))
    if not pairs:
        return None
    for x, y in pairwise(words):
        if (y.key, x.key) in pairs and (x.key, y.key) not in pairs:
            return x.key, y.key
    return None


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _refs(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)
