"""The load harness: its generator against real servers (gated, ungated, raw proxy) and its
report. (`stream-rag loadtest` itself runs minutes of load: see docs/guides/load-testing.md.)"""

from __future__ import annotations

import csv
import re
import subprocess
from collections import Counter
from pathlib import Path

import anyio
import pytest

from stream_rag.access.keys import KeyStore
from stream_rag.cli.commands import build_parser
from stream_rag.config import Settings
from stream_rag.embed.minilm import MiniLMEmbedder
from stream_rag.http.app import create_app
from stream_rag.loadtest.command import LoadTestError, load_phases, round_order
from stream_rag.loadtest.raw_proxy import create_raw_proxy, fixed_blocks
from stream_rag.loadtest.report import Phase, ratio_lines, write_report
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
                # A document for each of the two questions asked, so the model answers both.
                for name in ("pricing.md", "refund-policy.md"):
                    upload(base_url, name, (SAMPLE / name).read_bytes())
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
    # Four answers from two users leave no steady part: answers/s is over the whole phase.
    phases = [
        Phase("raw", 2, 0, answers, 2.0, 0.05, 50.0, 1000.0, 0.01, 0.02),
        Phase("gated", 2, 0, answers[:2], 4.0, None, None, 1002.0),
    ]
    report = write_report(phases, tmp_path / "out", command="test", plot=False)
    text = report.read_text(encoding="utf-8")
    assert "| raw | 2 | 0 | 4 | 2.00 | 12.5 | 50 | 2.5 | 5.0 | 4 | 0 | 0 |" in text
    assert "| 2 | n/a | 0.25x | 12.5, n/a, n/a |" in text  # gated 0.5/s against raw 2/s
    with (tmp_path / "out" / "answers.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 6
    assert {r["ended"] for r in rows} == {"done"}


def answered(started: float, total: float) -> Answer:
    return Answer("q", started, ended="done", total=total)


def test_answers_per_second_count_the_steady_part_and_ratios_every_round() -> None:
    # Two users, answers of 1 s back to back from t=0 to t=10, except that the first two
    # came late (an opening burst) and the run ended with one user idle for 5 s.
    steady = [answered(float(t), 1.0) for t in range(1, 10) for _ in range(2)]
    answers = [answered(0.0, 1.0), answered(0.0, 1.0), *steady]
    phase = Phase("gated", 2, 0, answers, 15.0, None, None, 0.0)
    # From the 2nd answer's end (t=1) to the last request's start (t=9): 16 answers in 8 s.
    assert phase.window() == (16, 8.0)
    assert phase.rate == 2.0
    half = Phase("ungated", 2, 0, answers[:3], 1.0, None, None, 0.0)
    assert half.window() == (3, 1.0)  # too few answers for a steady part: the whole phase

    def at(target: str, round_: int, rate: float) -> Phase:
        # `rate` answers per second over a 10 s steady part.
        n = int(rate * 10)
        answers = [answered(10 * i / n, 0.0) for i in range(n + 1)]
        return Phase(target, 1, round_, answers, 11.0, None, None, 0.0)

    phases = [at("ungated", 0, 10), at("gated", 0, 9), at("ungated", 1, 10), at("gated", 1, 10)]
    phases += [at("ungated", 2, 20), at("gated", 2, 19)]
    text = "\n".join(ratio_lines(phases))
    # Pooled: 38 answers in 30 s against 40; rounds: 0.9, 1.0, 0.95.
    assert "| 1 | 0.95x (median 0.95x, 0.90-1.00) | n/a |" in text


def test_a_control_server_gets_its_own_ratio_against_ungated() -> None:
    def at(target: str, round_: int, rate: float, cpu_ms: float) -> Phase:
        n = int(rate * 10)
        answers = [answered(10 * i / n, 0.0) for i in range(n + 1)]
        return Phase(target, 1, round_, answers, 11.0, cpu_ms * (n + 1) / 1000, None, 0.0)

    phases = [at("ungated", 0, 10, 10.0), at("gated", 0, 9, 10.0), at("control", 0, 8, 20.0)]
    text = "\n".join(ratio_lines(phases))
    assert "| control/ungated answers/s |" in text
    assert "| 1 | 0.90x | n/a | 0.80x | n/a, 10.0, 10.0, 20.0 |" in text
    plain = "\n".join(ratio_lines([p for p in phases if p.target != "control"]))
    assert "control" not in plain


def test_rounds_run_every_order_so_no_target_always_follows_the_same_one() -> None:
    names = ["raw", "ungated", "gated"]
    orders = [tuple(round_order(names, r)) for r in range(6)]
    assert len(set(orders)) == 6  # every ordering once
    follows = Counter((o[i], o[i + 1]) for o in orders for i in range(2))
    assert set(follows.values()) == {2}
    assert len(follows) == 6
    positions = Counter((name, o.index(name)) for o in orders for name in o)
    assert set(positions.values()) == {2}
    assert len(positions) == 9


def test_loadtest_url_sends_the_key_a_deployment_needs(
    tmp_path: Path, minilm: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A deployment on a network has keys; `loadtest --url` sends STREAM_RAG_API_KEY as
    # `stream-rag ask --url` does (without it every answer was a 401). The load itself, not
    # the report: the report needs the `load` extra, which the test install does not have.
    settings = Settings(data_dir=tmp_path / "data")
    _, key = KeyStore(settings.data_dir).create(name="load", scopes=["chat"])
    with running_server(create_fake_llm(FakeConfig(seed=3))) as llm_url:
        model = OpenAIChatModel(f"{llm_url}/v1", "fake")
        with running_server(create_app(settings, embedder=minilm, model=model)) as base_url:
            argv = ["loadtest", "--url", base_url, "--users", "1", "--requests", "2"]
            args = build_parser().parse_args([*argv, "--rounds", "1"])
            # Without the key the run stops before any load, saying where the key goes (it
            # used to load, report every answer as http_401 and exit 0).
            monkeypatch.delenv("STREAM_RAG_API_KEY", raising=False)
            with pytest.raises(LoadTestError, match="set STREAM_RAG_API_KEY"):
                load_phases(args)
            monkeypatch.setenv("STREAM_RAG_API_KEY", key)
            phases = load_phases(args)
    answers = [a for phase in phases for a in phase.answers]
    assert len(answers) >= 2
    assert {a.ended for a in answers} == {"done"}, answers
    assert not [a.error for a in answers if a.error], answers


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tokens-per-second", "-5"], "--tokens-per-second"),
        (["--paraphrase", "1.5"], "--paraphrase"),
        (["--paraphrase", "-0.1"], "--paraphrase"),
    ],
)
def test_a_negative_pace_or_a_rate_outside_0_1_is_refused_before_anything_starts(
    flags: list[str], message: str
) -> None:
    # -5 tokens a second ran unpaced, as 0 does; a rate of 1.5 reworded every sentence.
    args = build_parser().parse_args(["loadtest", *flags])
    with pytest.raises(LoadTestError, match=message):
        load_phases(args)


