"""Runs of punctuation or spaces in a block or a sentence are read once, not once per character
or statement (a block of 20k ". " took 24 s of CPU, a sentence of 10k "(a) " 7 s): the same
readings as the patterns they replace, held to those patterns as oracles on generated text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from stream_rag.gate.citations import Citation
from stream_rag.gate.clauses import _BREAK, _EXAMPLE, _TITLES, _clean, clauses
from stream_rag.gate.lexical import GateContext, check_sentence
from stream_rag.gate.support import _referring
from stream_rag.gate.unsaid import _CONDITION, _CONDITION_WORD

# The patterns as they were, each tried from every position it was asked about.
_REFERS = re.compile(
    r"[\s\W]*(?:it|its|they|their|this|these|those|he|she|his|her|both|such|each)\b",
    re.IGNORECASE,
)
_EXAMPLE_BEFORE = re.compile(
    r"(?:,?\s*\b(?:e\.\s?g\.|i\.\s?e\.|for example|for instance)|,\s*(?:such as|including|like))"
    r"(?:,|\s|$)\s*",
    re.IGNORECASE,
)

# The breaks with each look-behind where it stood (the abbreviations' tried first).
_BREAK_BEFORE = re.compile(
    r"(?:(?<!\s)\s*)?;\s*"
    r"|(?-i:(?<![A-Z]\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?i:" + _TITLES + r")"
    r"(?<=[\w%)\]\ue000-\ue7ff][.!?])\s+(?=[A-Z\"“]))"
    r"|(?-i:(?<![A-Za-z]\.[a-z]\.)(?<!\b[A-Za-z]\.)(?<!\betc\.)(?<!\bapprox\.)(?<!\bincl\.)"
    r"(?<!\bexcl\.)(?<!\bvs\.)(?<!\bno\.)(?<!\bapp\.)(?<!\bmin\.)(?<!\bmax\.)"
    r"(?<=[a-z%)\]][.])\s+(?=[a-z]))"
    r"|(?-i:(?:(?<=[a-z%)\]][.][\ue000-\ue7ff])|(?<=[a-z%)\]][.]\s[\ue000-\ue7ff]))\s+(?=[a-z]))"
    r"|,\s+(?:and|but|or|while|whereas|yet|so|although|though)\s+"
    r"|(?<!\s)\s+(?:but|whereas|although|though)\s+",
    re.IGNORECASE,
)


def _clean_before(text: str) -> str:
    text = re.sub("[\ue000-\ue7ff]", " ", text)
    text = re.sub(r"^[\s|>#*_•\-–—]+|[\s|*_]+$", "", text)
    text = re.sub(r"\s*\|\s*", " ", text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(text.split()))
    return text if re.search(r"[^\W_]", text) else ""


_PIECES = [
    " ",
    "  ",
    "\t",
    "\n",
    "\xa0",
    "\u2003",
    "\x1c",
    "\u200b",
    ".",
    ". ",
    ",",
    ";",
    "|",
    "*",
    "_",
    ">",
    "#",
    "-",
    "—",
    "•",
    "(",
    ")",
    "'",
    "It",
    "its",
    "they",
    "Each",
    "itself",
    "bit",
    "İt",
    "ſuch",
    "x",
    "7",
    "e.g.",
    "e. g.",
    "i.e.",
    "for example",
    "such as",
    ", including",
    "like",
    "if",
    "unless",
    "as long as",
    "\ue000",
    "\ue400",
    "Dr.",
    "dr.",
    "Mr. ",
    "U.S.",
    "etc.",
    "no.",
    "approx.",
    "A.",
    "a.",
    "%.",
    ").",
    "]. ",
    "!",
    "?",
    '"',
    "“",
    "Fee",
    "fee",
    " but ",
    "whereas",
    ", and ",
    ", so ",
]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


def test_the_oracles_are_the_patterns_as_they_were() -> None:
    assert _EXAMPLE.pattern != _EXAMPLE_BEFORE.pattern
    assert _BREAK.pattern != _BREAK_BEFORE.pattern
    assert _CONDITION.pattern.startswith(r"\W*")
    assert not _CONDITION_WORD.pattern.startswith(r"\W")


@given(_TEXT)
def test_a_statement_refers_back_where_it_did(text: str) -> None:
    starts = list(range(len(text) + 1))
    assert _referring(text, starts) == [_REFERS.match(text, s) is not None for s in starts]


@given(_TEXT)
def test_clauses_break_where_they_did(text: str) -> None:
    assert _BREAK.split(text) == _BREAK_BEFORE.split(text)


@given(_TEXT)
def test_examples_are_cut_where_they_were(text: str) -> None:
    assert _EXAMPLE.split(text) == _EXAMPLE_BEFORE.split(text)


@given(_TEXT)
def test_a_clause_is_cleaned_as_it_was(text: str) -> None:
    assert _clean(text) == _clean_before(text)


@given(_TEXT)
def test_a_condition_word_is_found_where_it_was(text: str) -> None:
    assert (_CONDITION_WORD.search(text) is None) == (_CONDITION.search(text) is None)


def test_a_block_of_20k_full_stops_is_judged() -> None:
    ctx = GateContext(["Refunds take 5 days. " + ". " * 20_000, "Trains run hourly."])
    assert check_sentence("It takes 5 days for refunds [1].", ctx).ok
    assert not check_sentence("It takes 9 days for refunds [1].", ctx).ok
    assert not ctx.check("It takes 5 days for refunds.", [Citation(2)]).ok


def test_a_sentence_of_10k_parentheses_is_cut() -> None:
    units = clauses("Refunds take 5 days " + "(a) " * 10_000 + "for any ticket [1].", (), 2)
    assert units[0] == clauses("Refunds take 5 days for any ticket [1].", (), 2)[0]
    assert len(units) == 1 + 1000  # the first 1000 parentheses are read as clauses
    assert units[-1].text == "(a)"
    assert units[-1].cited == (1,)
