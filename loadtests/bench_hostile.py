"""How many false sentences a hostile model gets shown as verified, per knob and per route.

    python -m loadtests.bench_hostile [--kb DIR --questions FILE] [--knobs negate,markup]

Starts the scripted model (`stream-rag fake-llm`'s app, in this process) and `stream-rag
serve` in a child process on its own data directory, with the sample knowledge base or the
documents of `--kb`. For a control run (every rate 0), paraphrase at 1.0, and each hostile
knob at 1.0 (model/attacks.py), asks every question on `/v1/chat` (streamed SSE),
`/v1/answer` and streaming `/v1/chat/completions`. The model's ledger (`GET /fake/ledger`)
says which sentences it wrote and which are false, so nothing is guessed: each sentence the
client received is matched to the sentence the model wrote, and counted false if that one was
false as the reader sees it (a bidi override still in the text is seen; once the server took
it out, the cleaned reading counts). Prints per knob and route: false sentences written,
false sentences shown, true sentences shown of those written; then per knob and variant
(a red-team family's `control_*` variants are true restatements: shown/written is kept).
`--json FILE` keeps every false sentence shown, for the gate lane to read; `--lost FILE` every
true sentence (a quote, a paraphrase, a control) the client did not receive.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from loadtests.server_proc import Server
from stream_rag.model.attacks import ATTACKS
from stream_rag.model.fake import FakeConfig, create_fake_llm
from stream_rag.model.ledger import ROUTES, Record, match, records, seen_false, shown_sentences
from stream_rag.model.redteam_knobs import RED_TEAM
from tests.helpers import running_server

SAMPLE_QUESTIONS = Path(__file__).parent / "answers" / "sample_questions.jsonl"
RUNS = ("control", "paraphrase", *ATTACKS, *RED_TEAM)


@dataclass
class Tally:
    false_written: int = 0
    false_shown: int = 0
    true_written: int = 0
    true_shown: int = 0
    unmatched: int = 0
    partial: int = 0  # false sentences shown in part (a clause of what was written)


@dataclass
class Results:
    tallies: dict[tuple[str, str], Tally] = field(default_factory=lambda: defaultdict(Tally))
    variants: dict[tuple[str, str], Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter)
    )
    shown: list[dict[str, Any]] = field(default_factory=list)
    lost: list[dict[str, Any]] = field(default_factory=list)  # true sentences not shown


# -- the runs ---------------------------------------------------------------------------------


def ledger(fake: httpx.Client, after: int) -> tuple[int, list[Record]]:
    body = fake.get("/fake/ledger", params={"after": after}).json()
    return body["requests"], records(body["entries"])


def run(
    client: httpx.Client, fake: httpx.Client, knob: str, questions: list[str], results: Results
) -> None:
    after, _ = ledger(fake, 1 << 62)
    for question in questions:
        for route in ROUTES:
            received = shown_sentences(client, route, question)
            after, written = ledger(fake, after)
            tally = results.tallies[knob, route]
            shown_false: set[str] = set()
            shown_true: set[str] = set()
            for text in received:
                found, covered = match(text, written)
                if found is None:
                    tally.unmatched += 1
                elif seen_false(text, found):
                    if found.text not in shown_false:
                        tally.partial += covered < 0.9
                        results.variants[knob, route][f"{found.variant}:shown"] += 1
                        entry = {"knob": knob, "route": route, "variant": found.variant}
                        entry |= {"question": question, "shown": text, "written": found.text}
                        results.shown.append(entry)
                    shown_false.add(found.text)
                elif not found.false:
                    if found.text not in shown_true and found.variant:
                        results.variants[knob, route][f"{found.variant}:shown"] += 1
                    shown_true.add(found.text)
            for record in written:
                if record.false:
                    tally.false_written += 1
                    results.variants[knob, route][f"{record.variant}:written"] += 1
                else:
                    tally.true_written += 1
                    if record.variant:  # a red-team family's control
                        results.variants[knob, route][f"{record.variant}:written"] += 1
                    if record.text not in shown_true:
                        entry = {"knob": knob, "route": route, "variant": record.variant}
                        results.lost.append(entry | {"question": question, "written": record.text})
            tally.false_shown += len(shown_false)
            tally.true_shown += len(shown_true)


def report(results: Results, runs: list[str]) -> None:
    print(
        f"{'knob':<14} {'route':<12} {'false written':>13} {'false shown':>11} "
        f"{'true shown/written':>18} {'unmatched':>9} {'partial':>7}"
    )
    for knob in runs:
        for route in ROUTES:
            t = results.tallies[knob, route]
            true = f"{t.true_shown}/{t.true_written}"
            if t.true_written:
                true += f" ({t.true_shown / t.true_written:.2f})"
            print(
                f"{knob:<14} {route:<12} {t.false_written:>13} {t.false_shown:>11} "
                f"{true:>18} {t.unmatched:>9} {t.partial:>7}"
            )
    totals = {r: [0, 0] for r in ROUTES}
    for knob in runs:
        for route in ROUTES:
            t = results.tallies[knob, route]
            totals[route][0] += t.false_shown
            totals[route][1] += t.false_written
    print("all knobs: " + ", ".join(f"{r} {s}/{w} false shown" for r, (s, w) in totals.items()))
    print(
        f"\n{'knob':<14} {'variant':<14} " + " ".join(f"{r + ' shown/written':>22}" for r in ROUTES)
    )
    for knob in runs:
        names = sorted({k.split(":")[0] for r in ROUTES for k in results.variants[knob, r]})
        for name in names:
            cells = [
                f"{results.variants[knob, r][name + ':shown']}/"
                f"{results.variants[knob, r][name + ':written']}"
                for r in ROUTES
            ]
            print(f"{knob:<14} {name or '-':<14} " + " ".join(f"{c:>22}" for c in cells))


# -- setup --------------------------------------------------------------------------------------


def read_questions(path: Path) -> list[str]:
    """One question a line, or JSON lines with a "question" (rows expecting a refusal are
    skipped: the model is asked to answer)."""
    out = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.lstrip().startswith("{"):
            row = json.loads(line)
            if row.get("expect", "answer") == "answer" and not row.get("history"):
                out.append(row["question"])
        else:
            out.append(line.strip())
    return out


def wait_ready(url: str, timeout_s: float = 300.0) -> None:
    """Until every document is indexed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        documents = httpx.get(f"{url}/v1/documents", timeout=10).json()["documents"]
        if documents and all(d["versions"][-1]["status"] == "ready" for d in documents):
            return
        time.sleep(0.5)
    raise RuntimeError(f"{url}: documents not indexed in {timeout_s} s")


