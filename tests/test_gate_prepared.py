"""The gate's work kept or done once (a context's spans and names read at first use and kept,
the stems a word is opposite to, support.py's word reading, claimcheck.py's quoted markers):
the same verdicts as a fresh context and the first, pairwise versions, by property over
sentences edited from the blocks' own words."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_rag.gate import support
from stream_rag.gate.citations import strip_markers
from stream_rag.gate.claimcheck import quoted_marker
from stream_rag.gate.lexical import GateContext, check_sentence
from stream_rag.language.opposites import closed_class, counterparts, opposite
from stream_rag.language.terms import stem

# Other domains than the claim-check fixtures: names, a table, a list, numbers, negations.
BLOCKS = (
    "The Orchard Library lends up to 12 books for 21 days. Members of the Reading Club may "
    "renew twice. It does not lend reference works.",
    "| Room | Seats | Price |\n|---|---|---|\n| Elm Hall | 40 | £60 per day |\n"
    "| Birch Room | 12 | £25 per hour |",
    "Deliveries arrive on Monday and Thursday mornings.\n- Parcels over 20 kg are refused.\n"
    "- Letters marked [3] are kept at the desk for 7 days.",
    "Registration opens at 08:30 and closes at 17:00. Late entries are never accepted, but "
    "refunds are available until the end of May.",
)
WORDS = sorted({w for b in BLOCKS for w in re.findall(r"[\w£:.-]+", b) if w.strip(".")})
EXTRA = ["not", "never", "Friday", "week", "£90", "35", "closed", "Oak", "Hall", "excluded"]


@st.composite
def sentences(draw: st.DrawFn) -> str:
    """A run of a block's words, edited (words swapped in from other blocks or known traps,
    words dropped), with markers placed at the end or mid-sentence."""
    block = draw(st.integers(0, len(BLOCKS) - 1))
    words = strip_markers(BLOCKS[block]).replace("|", " ").split()
    start = draw(st.integers(0, max(0, len(words) - 4)))
    span = words[start : start + draw(st.integers(3, 18))]
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(span) - 1))
        edit = draw(st.sampled_from(["swap", "drop", "insert"]))
        if edit == "drop" and len(span) > 2:
            del span[at]
        else:
            word = draw(st.sampled_from(WORDS + EXTRA))
            span[at : at + (edit == "swap")] = [word]
    cited = draw(st.lists(st.integers(1, len(BLOCKS) + 1), min_size=0, max_size=3))
    marker = "".join(f"[{n}]" for n in cited)
    inside = draw(st.booleans())
    if cited and inside:  # a mid-sentence marker, covering its own clause
        cut = draw(st.integers(1, len(span)))
        return " ".join(span[:cut]) + f" {marker}, and " + " ".join(span[cut:]) + "."
    return " ".join(span) + f" {marker}."


@settings(max_examples=300, deadline=None)
@given(st.lists(sentences(), min_size=1, max_size=6), st.sampled_from(["strict", "balanced"]))
def test_a_context_that_judged_others_gives_a_fresh_ones_verdicts(
    raws: list[str], mode: str
) -> None:
    shared = GateContext(BLOCKS, mode=mode)  # keeps the spans and names it read
    for raw in raws:
        support.block_spans.cache_clear()
        support.block_names.cache_clear()
        fresh = check_sentence(raw, GateContext(BLOCKS, mode=mode))
        assert check_sentence(raw, shared) == fresh, raw


@given(st.lists(st.sampled_from(WORDS + EXTRA), min_size=1, max_size=30), st.data())
def test_a_blocks_kept_reading_is_its_reading(words: list[str], data: st.DataObject) -> None:
    text = data.draw(st.sampled_from([*BLOCKS, " ".join(words)]))
    n = data.draw(st.integers(1, 9))
    assert support.block_spans(n, text) == support.block_spans.__wrapped__(n, text)
    assert support.block_names(text) == support.block_names.__wrapped__(text)
    assert support.block_spans(n, text) is support.block_spans(n, text)


def _opens_sliced(text: str, start: int) -> bool:
    """support._opens as first written (a slice of everything before the word)."""
    before = text[:start].rstrip(" \t\"'“‘*_#>")
    return not before or before[-1] in ".!?:\n|-•" or before.endswith(("1.", "1)"))


@given(st.text(alphabet=" \t\n\"'“‘*_#>.!?:|-•1)aB", max_size=12), st.data())
def test_a_word_opens_where_it_did(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    assert support._opens(text, start) == _opens_sliced(text, start)


def _quoted_compiled(before: str, marker: str, blocks: tuple[str, ...]) -> bool:
    """quoted_marker as first written (the pattern built before looking for the marker)."""
    words = re.findall(r"[\w$%€£.,:'’-]+", strip_markers(before).casefold())[-3:]
    if not words:
        return False
    flat = re.escape(" ".join(words)).replace(r"\ ", r"\W+")
    pattern = re.compile(flat + r"\W*" + re.escape(marker.strip()), re.IGNORECASE)
    return any(marker.strip() in block and pattern.search(block) for block in blocks)


@given(st.lists(st.sampled_from(WORDS), max_size=6), st.sampled_from(["[1]", "[3]", " [2] "]))
def test_a_marker_is_quoted_where_it_was(words: list[str], marker: str) -> None:
    before = " ".join(words)
    assert quoted_marker(before, marker, BLOCKS) == _quoted_compiled(before, marker, BLOCKS)
    assert quoted_marker("Letters marked", "[3]", BLOCKS)


def _vocabulary() -> list[str]:
    from stream_rag.language import opposites

    stems = {a for pair in opposites._OPPOSITES for a in pair} | set(opposites._CLASS_OF)
    stems |= {stem(w) for w in " ".join(BLOCKS + tuple(EXTRA)).casefold().split()}
    some = sorted(stems)[::7]
    prefixed = {p + s for s in some for p in ("un", "dis", "non", "in", "de-")}
    return sorted(stems | prefixed | {s[2:] for s in some} | {"", "un", "unit", "year"})


VOCABULARY = _vocabulary()


def test_counterparts_are_what_the_pairwise_checks_say() -> None:
    for a in VOCABULARY:
        found = counterparts(a)
        assert found == {b for b in VOCABULARY if opposite(a, b) or closed_class(a, b)} | (
            found - set(VOCABULARY)
        ), a
        assert all(opposite(a, b) or closed_class(a, b) for b in found), a


@given(st.text(alphabet="aeinostudrl-", max_size=9))
def test_counterparts_of_any_word(a: str) -> None:
    found = counterparts(a)
    for b in [*VOCABULARY, a[2:], "un" + a, "non-" + a]:
        assert (b in found) == (opposite(a, b) or closed_class(a, b)), (a, b)
