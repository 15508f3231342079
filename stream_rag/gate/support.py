"""Spans of a cited block and the one a clause aligns to (issue 27): each statement of a block
(a sentence, a line, a list item, a table row) and each pair of adjacent ones, read once per
context into ordered word keys with their positions, the quantities stated and what a negation
in them governs. A clause is checked against the span that shares most of its weighted words,
not against the whole block, so a number, a name or a "not" elsewhere in the block vouches for
nothing.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from ..language.opposites import unit_form
from ..language.quantities import Quantity, Stated, canonical, scan
from ..language.statements import negated_terms, statement_spans
from ..language.terms import NEGATION_CUE, stem
from ..text import STOP_WORDS

__all__ = [
    "Span",
    "Word",
    "align",
    "block_names",
    "block_spans",
    "read_span",
    "read_words",
    "replaced",
]

# Words as the claim checks read them: letters (with inner apostrophes and hyphens) or a
# number with its separators.
_WORD = re.compile(r"[^\W\d_](?:[\w'’]*\w)?|\d+(?:[.,:]\d+)*")
# Glue that says nothing of what a value is attached to ("$8 per month", "20 GB of storage").
# Stop words that have an opposite ("before"/"after") are words here.
_POLAR = frozenset({"before", "after", "above", "below", "over", "under", "more", "most", "few"})
_GLUE = (STOP_WORDS - _POLAR) | {"within", "around", "about", "approximately", "up", "across"}
_GLUE |= {"including"}


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a text as the checks compare it: `key` is its stem (a time unit's adjective
    as the unit), or "#" and its digits for a number; `name` when it is written capitalised
    mid-sentence, `capital` when capitalised at all."""

    key: str
    start: int
    end: int
    name: bool = False
    capital: bool = False

    @property
    def number(self) -> bool:
        return self.key.startswith("#")


def read_words(text: str, lowered: str) -> tuple[Word, ...]:
    """The words of `text` (`lowered` is its `canonical` form, the same length), stop words
    left out."""
    out = []
    prefix = ""  # "non-" of "non-members": one word, the opposite of "members"
    # Whether the word before is a small word or capitalised (or there is none).
    after_glue = True
    for match in _WORD.finditer(lowered):
        token = match.group()
        was_glue = after_glue
        after_glue = token in _GLUE or (match.start() < len(text) and text[match.start()].isupper())
        if token[0].isdigit():
            out.append(Word("#" + token.rstrip(".,:"), match.start(), match.end()))
            prefix = ""
            continue
        if token == "non" and lowered.startswith("-", match.end()):
            prefix = "non"
            continue
        token = token.replace("’", "'")
        start = match.start()
        capital = start < len(text) and text[start].isupper()
        name = capital and start > 0 and not _opens(text, start)
        glue = token in _GLUE or (token.endswith("'s") and token[:-2] in _GLUE)
        if glue and name and _NAMED_NEXT.match(text, match.end()):
            name = False  # "The Bronx", "The Guardian": the name is the next word
        elif glue and name and not was_glue and _cased(text, match):
            # A small word in sentence case after a lower-case word that is not one, before a
            # lower-case word, opens what a heading or a comma ran into ("Ending your contract
            # You can", "For the same fee, A licence"); "US", "a If or", "Secure By" stay names.
            name = False
        if glue and not name:
            continue
        key = prefix + unit_form(stem(token.removesuffix("'s")))
        prefix = ""
        out.append(Word(key, start, match.end(), name, capital))
    return tuple(out)


_NAMED_NEXT = re.compile(r"\s+[A-Z]")


def _cased(text: str, match: re.Match[str]) -> bool:
    """Whether the word `match` finds is written in sentence case (not all capitals; a single
    capital only after a comma: "Zone A", "Plan A" are names)."""
    written = text[match.start() : match.end()]
    if not re.match(r"\s+[a-z]", text[match.end() : match.end() + 12]):
        return False
    if len(written) == 1:
        return text[: match.start()].rstrip().endswith((",", ";"))
    return not written.isupper()


_OPENING = frozenset(" \t\"'“‘*_#>")