def config_for(knob: str, seed: int) -> FakeConfig:
    """The fake for a run. `/v1/answer`'s second draft leaves out what the first failed on, as
    asked: a draft repeated word for word would refuse every true sentence beside a false one."""
    if knob == "control":
        return FakeConfig(seed=seed, revise_on_retry=True)
    return FakeConfig(seed=seed, revise_on_retry=True, **{knob: 1.0})  # type: ignore[arg-type]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, help="a folder of documents (default: the sample)")
    parser.add_argument("--questions", type=Path, help="questions, one a line or JSON lines")
    parser.add_argument("--knobs", help=f"comma-separated, of: {', '.join(RUNS)} (default all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, help="ask only the first N questions")
    parser.add_argument("--json", type=Path, help="write every false sentence shown here")
    parser.add_argument("--lost", type=Path, help="write every true sentence not shown here")
    args = parser.parse_args()
    if args.kb is not None and args.questions is None:
        parser.error("--kb needs --questions")
    questions = read_questions(args.questions or SAMPLE_QUESTIONS)[: args.limit]
    runs = args.knobs.split(",") if args.knobs else list(RUNS)
    if unknown := set(runs) - set(RUNS):
        parser.error(f"unknown knobs: {', '.join(sorted(unknown))}")
    app = create_fake_llm(FakeConfig(seed=args.seed))
    results = Results()
    with running_server(app) as fake_url, tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        env = {"STREAM_RAG_LLM_BASE_URL": f"{fake_url}/v1", "STREAM_RAG_LLM_MODEL": "fake"}
        env |= {"STREAM_RAG_LLM_API_KEY": "unused"} if os.environ.get("OPENAI_API_KEY") else {}
        server = Server(Path(tmp) / "data", env)
        if args.kb is not None:
            ingest(server, args.kb)
        started = time.monotonic()
        server.start(*([] if args.kb else ["--sample"]))
        try:
            wait_ready(server.url)
            print(
                f"server ready in {time.monotonic() - started:.0f} s; {len(questions)} "
                f"questions x {len(ROUTES)} routes x {len(runs)} runs",
                file=sys.stderr,
            )
            with (
                httpx.Client(base_url=server.url, timeout=120) as client,
                httpx.Client(base_url=fake_url, timeout=30) as fake,
            ):
                for knob in runs:
                    app.state.completions.config = config_for(knob, args.seed)
                    began = time.monotonic()
                    run(client, fake, knob, questions, results)
                    print(f"{knob}: {time.monotonic() - began:.0f} s", file=sys.stderr)
        finally:
            server.stop()
    report(results, runs)
    if args.json:
        args.json.write_text(
            "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in results.shown)
        )
    if args.lost:
        args.lost.write_text(
            "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in results.lost)
        )
    return 0


def ingest(server: Server, kb: Path) -> None:
    import subprocess

    command = [sys.executable, "-m", "stream_rag.cli", "ingest", str(kb)]
    subprocess.run(command, env=server.env, check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    raise SystemExit(main())
