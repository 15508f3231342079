"""A unit the model wrote cut into clauses, each with the blocks its own marker cites (issue 27).

";", ", and", ", but", "but", "whereas", parentheses and "e.g."/"such as"/"including" cut a
unit; a marker covers the clauses before it back to the previous marker, so text after a
mid-sentence marker is cited by nothing; a parenthesis or an example is a dependent clause that
must hold in its head's span. A marker quoted from a block ("... hourly [2]" where a block says
so) is text, not a citation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .boundaries import NEVER_END
from .citations import MARKER_RE, MARKER_RUN_RE, parse_marker, strip_markers

__all__ = ["Clause", "clauses", "quoted_marker"]


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
# A title's full stop ends no sentence before a capital ("Dr. Amir Haddad", '"Dr. Drum"'), as
# the sentence cutter reads it (gate/boundaries.py), so it ends no clause either.
_TITLES = "".join(rf"(?<!\b{re.escape(w)}\.)" for w in sorted(NEVER_END) if "." not in w)
# The spaces before a break are read from a run's first space only ("(?<!\s)"), where the
# leftmost match starts anyway: linear on a long run of spaces (20k took 7 s of CPU).
_BREAK = re.compile(
    r"(?:(?<!\s)\s*)?;\s*"
    # Each break's one positive look-behind comes first: the look-arounds all hold at one
    # place, so their order changes no cut, but the abbreviations' ~60 are then tried only
    # after a full stop, not at every character (clauses() of bench_gate's railway sentences
    # in 0.55x the time).
    r"|(?-i:(?<=[\w%)\]\ue000-\ue7ff][.!?])(?<![A-Z]\.)(?<!\be\.g\.)(?<!\bi\.e\.)"
    r"(?i:" + _TITLES + r")\s+(?=[A-Z\"“]))"
    # A full stop after a word and before a lower-case one ("every day. a free place ...",
    # two list items run together) still ends a clause; abbreviations do not.
    r"|(?-i:(?<=[a-z%)\]][.])(?<![A-Za-z]\.[a-z]\.)(?<!\b[A-Za-z]\.)(?<!\betc\.)"
    r"(?<!\bapprox\.)(?<!\bincl\.)(?<!\bexcl\.)(?<!\bvs\.)(?<!\bno\.)(?<!\bapp\.)"
    r"(?<!\bmin\.)(?<!\bmax\.)\s+(?=[a-z]))"
    r"|(?-i:(?:(?<=[a-z%)\]][.][\ue000-\ue7ff])|(?<=[a-z%)\]][.]\s[\ue000-\ue7ff]))\s+(?=[a-z]))"
    r"|,\s+(?:and|but|or|while|whereas|yet|so|although|though)\s+"
    r"|(?<!\s)\s+(?:but|whereas|although|though)\s+",
    re.IGNORECASE,
)
# An example or aside: "e.g.", "i.e.", "for example" anywhere; "such as", "including", "like"
# only after a comma ("spare parts such as lids are sold ..." is one clause). The spaces before
# one are read from a run's first space only, where the leftmost match starts anyway: linear on
# a long run of spaces (a sentence of 10k "(a) " took 4.6 s here).
_EXAMPLE = re.compile(
    r"(?:,?(?:(?<!\s)\s*)?\b(?:e\.\s?g\.|i\.\s?e\.|for example|for instance)"
    r"|,\s*(?:such as|including|like))(?:,|\s|$)\s*",
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


_LEAD = re.compile(r"[\s|>#*_•\-–—]*")


def _clean(text: str) -> str:
    text = _HOLES.sub(" ", _RUNS.sub(" ", text))
    # Markup off both ends and table bars read as spaces, in one pass each: the patterns that
    # did it ("[\s|*_]+$", "\s*\|\s*") were quadratic in a run of spaces.
    start = _LEAD.match(text).end()  # type: ignore[union-attr]  # "*" always matches
    end = len(text)
    while end > start and (text[end - 1].isspace() or text[end - 1] in "|*_"):
        end -= 1
    text = " ".join(text[start:end].replace("|", " ").split())
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return text if re.search(r"[^\W_]", text) else ""


def _ranged(marker: str, cited: Sequence[int], n_blocks: int) -> bool:
    """A range of three or more blocks, or every issued block once there are three."""
    spans_range = re.search(r"\d\s*[-–]\s*\d", marker) is not None and len(cited) >= 3
    return spans_range or (n_blocks >= 3 and len(set(cited)) >= n_blocks)