def _opens(text: str, start: int) -> bool:
    """Whether the word at `start` opens a sentence, line or cell (capitalised by rule)."""
    # Walked back, not sliced: a slice per capitalised word made reading a block quadratic.
    end = start
    while end and text[end - 1] in _OPENING:
        end -= 1
    return not end or text[end - 1] in ".!?:\n|-•" or text[max(end - 2, 0) : end] == "1)"


@dataclass(frozen=True, slots=True)
class Span:
    """A statement of a block (or two adjacent ones) as the claim checks read it."""

    block: int
    text: str
    lowered: str
    words: tuple[Word, ...]
    keys: frozenset[str]
    quantities: tuple[Quantity, ...]
    stated: Stated
    negated: frozenset[str]  # the stems a negation cue in it governs
    negates: bool  # it has a negation cue
    context: frozenset[str] = frozenset()  # the statement before's words ("It" names them)

    @property
    def keys_numbers(self) -> frozenset[str]:
        return frozenset(w.key for w in self.words if w.number)

    def attached(self, quantity: Quantity, before: bool = False) -> frozenset[str]:
        return attached(self.words, quantity, before)


def placed_quantities(text: str) -> tuple[tuple[Quantity, ...], str]:
    """The quantities written in digits with their places in `text`, and `text` folded
    (positions line up with `text`'s)."""
    folded = text.casefold()
    if len(folded) != len(text):
        folded = text.lower() if len(text.lower()) == len(text) else text
    found, _ = scan(folded)
    return tuple(sorted(found, key=lambda q: q.span)), folded


def read_span(block: int, text: str, context: frozenset[str] = frozenset()) -> Span:
    # Number words ("thirty") are read as numbers for what the span vouches for; places are
    # taken from the text as written.
    found, words = scan(canonical(text))
    placed, folded = placed_quantities(text)
    read = read_words(text, folded)
    negated = frozenset(stem(t) for t in negated_terms(words))
    return Span(
        block,
        text,
        folded,
        read,
        frozenset(w.key for w in read if not w.number),
        placed,
        Stated.of(found, words),
        negated,
        NEGATION_CUE.search(words) is not None,
        context,
    )


# The words after a number that say what it counts, up to the next number.
_ATTACHED = 4


def attached(words: Sequence[Word], quantity: Quantity, before: bool = False) -> frozenset[str]:
    """What a number counts: the words after it up to the next number (at most four), or with
    `before` the two before it back to the previous number ("released on 2024-05-01")."""
    start, end = quantity.span
    if before:
        back: list[str] = []
        for word in reversed(words):
            if word.end > start:
                continue
            if word.number or len(back) == 2:
                break
            back.append(word.key)
        return frozenset(back)
    after: list[str] = []
    for word in words:
        if word.start < end:
            continue
        if word.number or len(after) == _ATTACHED:
            break
        after.append(word.key)
    return frozenset(after)


# Kept per block: requests over different sets of blocks share the popular chunks, and a
# block's reading (~2.4 ms of CPU for 300 words) is done at its first sentence, on the loop.
# ~100 KB a 300-word block, so at most ~25 MB (shared with the contexts that hold them).
@lru_cache(maxsize=256)
def block_spans(block: int, text: str) -> tuple[Span, ...]:
    """Each statement of block `block`, knowing the words of the one before ("It includes
    ..."); a table row is read under its header row, a list item under its lead-in."""
    out: list[Span] = []
    header: str | None = None  # a table's header row: its rows are read under it
    lead: str | None = None  # "Club members get:": each item of the list after it says it
    joined: list[Span] = []  # a statement and the next one when that one refers back to it
    statements = statement_spans(text)
    referring = _referring(text, [s for s, _ in statements])
    for i, (s, e) in enumerate(statements):
        line = text[s:e]
        if _RULE.fullmatch(line):
            continue
        if _ITEM.match(line):
            if lead is not None:
                line = f"{lead}\n{line}"
        else:
            lead = line if line.rstrip().endswith(":") else None
        if not line.startswith("|"):
            header = None
        elif header is None and i + 1 < len(statements):
            after = text[statements[i + 1][0] : statements[i + 1][1]]
            header = line if _RULE.fullmatch(after) else None
        elif header is not None:
            line = f"{header}\n{line}"
        refers = referring[i]
        if out and refers and not line.startswith("|") and not _ITEM.match(line):
            # "X arrive within two hours. They are free." says "X are free": the two are one
            # span too, for a clause that restates both.
            joined.append(read_span(block, f"{out[-1].text} {line}", out[-1].context))
        out.append(read_span(block, line, out[-1].keys if out and refers else frozenset()))
    return (*out, *joined)


