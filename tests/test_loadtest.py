"""The load harness: its generator against real servers (gated, ungated, raw proxy) and its
report. (`stream-rag loadtest` itself runs minutes of load: see loadtests/ and the README.)"""

from __future__ import annotations

import csv
from pathlib import Path

import anyio

from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.loadtest.raw_proxy import create_raw_proxy, fixed_blocks
from stream_rag.loadtest.report import Phase, write_report
from stream_rag.loadtest.users import Answer, Endpoint, run_load
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.llm import OpenAIChatModel

from .helpers import running_server
from .test_chat_http import upload

SAMPLE = Path(__file__).resolve().parent.parent / "stream_rag" / "sample_kb"


def load(base_url: str, endpoint: Endpoint, requests: int = 4) -> list[Answer]:
    answers, wall = anyio.run(
        lambda: run_load(base_url, endpoint=endpoint, users=2, requests=requests, duration_s=600)
    )
    assert wall > 0
    return answers


def gated_app(tmp_path: Path, minilm: MiniLMEmbedder, llm_url: str, **settings: object) -> object:
    model = OpenAIChatModel(f"{llm_url}/v1", "fake")
    config = Settings(data_dir=tmp_path / "data", **settings)  # type: ignore[arg-type]
    return create_app(config, embedder=minilm, model=model)


def test_users_read_every_answer_to_done_over_both_endpoints(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    with running_server(create_fake_llm(FakeConfig(unissued=0.3, seed=1))) as llm_url:
        app = gated_app(tmp_path, minilm, llm_url)
        with running_server(app) as base_url:  # type: ignore[arg-type]
            for path in sorted(SAMPLE.iterdir()):
                upload(base_url, path.name, path.read_bytes())
            chat = load(base_url, "chat")
            openai = load(base_url, "openai")
    for answers in (chat, openai):
        assert len(answers) == 4
        assert all(a.ended == "done" and a.error is None for a in answers)
        assert all(a.refusal or (a.sentences >= 1 and a.ttfs is not None) for a in answers)
        assert all(len(a.gaps) == max(0, a.sentences - 1) for a in answers)
    assert all(a.request_id and a.request_id.startswith("req_") for a in chat)
    # The same questions over both endpoints: the same verified sentences.
    assert sorted(a.sentences for a in chat) == sorted(a.sentences for a in openai)


def test_ungated_baseline_sends_what_the_gate_would_drop(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    # Every sentence cites a block that was never issued: the gate drops them all.
    with running_server(create_fake_llm(FakeConfig(unissued=1.0))) as llm_url:
        results: dict[bool, list[Answer]] = {}
        for ungated in (False, True):
            app = gated_app(tmp_path / str(ungated), minilm, llm_url, ungated_baseline=ungated)
            with running_server(app) as base_url:  # type: ignore[arg-type]
                upload(base_url, "pricing.md", (SAMPLE / "pricing.md").read_bytes())
                results[ungated] = load(base_url, "chat", requests=2)
    gated, ungated_answers = results[False], results[True]
    assert all(a.sentences == 0 and a.dropped["unknown_citation"] >= 1 for a in gated)
    assert all(a.refusal == "no_supported_sentences" for a in gated)
    assert all(a.sentences >= 1 and not a.dropped and a.refusal is None for a in ungated_answers)


def test_raw_proxy_relays_the_model_and_the_report_has_every_phase(tmp_path: Path) -> None:
    blocks = fixed_blocks(SAMPLE)  # six files of one chunk each
    assert [b.n for b in blocks] == list(range(1, 7))
    assert [b.filename for b in blocks] == sorted(p.name for p in SAMPLE.iterdir())
    with running_server(create_fake_llm()) as llm_url:
        proxy = create_raw_proxy(f"{llm_url}/v1", "fake", blocks)
        with running_server(proxy) as base_url:
            answers = load(base_url, "raw")
    assert all(a.ended == "done" and a.sentences > 1 for a in answers)  # one per token
    phases = [
        Phase("raw", 2, 0, answers, 2.0, 0.05, 50.0, 1000.0),
        Phase("gated", 2, 0, answers[:2], 4.0, None, None, 1002.0),
    ]
    report = write_report(phases, tmp_path / "out", command="test", plot=False)
    text = report.read_text(encoding="utf-8")
    assert "| raw | 2 | 0 | 4 | 2.00 | 12.5 | 50 | 4 | 0 | 0 |" in text
    assert "| 2 | n/a | 0.25x | 12.5, n/a, n/a |" in text  # gated 0.5/s against raw 2/s
    with (tmp_path / "out" / "answers.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 6
    assert {r["ended"] for r in rows} == {"done"}
