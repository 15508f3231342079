"""The gate against generated attacks, on every answer route of a real server: the fake model
answers a small knowledge base (tests/fixtures/gym_kb) with false sentences built from each
block's own (model/attacks.py); none may be shown as verified, while quotes and the
paraphrase knob's rewordings still are. Hypothesis draws the question asked and the
seed; the fake's ledger says which sentences it made false (issue 27).

Every knob is held to none shown since the claim checks landed (gate/claimcheck.py), the red
team's families too (model/redteam.py, gate/binding.py), whose faithful controls are shown."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.model.attacks import ATTACKS
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.ledger import ROUTES, Record, match, records, seen_false, shown_sentences
from stream_rag.model.llm import OpenAIChatModel
from stream_rag.model.redteam_knobs import RED_TEAM

from .helpers import running_server

KB = Path(__file__).parent / "fixtures" / "gym_kb"
# One question about each entry: the model answers it from the block's sentences, which the
# knobs then falsify (a question that restates a sentence is not answered with it).
QUESTIONS = (KB.parent / "gym_kb_questions.txt").read_text().splitlines()
# Few examples, the same ones every run (a strict xfail must fail every time), no shrinking
# (each example asks a real server three times).
GENERATED = settings(
    max_examples=12, derandomize=True, database=None, phases=[Phase.explicit, Phase.generate]
)


class Hostile:
    """The app on a real server, answering with the fake on another; knobs set per question."""

    def __init__(self, client: httpx.Client, fake: Starlette) -> None:
        self.client, self.fake = client, fake

    def ask(self, config: FakeConfig, question: str) -> list[Asked]:
        """What each route showed, matched to what the model wrote for it. `/v1/answer`'s second
        draft leaves out the sentences the first failed on, as the revision request asks."""
        self.fake.state.completions.config = replace(config, revise_on_retry=True)
        stats = self.fake.state.stats
        out = []
        for route in ROUTES:
            before = stats.requests
            shown = shown_sentences(self.client, route, question)
            entries = [
                {"sentences": [w.to_json() for w in written]}
                for k, _, written in stats.ledger
                if k > before
            ]
            written = records(entries)
            matched = [(text, match(text, written)[0]) for text in shown]
            out.append(Asked(route, matched, written))
        return out


@dataclass(frozen=True, slots=True)
class Asked:
    route: str
    shown: list[tuple[str, Record | None]]
    written: list[Record]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEmbedder) -> Iterator[Hostile]:
    fake = create_fake_llm()
    with running_server(fake) as llm_url:
        settings = Settings(data_dir=tmp_path_factory.mktemp("hostile") / "data")
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        with (
            running_server(create_app(settings, embedder=minilm, model=model)) as base_url,
            httpx.Client(base_url=base_url, timeout=120) as client,
        ):
            for path in sorted(KB.iterdir()):
                upload(client, path)
            yield Hostile(client, fake)


def upload(client: httpx.Client, path: Path) -> None:
    response = client.post("/v1/documents", files={"file": (path.name, path.read_bytes())})
    assert response.status_code == 201, response.text
    url = f"/v1/documents/{response.json()['document']['id']}"
    deadline = time.monotonic() + 120  # against a hang only
    while client.get(url).json()["versions"][-1]["status"] != "ready":
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.mark.parametrize("knob", [*ATTACKS, *RED_TEAM])
@GENERATED
@given(question=st.sampled_from(QUESTIONS), seed=st.integers(0, 2**16))
def test_no_false_sentence_is_shown(hostile: Hostile, knob: str, question: str, seed: int) -> None:
    config = FakeConfig(seed=seed, **{knob: 1.0})  # type: ignore[arg-type]
    shown_false = [
        (asked.route, text, written.variant)
        for asked in hostile.ask(config, question)
        for text, written in asked.shown
        if written is not None and seen_false(text, written)
    ]
    assert not shown_false


@GENERATED
@given(question=st.sampled_from(QUESTIONS), seed=st.integers(0, 2**16))
def test_quotes_are_shown_on_every_route(hostile: Hostile, question: str, seed: int) -> None:
    """Every sentence the model quotes is shown, on every route, and nothing it did not write."""
    for asked in hostile.ask(FakeConfig(seed=seed), question):
        assert all(written is not None for _, written in asked.shown), asked
        assert {w.text for _, w in asked.shown if w} == {w.text for w in asked.written}, asked


def test_the_model_answers_every_question(hostile: Hostile) -> None:
    """The generated tests are not empty: each question gets the model's answer (no refusal
    before generation) on every route."""
    for question in QUESTIONS:
        for asked in hostile.ask(FakeConfig(), question):
            assert asked.written, (asked.route, question)


def test_paraphrases_are_shown(hostile: Hostile) -> None:
    """The paraphrase knob rewords every sentence (synonyms, fronted phrases, the passive):
    at least 85% of them are shown on each route, as issue 27's acceptance says."""
    counts = {route: [0, 0] for route in ROUTES}
    seeds = random.Random(0)
    for question in QUESTIONS:
        config = FakeConfig(seed=seeds.randrange(2**16), paraphrase=1.0)
        for asked in hostile.ask(config, question):
            assert all(w is not None and not w.false for _, w in asked.shown), asked
            counts[asked.route][0] += len({w.text for _, w in asked.shown if w})
            counts[asked.route][1] += len(asked.written)
    shares = {route: shown / max(1, made) for route, (shown, made) in counts.items()}
    assert all(share >= 0.85 for share in shares.values()), shares


def test_the_red_teams_controls_are_shown(hostile: Hostile) -> None:
    """The families' faithful controls ("per month" as "a month", 14 as "fourteen", the
    condition moved to the front, a phrase in bold...): at least 85% of them shown on each
    route, and never a false sentence."""
    counts = {route: [0, 0] for route in ROUTES}
    seeds = random.Random(1)
    for knob in RED_TEAM:
        for question in QUESTIONS:
            config = FakeConfig(seed=seeds.randrange(2**16), **{knob: 1.0})  # type: ignore[arg-type]
            for asked in hostile.ask(config, question):
                shown = {w.text for _, w in asked.shown if w is not None}
                controls = [w for w in asked.written if w.variant.startswith("control")]
                counts[asked.route][0] += sum(w.text in shown for w in controls)
                counts[asked.route][1] += len(controls)
    shares = {route: shown / max(1, made) for route, (shown, made) in counts.items()}
    assert all(made >= 20 for _, made in counts.values()), counts
    assert all(share >= 0.85 for share in shares.values()), (shares, counts)
