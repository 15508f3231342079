"""`stream-rag eval answers`: ingest a knowledge base into a throwaway data directory, ask
every question of a JSONL file through the `/v1/answer` code path, and score the outcomes
against what each record expects: an answer citing its gold files, a refusal, a conflict, and
by content (phrases the answer must hold or must not, what its first sentence must say and
cite). "Right by every check" is an outcome passing all of them."""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

from ..config import Settings
from ..embed.backends import Embedder
from ..errors import InputError
from ..index.folders import ingest_paths, iter_files
from ..retrieve.metrics import percentile
from ..services import Services, open_services
from ..types import Turn
from .eval_files import EXPECTS, AnswerSet, Question, load_questions, load_sets
from .pipeline import Answerer, AnswerResult, Options

__all__ = [
    "EXPECTS",
    "AnswerSet",
    "Outcome",
    "Question",
    "evaluate_answers",
    "kb_services",
    "load_questions",
    "load_sets",
    "main",
    "report",
    "summary_row",
]


@dataclass(frozen=True, slots=True)
class Outcome:
    item: Question
    refusal: str | None
    cited: tuple[str, ...]  # file names of the cited blocks, in order
    sources: tuple[str, ...]  # file names of the retrieved blocks, in order
    answer: str
    latency_ms: float
    uncovered: tuple[str, ...] = ()  # the parts the answer says no source covers
    # The first sentence and the file names it cites.
    first: tuple[str, tuple[str, ...]] = ("", ())
    stale: str | None = None  # the file a conflict refusal names as the older side

    @property
    def gold_cited(self) -> bool:
        return bool(self.item.gold) and any(f in (self.item.gold or ()) for f in self.cited)

    @property
    def failed_checks(self) -> list[str]:
        """The content checks this outcome fails (none for a right one): `expect`, `gold`,
        `phrases`, `avoid`, `first` (its phrase), `first_cites` (a gold file), `stale` (a
        conflict's older side)."""
        item = self.item
        if item.expect != "answer" or self.refusal is not None:
            if not self.ok:
                return ["expect"]
            return ["stale"] if item.stale and self.stale != item.stale else []
        failed = []
        if item.gold and not self.gold_cited:
            failed.append("gold")
        answer = _plain(self.answer)
        if any(not any(_plain(p) in answer for p in alternatives) for alternatives in item.phrases):
            failed.append("phrases")
        if any(_plain(p) in answer for p in item.avoid):
            failed.append("avoid")
        text, cites = self.first
        if item.first and not any(_plain(p) in _plain(text) for p in item.first):
            failed.append("first")
        if item.gold and not set(cites) & set(item.gold):
            failed.append("first_cites")
        return failed

    @property
    def right(self) -> bool:
        """Right by every check the record states."""
        return not self.failed_checks

    @property
    def ok(self) -> bool:
        if self.item.expect == "answer":
            return self.refusal is None and (self.item.gold is None or self.gold_cited)
        if self.item.expect == "conflict":
            return self.refusal == "conflicting_sources"
        return self.refusal is not None


def _plain(text: str) -> str:
    """Casefolded, with runs of spaces as one and typographic quotes as straight ones."""
    text = text.replace("’", "'").replace("“", '"').replace("”", '"')
    return " ".join(text.casefold().split())


def evaluate_answers(
    kb: Path,
    questions: Sequence[Question],
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    use_history: bool = True,
) -> list[Outcome]:
    """Ingest `kb` into a temporary data directory and answer every question, one at a time."""
    with kb_services(kb, settings, embedder=embedder) as services:

        async def run() -> list[Outcome]:
            try:
                return [await _ask(services.answerer, item, use_history) for item in questions]
            finally:
                await services.aclose()

        return anyio.run(run)


@contextmanager
def kb_services(
    kb: Path, settings: Settings, *, embedder: Embedder | None = None
) -> Iterator[Services]:
    """Services over `kb` alone, ingested into a temporary data directory (embedded index),
    closed and removed on leaving."""
    with tempfile.TemporaryDirectory(prefix="stream-rag-answers-") as tmp:
        local = replace(settings, data_dir=Path(tmp), qdrant_url=None)
        services = open_services(local, embedder=embedder)
        try:
            report = ingest_paths(services.store, [kb], local, indexer=services.indexer, quiet=True)
            if report.failed:
                path, reason = report.failed[0]
                raise InputError(f"could not ingest {path}: {reason}")
            yield services
        finally:
            services.close()