@lru_cache(maxsize=256)
def block_names(text: str) -> frozenset[str]:
    """The words `text` writes capitalised mid-sentence: its names (kept like its spans). A
    table row read as a sentence ("Starter: Data 5 GB, Price on a 12-month contract 8 pounds")
    opens each cell after its comma with a capital, as the table did: a header is no name."""
    return frozenset(
        w.key for w in read_words(text, text.casefold()) if w.name and not _opens_cell(text, w)
    )


def _opens_cell(text: str, word: Word) -> bool:
    if text[max(word.start - 2, 0) : word.start] != ", ":
        return False
    line = text[text.rfind("\n", 0, word.start) + 1 : word.start]
    return _ROW_LABEL.match(line) is not None


# A row's label, as tables read row by row write it (ingest/tables.py): words, a colon.
_ROW_LABEL = re.compile(r"[^\s:][^:\n.!?]{0,120}: \S")


_RULE = re.compile(r"\|?[\s:|-]*-[\s:|-]*")
_ITEM = re.compile(r"\s*(?:[-*+\u2022]|\d{1,3}[.)])\s")


# A statement opening with one of these (its first word, after any other characters) names
# what the statement before it named.
_REFERRING = re.compile(
    r"(?:it|its|they|their|this|these|those|he|she|his|her|both|such|each)\b", re.IGNORECASE
)
_NOT_WORDS = re.compile(r"[\s\W]+", re.IGNORECASE)


def _referring(text: str, starts: Sequence[int]) -> list[bool]:
    """For each position of `starts`, whether the first word from there is one of
    `_REFERRING`. The characters before it are skipped by run, found once for the text:
    skipping them from each start read to the end of a long run of them every time (a block
    of 20k ". " took 17 s)."""
    runs = [m.span() for m in _NOT_WORDS.finditer(text)]
    run_starts = [a for a, _ in runs]
    out = []
    for start in starts:
        k = bisect_right(run_starts, start) - 1
        at = runs[k][1] if k >= 0 and start < runs[k][1] else start
        out.append(_REFERRING.match(text, at) is not None)
    return out


def align(
    keys: Iterable[str],
    quantities: Sequence[Quantity],
    spans: Iterable[Span],
    weight: Callable[[str], float],
) -> tuple[Span | None, float]:
    """The span sharing most of `keys`' weight (its numbers stated there count too; in a tie a
    statement before a question, which asserts nothing, then the shorter), and the share of the
    weight it has."""
    weights: Mapping[str, float] = {k: weight(k) for k in keys}
    total = sum(weights.values())
    best: tuple[float, float, bool, int, Span | None] = (-1.0, 0.0, False, 0, None)
    for span in spans:
        shared = sum(w for k, w in weights.items() if k in span.keys)
        share = shared / total if total > 0 else 1.0
        vouched = sum(1 for q in quantities if span.stated.vouches_for(q))
        score = share + (0.1 * vouched / len(quantities) if quantities else 0.0)
        asserts = not span.text.rstrip().endswith("?")
        candidate = (score, share, asserts, -len(span.text), span)
        if candidate[:4] > best[:4]:
            best = candidate
    return best[4], best[1]


def replaced(
    mine: Sequence[str], theirs: Sequence[str], most: int = 2
) -> Iterator[tuple[int, int]]:
    """The positions (in `mine`, in `theirs`) of words written one for one in the place of the
    other's, in order: the runs the alignment replaces, as long on both sides and of <= `most`."""
    matcher = SequenceMatcher(None, mine, theirs, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1 <= most:
            yield from zip(range(i1, i2), range(j1, j2), strict=True)
