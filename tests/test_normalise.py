"""One string judged and shown (gate/normalise.py): what the gate reads is what the client
gets, on every answer route; characters that hide or reorder text are taken out, or the unit
is refused when taking them out would change what the reader sees."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

import anyio
import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from stream_rag.answer.pipeline import Answerer
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.events import Dropped, Event, SentenceOut
from stream_rag.gate import normalise
from stream_rag.gate.normalise import BIDI_CONTROLS, normalise_unit
from stream_rag.http.app import create_app
from stream_rag.index.folders import ingest_paths
from stream_rag.model.ledger import ROUTES, shown_sentences
from stream_rag.services import open_services
from stream_rag.types import Message

from .helpers import running_server
from .test_chat_http import upload
from .test_not_answered import ScriptedModel

POLICY = b"Annual plans can be refunded within 30 days of purchase. Gift cards are not refunded."


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("Gift cards are n\u00adot refunded [1].", "Gift cards are not refunded [1]."),
        ("within 3\u200b0 days [1]", "within 30 days [1]"),
        ("with\u2060in 30 days\ufeff [1]", "within 30 days [1]"),
        ("\uff21nnual plans [1]", "Annual plans [1]"),
        ("within \U0001d7d1\U0001d7ce days [1]", "within 30 days [1]"),
        ("the **annual** plan [1]", "the **annual** plan [1]"),
        ("see [the policy](https://example.com/x) [1]", "see the policy [1]"),
        ("tagged\U000e0041\U000e0042 text", "tagged text"),
        ("an escape\x1b[31m here", "an escape[31m here"),
        ("with\u034fin 3\ufe000 days [1]", "within 30 days [1]"),  # a grapheme joiner, a selector
        ("n\u3164ot refunded [1]", "not refunded [1]"),  # a Hangul filler draws as nothing
        ("within 30 days\U000e0100 [1]", "within 30 days [1]"),
        ("a line\nbreak\tand tab", "a line\nbreak\tand tab"),
        # Markup inside a word is rendered as the word: judged and shown as it reads.
        ("Gift cards are n**o**t refunded [1].", "Gift cards are not refunded [1]."),
        ("You can`n`ot export [1]", "You cannot export [1]"),
        ("**n**ot in *we*ek 3 [1]", "not in week 3 [1]"),
        ("a *whole phrase* in **bold** [1]", "a *whole phrase* in **bold** [1]"),
    ],
)
def test_hidden_characters_are_taken_out(raw: str, shown: str) -> None:
    assert normalise_unit(raw).text == shown
    assert normalise_unit(raw).refused is None


def test_joiners_stay_where_a_script_spells_with_them() -> None:
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # ZWNJ inside a Persian word
    assert normalise_unit(persian).text == persian
    assert normalise_unit("no\u200dt").text == "not"


@pytest.mark.parametrize(
    "raw",
    [
        "The plan costs $\u202e08\u202c per month [1].",
        "costs \u2067$80\u2069 [1]",
        "Gift cards are n\u043et refunded [1].",  # a Cyrillic o
        "\u0391nnual plans [1]",  # a Greek capital alpha
        "Day returns are \u039d\u039f\u03a4 valid [1].",  # "NOT" wholly in Greek capitals
        "Refunds take 1\u041e days [1].",  # a Cyrillic O after a digit: "10"
        "Children aged l5 to 17 [1].",  # a Latin l for the digit 1
        "Gift cards are n\ud800ot refunded [1].",  # a lone surrogate: no UTF-8 can carry it
        "refunded within 3\ufdd00 days [1]",  # a noncharacter
        "refunded within \ue0303 days [1]",  # private use: a font draws what it likes
        "Gift cards are n\u0336o\u0336t refunded [1].",  # struck through by overlays
        "Gift cards are no\u0332t refunded [1].",  # a mark no letter composes with
        "Gift cards are \u0274\u1d0f\u1d1b refunded [1].",  # "NOT" in small capitals
        "Gift cards are n\u0585t refunded [1].",  # an Armenian oh
        "within 3\u0660 days [1]",  # an Arabic-Indic zero inside an ASCII number
    ],
)
def test_what_cannot_be_taken_out_unchanged_is_refused(raw: str) -> None:
    refused = normalise_unit(raw)
    assert refused.refused
    refused.text.encode("utf-8")  # the refusal can still be written to the client


def test_words_in_one_script_are_not_refused() -> None:
    for text in (
        "Годовой план можно вернуть [1].",
        "Ο χρήστης [1]",
        "年間プラン [1]",
        "café [1]",
        "The μ of the sample is 10 [1].",
        "Rooms 101 and B10 [1].",
        "\u1eb9\u0301 k\u00fa \u00e0\u00e1r\u1ecd\u0300 [1]",  # Yoruba: a tone over a dot below
        "Ti\u1ebfng Vi\u1ec7t [1]",
        "\u0663\u0660 \u064a\u0648\u0645 [1]",  # Arabic-Indic digits, one script
        "Love \u2764\ufe0f and step 1\ufe0f\u20e3 [1]",  # emoji keep their selectors
    ):
        assert normalise_unit(text).refused is None, text


def test_a_long_run_of_marks_is_read_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # A model's unit of thousands of combining marks was read once per mark (walking back over
    # the run), seconds of the event loop's time; each character is now looked at once.
    looked = 0
    mark = normalise._mark

    def counted(ch: str) -> bool:
        nonlocal looked
        looked += 1
        return mark(ch)

    monkeypatch.setattr(normalise, "_mark", counted)
    raw = "Refunds take " + "\u0301" * 3000 + " 10 days [1]."
    normalise_unit(raw)
    assert looked <= 2 * len(raw)


@given(st.text())
@example("\u20d0")  # a combining mark with nothing before it (found in the suite on 4c114bf)
def test_normalising_is_idempotent_and_leaves_nothing_hidden(raw: str) -> None:
    once = normalise_unit(raw)
    once.text.encode("utf-8")
    if once.refused is None:
        assert normalise_unit(once.text).text == once.text
        assert not any(ch in BIDI_CONTROLS or ch == "\u00ad" for ch in once.text)


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        (
            "Annual plans can be refunded with\u00adin 30 days of purchase [1].",
            "Annual plans can be refunded within 30 days of purchase.",
        ),
        (
            "\uff21nnual plans can be refunded within \U0001d7d1\U0001d7ce days of purchase [1].",
            "Annual plans can be refunded within 30 days of purchase.",
        ),
        ("Annual plans can be refunded within $\u202e03\u202c days of purchase [1].", None),
        ("Gift cards are n\u043et refunded [1].", None),
    ],
)
def test_every_route_shows_the_string_the_gate_judged(
    tmp_path: Path, minilm: MiniLMEmbedder, reply: str, shown: str | None
) -> None:
    model = ScriptedModel(reply)
    settings = Settings(data_dir=tmp_path / "data")
    with (
        running_server(create_app(settings, embedder=minilm, model=model)) as base_url,
        httpx.Client(base_url=base_url, timeout=120) as client,
    ):
        upload(base_url, "policy.md", POLICY)
        question = "Can annual plans be refunded?"
        for route in ROUTES:
            got = shown_sentences(client, route, question)
            assert got == ([] if shown is None else [shown]), (route, got)
        body = client.post("/v1/answer", json={"question": question}).json()
        judged = [v["text"] for a in body["attempts"] for v in a["verdicts"]]
        assert judged
        assert all(normalise_unit(t).text == t for t in judged), json.dumps(judged)


@pytest.mark.parametrize(
    "reply",
    [
        "Annual plans can be refunded within 30 days of purchase [1]. Gift cards are n\ud800ot "
        "refunded [1].",
        "\udfffAnnual plans can be refunded within 30 days of purchase [1].\ud83d",
        "# Refunds\ud800\n\nAnnual plans can be refunded within 30 days of purchase [1].",
    ],
)
def test_a_character_no_stream_can_carry_is_refused_and_the_stream_ends(
    tmp_path: Path, minilm: MiniLMEmbedder, reply: str
) -> None:
    """A lone surrogate (a model's JSON may carry "\\ud800") refuses its sentence before the
    gate; every route still ends as it should, the true sentence shown, the other not."""
    settings = Settings(data_dir=tmp_path / "data")
    app = create_app(settings, embedder=minilm, model=ScriptedModel(reply))
    question = "Can annual plans be refunded?"
    true = "Annual plans can be refunded within 30 days of purchase."
    with (
        running_server(app) as base_url,
        httpx.Client(base_url=base_url, timeout=120) as client,
    ):
        upload(base_url, "policy.md", POLICY)
        for route in ROUTES:
            assert shown_sentences(client, route, question) in ([true], []), route
        with client.stream("POST", "/v1/chat", json={"question": question}) as stream:
            events = [line for line in stream.iter_lines() if line.startswith("event:")]
        assert events[-1] == "event: done", events
        answer = client.post("/v1/answer", json={"question": question})
        assert answer.status_code == 200, answer.text
        payload = {"model": "x", "messages": [{"role": "user", "content": question}]}
        with client.stream("POST", "/v1/chat/completions", json=payload | {"stream": True}) as r:
            assert list(r.iter_lines())[-2:] in (["data: [DONE]", ""], ["", "data: [DONE]"])
        whole = client.post("/v1/chat/completions", json=payload)
        assert whole.status_code == 200, whole.text
        assert "\ud800" not in whole.json()["choices"][0]["message"]["content"]


class PiecesModel:
    """A chat model that streams the same pieces to every request, as given."""

    name = "pieces"

    def __init__(self, pieces: Sequence[str]) -> None:
        self.pieces = pieces

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        for piece in self.pieces:
            yield piece


def test_a_surrogate_pair_split_across_two_pieces_is_one_character(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """Each piece of a model's stream is a JSON string of its own: an emoji's pair may come
    as "\\ud83d" ending one and "\\ude00" opening the next; joined, not refused."""
    true = "Annual plans can be refunded within 30 days of purchase [1]."
    pieces = ["Gift cards are not refunded \ud83d", "\ude00 [1]. ", true, " \ud83d"]
    events = _answered(tmp_path, minilm, POLICY, PiecesModel(pieces))
    shown = [e.text for e in events if isinstance(e, SentenceOut)]
    assert shown == [
        "Gift cards are not refunded \U0001f600.",
        "Annual plans can be refunded within 30 days of purchase.",
    ]
    # A high surrogate the stream ends on is no character: its unit is refused.
    assert [e.reason for e in events if isinstance(e, Dropped)] == ["hidden_text"]


# A PDF whose font maps no character to the euro sign's glyph: extraction leaves U+FFFD.
EXTRACTED = "Plans can be refunded within 30 days. The cancellation fee is 5 \ufffd per month."


@pytest.mark.parametrize(
    ("unit", "shown"),
    [
        ("The cancellation fee is 5 \ufffd per month [1].", True),
        ("The cancellation fee is 5 \ufffd [2] per month [1].", True),  # one cited block has it
        ("The cancellation fee \ufffd is 5 per month [1].", False),  # not where the block has it
        ("The cancellation fee is 5 \ufffd per month [2].", False),  # the cited block has none
        ("The cancellation fee is 5 \ufffd per month.", False),  # no block cited
        ("The cancellation fee is 5\ufffd per month [1].", False),  # another word than the block's
        ("The cancellation fee is 5 \ufffd pe month [1].", False),  # part of the block's word
    ],
)
def test_a_replacement_character_stands_only_where_its_cited_block_has_it(
    unit: str, shown: bool
) -> None:
    seen = normalise_unit(unit, [EXTRACTED, "Gift cards are not refunded."])
    assert (seen.refused is None) is shown, seen.refused
    assert seen.text == unit  # one string: judged and shown as written, U+FFFD included
    assert normalise_unit(unit).refused  # with no block given, never


def test_a_block_holding_a_replacement_character_is_quoted(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """The built-in generator quotes the block as extracted; its sentence was refused as
    `hidden_text` for the U+FFFD the block itself holds (review finding), now it is shown."""
    quoted = "Annual plans can be refunded within 30 days of purchase \ufffd no questions asked."
    policy = f"{quoted} Gift cards are not refunded.".encode()
    events = _answered(tmp_path, minilm, policy, None)
    shown = [e.text for e in events if isinstance(e, SentenceOut)]
    assert shown == [quoted], events
    assert not [e for e in events if isinstance(e, Dropped) and e.reason == "hidden_text"]


def _answered(
    tmp_path: Path, minilm: MiniLMEmbedder, policy: bytes, model: PiecesModel | None
) -> list[Event]:
    """The events of "Can annual plans be refunded?" over a one-document knowledge base,
    answered by `model` (None: the built-in generator)."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "policy.md").write_bytes(policy)
    settings = Settings(data_dir=tmp_path / "data")
    services = open_services(settings, embedder=minilm)
    answerer = services.answerer
    if model is not None:
        answerer = Answerer(services.retriever, model, settings)

    async def run() -> list[Event]:
        return [event async for event in answerer.stream("Can annual plans be refunded?")]

    try:
        ingest_paths(services.store, [kb], settings, indexer=services.indexer, quiet=True)
        return anyio.run(run)
    finally:
        services.close()
