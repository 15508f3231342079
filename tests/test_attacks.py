"""The fake model's hostile knobs (model/attacks.py, falsify.py) as transformations: each makes
a new sentence from the block's own, keeps a citation, is deterministic, and says it is false;
and the ledger that tells a benchmark so (model/ledger.py)."""

from __future__ import annotations

import random
import re
import unicodedata
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_rag.answer.prompt import build_messages
from stream_rag.cli.commands import build_parser
from stream_rag.cli.fake import config_of
from stream_rag.language.quantities import quantities
from stream_rag.language.terms import NEGATION_CUE
from stream_rag.model.attacks import ATTACKS, CYRILLIC, RLO, attack
from stream_rag.model.fake import FakeConfig, compose, create_fake_llm, write
from stream_rag.model.falsify import ANTONYMS, negate, swap_entities
from stream_rag.model.ledger import Record, match, plain, records, seen_false
from stream_rag.model.number_swap import swap_numbers
from stream_rag.model.passages import block_sentences
from stream_rag.retrieve.hybrid import Block

from .helpers import HTTP_GUARD_S, running_server

KB = Path(__file__).parent / "fixtures" / "gym_kb"
BLOCKS = {i: path.read_text() for i, path in enumerate(sorted(KB.iterdir()), start=1)}
PAIRS = [(n, s) for n, text in BLOCKS.items() for s in block_sentences(text)]
EVERY_SENTENCE = {plain(s) for _, s in PAIRS}
_MARKER = re.compile(r"\[\d")


def _visible_change(text: str) -> bool:
    """A character a word-matcher does not read as the letter it shows."""
    return any(
        unicodedata.category(c) == "Cf"
        or c in CYRILLIC.values()
        or "\uff01" <= c <= "\uff5e"  # fullwidth forms
        or "\U0001d7ce" <= c <= "\U0001d7ff"  # mathematical digits
        for c in text
    )


@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**32 - 1), knob=st.sampled_from(ATTACKS))
def test_an_attack_is_a_new_sentence_that_cites_and_says_it_is_false(
    pair: tuple[int, str], seed: int, knob: str
) -> None:
    n, sentence = pair
    written = attack(knob, n, sentence, BLOCKS, random.Random(seed))
    assert written == attack(knob, n, sentence, BLOCKS, random.Random(seed))
    if written is None:
        return  # the knob applies to no sentence of this block (the fake then quotes)
    assert written.behaviour == knob
    assert written.false
    assert set(written.cited) <= set(BLOCKS)
    assert _MARKER.search(written.text)
    # What a reader sees is no sentence of the knowledge base.
    assert plain(written.text) not in EVERY_SENTENCE or _visible_change(written.text)


@pytest.mark.parametrize("knob", ATTACKS)
def test_each_knob_applies_to_most_sentences_of_a_block(knob: str) -> None:
    """Built from any block's sentences: a knob finds something to change for most of them
    (swap_numbers needs numbers, which every block of the fixture has)."""
    rng = random.Random(0)
    made = [attack(knob, n, s, BLOCKS, rng) for n, s in PAIRS]
    assert sum(w is not None for w in made) >= 0.9 * len(PAIRS)
    assert len({w.variant for w in made if w is not None}) >= 2  # not one trick only


NAMES = st.sampled_from(["Basic", "Plus", "Elite", "Silver", "Gold", "Harbour", "Kestrel"])


@given(a=NAMES, b=NAMES, x=st.integers(1, 9999), y=st.integers(1, 9999), seed=st.integers())
def test_edits_of_any_priced_sentence(a: str, b: str, x: int, y: int, seed: int) -> None:
    """On sentences the fixture does not have: two prices swap places, an entity or period
    changes, and polarity flips, each a different string with the same citation-free body."""
    if x == y or a == b:
        return
    sentence = f"The {a} plan costs ${x} per month, or ${y} per year when paid annually."
    block = [sentence, f"The {b} plan costs ${x + y} per month."]
    rng = random.Random(seed)
    swapped = swap_numbers(sentence, block, rng)
    assert swapped is not None
    assert swapped.text == sentence.replace(f"${x} ", "\0").replace(f"${y} ", f"${x} ").replace(
        "\0", f"${y} "
    )
    entity = swap_entities(sentence, block, rng)
    assert entity is not None
    assert entity.text != sentence
    assert sorted(q.values for q in quantities(entity.text)) == sorted(
        q.values for q in quantities(sentence)
    )
    flipped = negate(sentence, rng)
    assert flipped is not None
    if flipped.variant == "antonym":  # "paid annually" -> "free annually"
        start, end = flipped.span
        assert (flipped.was.lower(), flipped.text[start:end].lower()) in {
            *ANTONYMS,
            *((b, a) for a, b in ANTONYMS),
        }
    else:
        assert len(NEGATION_CUE.findall(flipped.text)) != len(NEGATION_CUE.findall(sentence))