async def _ask(answerer: Answerer, item: Question, use_history: bool) -> Outcome:
    started = time.perf_counter()
    history = tuple(Turn(q, a) for q, a in item.history) if use_history else ()
    result: AnswerResult = await answerer.answer(item.question, Options(history=history))
    latency = (time.perf_counter() - started) * 1000
    by_n = {b.n: b.filename for b in result.blocks}
    cited = tuple(dict.fromkeys(by_n[c.n] for s in result.sentences for c in s.citations))
    first = result.sentences[0] if result.sentences else None
    lead = ("", ()) if first is None else (first.text, tuple(by_n[c.n] for c in first.citations))
    return Outcome(
        item=item,
        refusal=None if result.refusal is None else result.refusal.reason,
        cited=cited,
        sources=tuple(b.filename for b in result.blocks),
        answer=result.text,
        latency_ms=latency,
        uncovered=tuple(u.ask for u in result.uncovered),
        first=lead,
        stale=_stale(result),
    )


def _stale(result: AnswerResult) -> str | None:
    """The file of the side a conflict refusal's first conflict names as the older one."""
    details = result.refusal.details if result.refusal is not None else []
    first = details[0] if details else {}
    side = first.get(str(first.get("stale"))) if first.get("stale") in ("a", "b") else None
    return str(side.get("filename")) if isinstance(side, dict) else None


def _rate(hits: int, total: int) -> str:
    return f"{hits / total:.3f} ({hits}/{total})" if total else "- (0/0)"


def report(outcomes: Sequence[Outcome], *, verbose: bool = False) -> str:
    """The summary lines, then (verbose) every outcome that missed its expectation."""
    answerable = [o for o in outcomes if o.item.expect == "answer"]
    answered = [o for o in answerable if o.refusal is None]
    with_gold = [o for o in answered if o.item.gold]
    goldish = [o for o in outcomes if o.item.gold]
    off_topic = [o for o in outcomes if o.item.expect == "refuse"]
    conflicts = [o for o in outcomes if o.item.expect == "conflict"]
    not_conflicts = [o for o in outcomes if o.item.expect != "conflict"]
    latencies = [o.latency_ms for o in outcomes]
    reasons = Counter(o.refusal for o in outcomes if o.refusal is not None)
    only_gold = [o for o in with_gold if o.cited and set(o.cited) <= set(o.item.gold or ())]
    # A question whose answer spans several files (one gold file each) is whole with them all.
    every_gold = [o for o in with_gold if set(o.item.gold or ()) <= set(o.cited)]
    at1 = sum(bool(o.sources) and o.sources[0] in (o.item.gold or ()) for o in goldish)
    at8 = sum(any(s in (o.item.gold or ()) for s in o.sources[:8]) for o in goldish)
    refused_off = sum(o.refusal is not None for o in off_topic)
    false_conflicts = sum(o.refusal == "conflicting_sources" for o in not_conflicts)
    true_conflicts = sum(o.refusal == "conflicting_sources" for o in conflicts)
    p50 = statistics.median(latencies) if latencies else 0.0
    p95 = percentile(latencies, 0.95) if latencies else 0.0
    lines = [
        f"questions            {len(outcomes)} ({len(answerable)} answerable, "
        f"{len(off_topic)} off-topic, {len(conflicts)} conflicts, "
        f"{sum(1 for o in outcomes if o.item.history)} follow-ups)",
        f"answered             {_rate(len(answered), len(answerable))}",
        f"gold cited           {_rate(sum(o.gold_cited for o in with_gold), len(with_gold))}",
        f"only gold cited      {_rate(len(only_gold), len(with_gold))}",
        f"every gold cited     {_rate(len(every_gold), len(with_gold))}",
        f"gold in sources @1   {_rate(at1, len(goldish))}",
        f"gold in sources @8   {_rate(at8, len(goldish))}",
        f"off-topic refused    {_rate(refused_off, len(off_topic))}",
        f"false conflicts      {_rate(false_conflicts, len(not_conflicts))}",
        f"true conflicts       {_rate(true_conflicts, len(conflicts))}",
        "refusals by reason   "
        + (", ".join(f"{r} {n}" for r, n in sorted(reasons.items())) or "none"),
        f"latency ms           p50 {p50:.1f}  p95 {p95:.1f}",
    ]
    # First, as the figure that counts: every check a record states.
    lines.insert(1, f"right (every check)  {_rate(sum(o.right for o in outcomes), len(outcomes))}")
    said = [o for o in answered if o.item.left_out is not None]
    if said or any(o.uncovered for o in answered):
        named = sum(bool(o.uncovered) for o in said if o.item.left_out)
        wrongly = sum(bool(o.uncovered) for o in answered if not o.item.left_out)
        lines.insert(
            -2,
            f"part left out named  {_rate(named, sum(bool(o.item.left_out) for o in said))}"
            f", named when none was {wrongly} of {len(answered)} answered",
        )
    if verbose:
        misses = [o for o in outcomes if not o.right]
        lines.append(f"\nmissed {len(misses)}:")
        for o in misses:
            got = f"refused: {o.refusal}" if o.refusal else f"cited {list(o.cited)}"
            lines.append(
                f"- [{o.item.expect}] {o.item.question!r} gold {list(o.item.gold or [])}: {got}; "
                f"failed {', '.join(o.failed_checks)}; sources {list(o.sources[:3])}"
            )
            if o.answer:
                lines.append(f"    answer: {o.answer[:300]}")
        for o in answered:
            if bool(o.uncovered) != bool(o.item.left_out):
                lines.append(f"- left out {list(o.uncovered)} in {o.item.question!r}")
    return "\n".join(lines)


