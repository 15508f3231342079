"""The sentences of a block fit to quote, read with its structure: the heading each sits
under, its section (each table row one of its own), the list it is an item of and that list's
lead-in, and whether it goes on from the sentence before it. `passages.py` ranks them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..ingest.chunking import pieces
from ..ingest.sentences import sentence_spans
from ..ingest.tables import rendered_rows
from ..text import tokenize
from .tables import Table

__all__ = [
    "MIN_TOKENS",
    "Quotable",
    "block_sentences",
    "depends",
    "entry_texts",
    "leads",
    "sectioned",
    "sections",
    "speaks_of_heading",
    "titles",
]

_LIST_MARK = re.compile(r"^(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|(?:A|Answer)\s*:\s+)")
# A line opening a list item: what precedes a sentence on its line when it is one.
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s*$")
_ITEM_MARK = re.compile(r"^(?:[-*+•]|\d+[.)])\s+")
# A sentence opening with one of these goes on from the one before it: keep them together.
# "There is/are ..." states something of its own ("There is a car park behind the building.");
# "There" alone points back to a place ("There you can ...").
_CONTINUES = re.compile(
    r"^(?:it|its|this|that|these|those|they|them|then|otherwise|also|however|to do so|"
    r"there(?!\s+(?:is|are|was|were|will|may|might|can|could|must|should|has|have)\b|['’]s\b)|"
    r"if so|in that case|after that|for example|for all other|for other|for the rest|in all other"
    r"|all other|the rest|else|instead|but|and|or|still|even so|either way)\b",
    re.IGNORECASE,
)

# Fewer words than this (BM25 tokens, stop words out) is a fragment ("See below."); two is an
# instruction ("Do not use solvents.", "Keep it dry.").
MIN_TOKENS = 2


@dataclass(frozen=True, slots=True)
class Quotable:
    """A sentence of a block fit to quote, with where it stands: heading, section, list."""

    text: str
    title: str
    section: int
    row: bool
    item: int  # which list of the block it is an item of, 0 for none
    step: bool = False  # an item of a numbered list
    scope: str = ""  # its headings from the outermost ("Rider Club What members get")
    lead: str = ""  # a list item's lead-in ("To register as a new patient, do the following:")


def titles(text: str) -> list[str]:
    """The block's headings and question lines: what the entry says it is about."""
    return [" ".join(text[s:e].strip().lstrip("#").split()) for s, e, h in pieces(text) if h]


def block_sentences(text: str) -> list[str]:
    """Sentences of a block fit to quote: no headings, questions, list markers or fragments."""
    return [sentence for sentence, _, _ in sections(text)]


def sections(text: str, title: str = "") -> list[tuple[str, str, str]]:
    """Each quotable sentence with the heading it sits under (`title` before any heading) and
    all its headings, outermost first."""
    return [(s.text, s.title, s.scope) for s in sectioned(text, title)]


def leads(text: str, title: str = "") -> list[str]:
    """The lead-ins of the block's lists ("To cancel a monthly plan:"), each once: its items
    are scored under them too."""
    return list(dict.fromkeys(s.lead for s in sectioned(text, title) if s.lead))


@lru_cache(maxsize=4096)
def entry_texts(text: str, title: str = "") -> tuple[tuple[int, str], ...]:
    """The block's FAQ entries read whole, by section: each question heading with the quotable
    sentences under it (what `rank_sentences` embeds, and the indexer warms)."""
    grouped: dict[int, list[str]] = {}
    opening: list[str] = []  # before the first heading: the end of an entry the chunk starts in
    for s in sectioned(text, title):
        if s.section and s.title.rstrip().endswith(("?", "？")):
            grouped.setdefault(s.section, [s.title]).append(s.text)
        elif not s.section:
            opening.append(s.text)
    if grouped and opening:
        grouped[0] = opening
    return tuple((section, " ".join(said)) for section, said in grouped.items())


# A pronoun subject opening a section stands for what its heading names ("## Pro plan" over
# "It costs 19 euros a month."): the heading places the sentence.
_HEADED = re.compile(r"(?:it|they|this|these)\s", re.IGNORECASE)


def speaks_of_heading(text: str, heading: str) -> bool:
    """Whether a sentence's subject is a pronoun standing for `heading`, a name. Not under a
    question ("## What is a section 21 notice?"): an answer names its subject first, and a
    chunk starting mid-paragraph is framed under its section's question ("It must give you
    two months' notice" went on from "A section 21 notice is ...")."""
    name = heading.rstrip()
    return bool(name) and not name.endswith(("?", "？")) and _HEADED.match(text) is not None


def depends(text: str) -> bool:
    """Whether a sentence goes on from the one before it ("Otherwise, ...", "For all other
    currencies, ..."): alone, it says something its reader cannot place."""
    return _CONTINUES.match(text) is not None


@lru_cache(maxsize=4096)
def sectioned(text: str, title: str) -> tuple[Quotable, ...]:
    """Each quotable sentence with its heading, its section (the ordinal of its heading in the
    block; each table row one of its own), whether it is a table row, and its list."""
    out: list[Quotable] = []
    section = 0
    lists = 0
    table = Table()
    path: list[tuple[int, str]] = []  # (level, heading): a line of no "#" is the innermost
    scope = title
    lead = ""  # the sentence introducing the list that follows it ("..., follow these steps:")
    for p_start, p_end, heading in pieces(text):
        if heading:
            lead = ""
            line = text[p_start:p_end].strip()
            title = " ".join(line.lstrip("#").split())
            level = len(line) - len(line.lstrip("#")) or 7
            path = [(lv, head) for lv, head in path if lv < level] + [(level, title)]
            scope = " ".join(head for _, head in path)
            section += 1
            table.reset()
            continue
        lines = text[p_start:p_end].split("\n")
        rows = table.read(lines)
        rendered = rendered_rows(lines) if rows is None else None
        if rendered is not None:  # rows extraction wrote as sentences (ingest/tables.py)
            lead_in, rows = rendered
            for sentence in lead_in:
                if len(tokenize(sentence)) >= MIN_TOKENS:
                    out.append(
                        Quotable(" ".join(sentence.split()), title, section, False, 0, scope=scope)
                    )
        if rows is not None:
            lead = ""
            for row in rows:
                if len(tokenize(row)) >= MIN_TOKENS:
                    section += 1
                    out.append(Quotable(row, title, section, True, 0, scope=scope))
            continue
        if table.header is not None:  # the text after a table is not the last row's
            section += 1
        table.reset()
        in_list = numbered = False
        for s_start, s_end in sentence_spans(text, p_start, p_end):
            line_start = max(text.rfind("\n", p_start, s_start) + 1, p_start)
            raw = text[s_start:s_end]
            if _ITEM.match(raw):
                continue  # a list marker the sentence splitter left on its own ("1.")
            marker = text[line_start:s_start]
            item = bool(_ITEM.match(marker)) or (
                line_start == s_start and _ITEM_MARK.match(raw) is not None
            )
            if item and not in_list:
                lists += 1
                mark = _ITEM_MARK.match(raw)
                numbered = any(c.isdigit() for c in (marker or (mark.group() if mark else "")))
            in_list = item or (in_list and line_start != s_start)
            sentence = _LIST_MARK.sub("", " ".join(raw.split()))
            if not in_list:
                lead = sentence if sentence.endswith((":", "：")) else ""
            if len(tokenize(sentence)) >= MIN_TOKENS and sentence[-1:] in ".!。！":
                at = lists if in_list else 0
                step = bool(at) and numbered
                said = lead if at else ""
                out.append(Quotable(sentence, title, section, False, at, step, scope, said))
    return tuple(out)