@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**32 - 1))
def test_invisible_edits_hide_a_real_change_or_show_another_number(
    pair: tuple[int, str], seed: int
) -> None:
    n, sentence = pair
    written = attack("invisible", n, sentence, BLOCKS, random.Random(seed))
    if written is None:
        return
    assert _visible_change(written.text)
    if written.variant == "bidi":
        # The text says the block's number; the override displays its digits reversed.
        assert RLO in written.text
        assert not written.false_cleaned
        logical = "".join(c for c in written.text if unicodedata.category(c) != "Cf")
        logical = logical.removesuffix(f" [{n}]")
        said = sorted(q.values for q in quantities(logical))
        assert any(said == sorted(q.values for q in quantities(s)) for _, s in PAIRS)
    else:
        # Cleaned (format characters out, look-alikes mapped, NFKC) it is still a change.
        assert written.false_cleaned
        assert plain(written.text) not in EVERY_SENTENCE


def _messages(question: str) -> list[dict[str, str]]:
    blocks = [
        Block(n, f"doc_{n}:v1:0", f"doc_{n}", 1, "0" * 64, f"f{n}.md", f"f{n}.md", 0, len(t), t, {})
        for n, t in BLOCKS.items()
    ]
    return [m.to_json() for m in build_messages(question, blocks)]


@pytest.mark.parametrize("knob", ATTACKS)
def test_the_fake_answers_with_the_knob_and_streams_what_it_wrote(knob: str) -> None:
    messages = _messages("How much does the Plus membership cost per year?")
    config = FakeConfig(seed=3, **{knob: 1.0})  # type: ignore[arg-type]
    written = write(config, messages)
    assert written
    assert {w.behaviour for w in written} <= {knob, "faithful"}
    assert any(w.behaviour == knob for w in written)
    pieces, behaviours = compose(config, messages)
    assert behaviours == [w.behaviour for w in written]
    assert all(w.text in "".join(pieces) for w in written)


def test_the_ledger_says_what_was_written_over_http() -> None:
    app = create_fake_llm(FakeConfig(swap_numbers=1.0))
    messages = _messages("How much does the Plus membership cost per year?")
    with running_server(app) as base_url:
        reply = httpx.post(
            f"{base_url}/v1/chat/completions",
            json={"model": "f", "messages": messages},
            timeout=HTTP_GUARD_S,
        ).json()
        first = httpx.get(f"{base_url}/fake/ledger", timeout=HTTP_GUARD_S).json()
        httpx.post(
            f"{base_url}/v1/chat/completions",
            json={"model": "f", "messages": messages},
            timeout=HTTP_GUARD_S,
        )
        later = httpx.get(
            f"{base_url}/fake/ledger", params={"after": 1}, timeout=HTTP_GUARD_S
        ).json()
        bad = httpx.get(f"{base_url}/fake/ledger", params={"after": "x"}, timeout=HTTP_GUARD_S)
    assert bad.status_code == 400
    assert "error" in bad.json()
    assert first["requests"] == 1
    assert later["requests"] == 2
    assert [e["request"] for e in later["entries"]] == [2]
    sentences = records(first["entries"])
    content = reply["choices"][0]["message"]["content"]
    assert sentences
    assert all(r.text in content for r in sentences)
    assert any(r.false and r.behaviour == "swap_numbers" for r in sentences)


def test_a_shown_sentence_is_matched_to_what_was_written() -> None:
    false = Record("negate", "add_not", "The sauna does n\u00adot close early. [2]", True, True)
    bidi = Record("invisible", "bidi", f"Day passes cost €{RLO}02\u202c. [1]", True, False)
    true = Record("faithful", "", "The gym opens at 06:00 on weekdays. [3]", False, False)
    written = [false, bidi, true]
    assert match("The sauna does not close early.", written)[0] == false
    assert match("The gym opens at 06:00 on weekdays.", written)[0] == true
    assert match("Lockers are emptied at night.", written)[0] is None
    # A reader sees a bidi override's digits reversed; without it, the text's own number.
    assert seen_false(f"Day passes cost €{RLO}02\u202c.", bidi)
    assert not seen_false("Day passes cost €02.", bidi)
    assert seen_false("The sauna does not close early.", false)
    assert not seen_false("The gym opens at 06:00 on weekdays.", true)


@pytest.mark.parametrize("knob", ATTACKS)
def test_fake_llm_takes_each_knob_as_a_flag(knob: str) -> None:
    args = build_parser().parse_args(["fake-llm", f"--{knob.replace('_', '-')}", "0.4"])
    assert getattr(config_of(args), knob) == 0.4
    with pytest.raises(SystemExit):
        build_parser().parse_args(["fake-llm", f"--{knob.replace('_', '-')}", "1.5"])


def test_a_table_row_shown_whole_is_not_partial() -> None:
    table = Record(
        "markup", "table", "\n\n| Item | Detail |\n|---|---|\n| Day | €12 [1] |\n", True, True
    )
    clause = Record(
        "append_clause", "example", "Day passes cost €12, e.g. the sauna. [1]", True, True
    )
    assert match("| Day | €12 |", [table]) == (table, 1.0)
    found, covered = match("Day passes cost €12.", [clause])
    assert found == clause
    assert covered < 0.9