def summary_row(name: str, held_out: bool, outcomes: Sequence[Outcome]) -> str:
    """One line of the per-set table: right by every check, answered, refused as expected."""
    answerable = [o for o in outcomes if o.item.expect == "answer"]
    refuse = [o for o in outcomes if o.item.expect != "answer"]
    right = sum(o.right for o in outcomes)
    answered = sum(o.refusal is None for o in answerable)
    return (
        f"{name:<24} {'held-out' if held_out else 'dev':<8} {right:>3}/{len(outcomes):<3} "
        f"{right / max(1, len(outcomes)):>6.3f}  answered {answered}/{len(answerable)}  "
        f"refusals right {sum(o.ok for o in refuse)}/{len(refuse)}"
    )


def missing_gold(kb: Path, questions: Sequence[Question]) -> list[str]:
    """The gold file names of `questions` that no file under `kb` has: a set scored without
    them would only score low (a fixture not written yet), so it is not scored at all."""
    present = {path.name for path in iter_files([kb])}
    named = {name for item in questions for name in item.gold or ()}
    return sorted(named - present)


def _check_kb(label: str, kb: Path, questions: Sequence[Question]) -> None:
    if not kb.is_dir():
        raise InputError(f"{label}: {kb} is not a folder")
    missing = missing_gold(kb, questions)
    if missing:
        raise InputError(
            f"{label}: {len(missing)} gold file(s) missing from {kb}: {', '.join(missing)} "
            "(the dev sets' DOCX and PDF files are written by `python -m loadtests.kb_fixtures`)"
        )


def main(settings: Settings, args: argparse.Namespace) -> int:
    if args.sets is not None:
        return _main_sets(settings, args)
    if args.kb is None or args.questions is None:
        raise InputError("give --kb and --questions, or --sets")
    questions = load_questions(args.questions)
    if not questions:
        raise InputError(f"no questions in {args.questions}")
    _check_kb(f"--kb {args.kb}", args.kb, questions)
    print(f"# {args.kb}: {len(questions)} questions from {args.questions}")
    print(report(evaluate_answers(args.kb, questions, settings), verbose=args.verbose))
    return 0


def _main_sets(settings: Settings, args: argparse.Namespace) -> int:
    sets = load_sets(args.sets)
    if args.only:
        sets = [s for s in sets if s.name in args.only]
    # Every set is checked before any is scored: a missing file is found in a second, not
    # after the sets before it ran for minutes.
    loaded = [(s, load_questions(s.questions)) for s in sets]
    for answer_set, questions in loaded:
        _check_kb(f"set {answer_set.name}", answer_set.kb, questions)
    rows: list[str] = []
    for answer_set, questions in loaded:
        outcomes = evaluate_answers(answer_set.kb, questions, settings)
        if args.verbose:
            print(f"# {answer_set.name}: {len(questions)} questions")
            print(report(outcomes, verbose=True), end="\n\n")
        rows.append(summary_row(answer_set.name, answer_set.held_out, outcomes))
    print(f"{'set':<24} {'kind':<8} right (every check)")
    print("\n".join(rows))
    return 0