@pytest.mark.parametrize(
    "flags",
    [["--tokens-per-second", "-5"], ["--paraphrase", "1.5"], ["--stall-s", "-1"]],
)
def test_fake_llm_refuses_a_negative_pace_or_a_rate_outside_0_1(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["fake-llm", *flags])
    assert exited.value.code == 2
    assert flags[0] in capsys.readouterr().err


# -- where the outputs go, and the latency picture -------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
# A documented command's output: `--csv PATH`, `--out PATH`, `plot_locust HISTORY PNG`.
OUTPUTS = re.compile(r"(?:--csv|--out)[ =]([^\s`]+)|plot_locust \S+ ([^\s`]+)")


def ignored_by_git(path: str) -> bool:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "-q", "--no-index", path], check=False
    )
    return done.returncode == 0


def test_load_test_outputs_never_overwrite_tracked_files() -> None:
    # The README's Locust command wrote its CSVs and plot over the tracked docs/loadtest/.
    sources = [ROOT / "README.md", *(ROOT / "loadtests").glob("*.py")]
    sources += [p for p in (ROOT / "docs").rglob("*.md") if "decisions" not in p.parts]
    sources += (ROOT / "stream_rag" / "loadtest").glob("*.py")
    found = []
    for source in sources:
        for match in OUTPUTS.finditer(source.read_text(encoding="utf-8")):
            path = match.group(1) or match.group(2)
            if path.rstrip("]").isupper():  # a usage line's placeholder (`--out OUT`)
                continue
            found.append((source.relative_to(ROOT), path))
    assert len(found) >= 4, found
    for source, path in found:
        assert path.startswith("report/"), (source, path)
        assert ignored_by_git(path), (source, path)
    default = build_parser().parse_args(["loadtest"]).out
    assert ignored_by_git(f"{default}/latency.png"), default


def test_the_latency_picture_has_one_legend_entry_per_target_outside_the_plots() -> None:
    pytest.importorskip("matplotlib")  # the `load` extra
    from matplotlib.lines import Line2D

    from stream_rag.loadtest.report import latency_figure

    # The default run: 3 targets x 2 levels x 6 rounds gave 36 entries over the points.
    phases = [
        Phase(
            target,
            users,
            n,
            [Answer("q", i / 10, ttfs=0.05 + 0.01 * (i % 7)) for i in range(30)],
            wall_s=3.0,
            cpu_s=None,
            rss_mb=None,
            t0=1000.0 + 10 * n,
        )
        for users in (10, 50)
        for n in range(6)
        for target in ("raw", "ungated", "gated")
    ]
    fig = latency_figure(phases)
    fig.canvas.draw()
    (legend,) = fig.legends
    assert [t.get_text().split(",")[0] for t in legend.get_texts()] == ["raw", "ungated", "gated"]
    handles = legend.legend_handles
    assert all(isinstance(h, Line2D) for h in handles)
    colours = [h.get_color() for h in handles if isinstance(h, Line2D)]
    assert len(set(colours)) == 3
    box = legend.get_window_extent()
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent()), "the legend covers a plot"
        left, right = ax.get_xlim()
        assert left == 0
        assert right < 4  # each phase from its own start: no stretch of other phases' time
