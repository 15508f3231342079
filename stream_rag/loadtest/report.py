"""The load test's report: percentile tables (markdown), one CSV row per answer, and a
latency-over-time plot (PNG, matplotlib from the `load` extra)."""

from __future__ import annotations

import csv
import os
import platform
import statistics
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..retrieve.metrics import percentile
from .users import Answer

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True, slots=True)
class Phase:
    """One target at one concurrency level: its answers and what the server spent."""

    target: str
    users: int
    round: int
    answers: list[Answer]
    wall_s: float
    cpu_s: float | None  # the server process's user+system CPU during the phase
    rss_mb: float | None
    t0: float  # wall-clock start (epoch seconds)
    loader_cpu_s: float | None = None  # the load generator's CPU (this process)
    model_cpu_s: float | None = None  # the fake model's CPU

    def ended(self, how: str) -> int:
        return sum(1 for a in self.answers if a.ended == how)

    def window(self) -> tuple[int, float]:
        """Answers ended in the phase's steady part, and its length in seconds: from the end
        of the `users`-th answer (the opening burst is over) to the start of the last request
        (after it users drop out one by one). The whole phase when that part is too short."""
        users, answers = self.users, self.answers
        if len(answers) > 2 * users:
            ends = sorted(a.started + a.total for a in answers)
            start, stop = ends[users - 1], max(a.started for a in answers)
            counted = sum(1 for end in ends if start < end <= stop)
            if stop > start and counted >= users:
                return counted, stop - start
        return len(answers), self.wall_s

    @property
    def rate(self) -> float:
        """Answers per second in the steady part (`window`)."""
        counted, seconds = self.window()
        return counted / seconds if seconds else 0.0

    @property
    def cpu_ms_per_answer(self) -> float | None:
        return self.per_answer(self.cpu_s)

    def per_answer(self, cpu_s: float | None) -> float | None:
        """`cpu_s` (a process's CPU seconds over the phase) in milliseconds per answer."""
        if cpu_s is None or not self.answers:
            return None
        return cpu_s * 1000 / len(self.answers)

    def summary(self) -> str:
        cpu = self.cpu_ms_per_answer
        return (
            f"{self.target:8} users={self.users:<4} round={self.round} "
            f"answers={len(self.answers):<5} {self.rate:7.1f}/s  cpu/answer: server "
            f"{_fmt(cpu)} ms, loader {_fmt(self.per_answer(self.loader_cpu_s))}, model "
            f"{_fmt(self.per_answer(self.model_cpu_s))}  ttfs p50={_ms(self.ttfs(), 50)} ms  "
            f"not ended={self.ended('none')}"
        )

    def ttfs(self) -> list[float]:
        return [a.ttfs for a in self.answers if a.ttfs is not None]

    def gaps(self) -> list[float]:
        return [g for a in self.answers for g in a.gaps]

    def totals(self) -> list[float]:
        return [a.total for a in self.answers]


def _ms(values: list[float], q: float) -> str:
    return "-" if not values else f"{percentile(values, q / 100) * 1000:.0f}"


def _fmt(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def write_report(phases: list[Phase], out: Path, *, command: str, plot: bool = True) -> Path:
    """Write report.md, answers.csv and (with `plot`) latency.png under `out`; returns
    report.md's path."""
    out.mkdir(parents=True, exist_ok=True)
    write_answers_csv(phases, out / "answers.csv")
    if plot:
        plot_latency(phases, out / "latency.png")
    lines = [
        "# stream-rag loadtest",
        "",
        f"- command: `{command}`",
        f"- finished: {datetime.now(UTC).isoformat(timespec='seconds')}",
        f"- machine: {platform.machine()}, {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end",
        "- targets: `raw` pass-through proxy (no retrieval, no gate), `ungated` RAG (same "
        "retrieval and model, no checks), `gated` (the service as shipped)"
        + (
            ", `control` (a second ungated server)"
            if any(p.target == "control" for p in phases)
            else ""
        ),
        "",
        "## Throughput and CPU",
        "",
        "answers/s counts the steady part of each phase (from the end of the `users`-th answer "
        "to the start of the last request); CPU per answer is over the whole phase: the server "
        "process, the load generator (this process) and the fake model.",
        "",
        "| target | users | round | answers | answers/s | server CPU ms/answer | RSS MB "
        "| loader CPU | model CPU | done | error | neither |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in phases:
        lines.append(
            f"| {p.target} | {p.users} | {p.round} | {len(p.answers)} | {p.rate:.2f} "
            f"| {_fmt(p.cpu_ms_per_answer)} | {_fmt(p.rss_mb, 0)} "
            f"| {_fmt(p.per_answer(p.loader_cpu_s))} | {_fmt(p.per_answer(p.model_cpu_s))} "
            f"| {p.ended('done')} | {p.ended('error')} | {p.ended('none')} |"
        )
    lines += ratio_lines(phases)
    lines += [
        "",
        "## Latency (ms)",
        "",
        "Time to first verified sentence (raw: first token), gap between sentences, total.",
        "",
        "| target | users | TTFS p50 | p90 | p99 | gap p50 | gap p99 | total p50 | total p99 "
        "| sentences/answer |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in phases:
        t, g, tot = p.ttfs(), p.gaps(), p.totals()
        per = sum(a.sentences for a in p.answers) / len(p.answers) if p.answers else 0.0
        lines.append(
            f"| {p.target} | {p.users} | {_ms(t, 50)} | {_ms(t, 90)} | {_ms(t, 99)} "
            f"| {_ms(g, 50)} | {_ms(g, 99)} | {_ms(tot, 50)} | {_ms(tot, 99)} | {per:.2f} |"
        )
    lines += ["", "## Drops, refusals, errors", ""]
    for p in phases:
        dropped: Counter[str] = Counter()
        for a in p.answers:
            dropped.update(a.dropped)
        refusals = Counter(a.refusal for a in p.answers if a.refusal)
        errors = Counter(a.error for a in p.answers if a.error)
        lines.append(
            f"- {p.target} @ {p.users} users: dropped {dict(dropped) or '{}'}, "
            f"refusals {dict(refusals) or '{}'}, errors {dict(errors) or '{}'}"
        )
    lines += ["", "![latency over time](latency.png)", ""]
    report = out / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    return report


def ratio_lines(phases: list[Phase]) -> list[str]:
    """gated/ungated and gated/raw per concurrency level: pooled over every round (answers in
    the steady parts over their seconds), and the median and range of the rounds' own ratios
    (each round runs the targets one after the other, close in time)."""
    by: dict[tuple[str, int], list[Phase]] = {}
    for p in phases:
        by.setdefault((p.target, p.users), []).append(p)

    def pooled(target: str, users: int) -> float | None:
        windows = [p.window() for p in by.get((target, users), [])]
        seconds = sum(s for _, s in windows)
        return sum(n for n, _ in windows) / seconds if seconds else None

    def cpu(target: str, users: int) -> float | None:
        found = by.get((target, users))
        if not found or any(p.cpu_s is None for p in found):
            return None
        return sum(p.cpu_s or 0.0 for p in found) * 1000 / sum(len(p.answers) for p in found)

    def ratio(target: str, base: str, users: int) -> str:
        a, b = pooled(target, users), pooled(base, users)
        if a is None or not b:
            return "n/a"
        rounds = {p.round: p.rate for p in by.get((base, users), []) if p.rate}
        each = sorted(
            p.rate / rounds[p.round] for p in by.get((target, users), []) if p.round in rounds
        )
        text = f"{a / b:.2f}x"
        if len(each) > 1:
            text += f" (median {statistics.median(each):.2f}x, {each[0]:.2f}-{each[-1]:.2f})"
        return text

    users_levels = sorted({p.users for p in phases})
    control = any(p.target == "control" for p in phases)
    targets = ("raw", "ungated", "gated", "control") if control else ("raw", "ungated", "gated")
    lines = [
        "",
        "## Ratios (same run)",
        "",
        "Pooled over the rounds; in brackets the median and range of the rounds' own ratios."
        + (
            " control/ungated compares two processes running the same code: how far apart "
            "the same work comes out in this run."
            if control
            else ""
        ),
        "",
        "| users | gated/ungated answers/s | gated/raw answers/s "
        + ("| control/ungated answers/s " if control else "")
        + f"| server CPU ms/answer {', '.join(targets)} |",
        "|---|---|---|---|" + ("---|" if control else ""),
    ]
    for users in users_levels:
        cpus = ", ".join(_fmt(cpu(t, users)) for t in targets)
        noise = f"| {ratio('control', 'ungated', users)} " if control else ""
        lines.append(
            f"| {users} | {ratio('gated', 'ungated', users)} | {ratio('gated', 'raw', users)} "
            f"{noise}| {cpus} |"
        )
    return lines


def write_answers_csv(phases: list[Phase], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "target",
                "users",
                "round",
                "started_epoch_s",
                "ttfs_ms",
                "total_ms",
                "sentences",
                "dropped",
                "refusal",
                "error",
                "ended",
                "request_id",
            ]
        )
        for p in phases:
            for a in p.answers:
                writer.writerow(
                    [
                        p.target,
                        p.users,
                        p.round,
                        f"{p.t0 + a.started:.3f}",
                        "" if a.ttfs is None else f"{a.ttfs * 1000:.1f}",
                        f"{a.total * 1000:.1f}",
                        a.sentences,
                        sum(a.dropped.values()),
                        a.refusal or "",
                        a.error or "",
                        a.ended,
                        a.request_id or "",
                    ]
                )


# One colour per target, the same in every report (matplotlib's cycle repeated after ten of
# 36 phases); the baselines muted, the service as shipped the strongest.
TARGET_COLOURS = {
    "raw": "#555555",
    "ungated": "#1f77b4",
    "control": "#2ca02c",
    "gated": "#d62728",
}
_MORE_COLOURS = ("#9467bd", "#ff7f0e", "#17becf", "#8c564b")


def target_colours(phases: list[Phase]) -> dict[str, str]:
    """Each target's colour: its own if known, else distinct ones in order of appearance."""
    targets = list(dict.fromkeys(p.target for p in phases))
    spare = iter(c for c in _MORE_COLOURS if c not in TARGET_COLOURS.values())
    return {t: TARGET_COLOURS.get(t) or next(spare, "#000000") for t in targets}


def latency_figure(phases: list[Phase]) -> Figure:
    """Time to first verified sentence of each answer against when it was asked within its
    phase: one panel per concurrency level, one colour per target (its rounds together, its
    median dashed), the legend below the panels (one entry per target, not per phase)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    levels = sorted({p.users for p in phases}) or [0]
    colours = target_colours(phases)
    fig, axes = plt.subplots(
        1, len(levels), figsize=(4.5 * len(levels) + 1, 4.8), sharey=True, squeeze=False
    )
    medians: dict[str, list[float]] = {t: [] for t in colours}
    for ax, users in zip(axes[0], levels, strict=True):
        for target, colour in colours.items():
            ys_all: list[float] = []
            for p in phases:
                if p.users != users or p.target != target:
                    continue
                points = [(a.started, a.ttfs * 1000) for a in p.answers if a.ttfs]
                if points:
                    xs, ys = zip(*points, strict=True)
                    ax.scatter(xs, ys, s=5, alpha=0.35, color=colour, linewidths=0)
                    ys_all += ys
            if ys_all:
                median = statistics.median(ys_all)
                medians[target].append(median)
                ax.axhline(median, color=colour, linestyle="--", linewidth=1.5)
        ax.set_title(f"{users} users" if users else "no answers")
        ax.set_xlabel("seconds into the phase")
        ax.set_xlim(left=0)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("time to first verified sentence (ms)")
    rounds = {t: len({p.round for p in phases if p.target == t}) for t in colours}
    shown = [t for t in colours if medians[t]]  # else no answer had a sentence
    if shown:
        handles = [
            Line2D([], [], color=colours[t], marker="o", linestyle="--", markersize=5)
            for t in shown
        ]
        labels = [
            f"{t}, {rounds[t]} round{'s' if rounds[t] != 1 else ''}: median "
            + " / ".join(f"{m:.0f}" for m in medians[t])
            + " ms"
            for t in shown
        ]
        fig.legend(
            handles,
            labels,
            loc="lower center",
            ncol=min(len(shown), 2),
            frameon=False,
            fontsize="small",
        )
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def plot_latency(phases: list[Phase], path: Path) -> None:
    """`latency_figure` as a PNG."""
    import matplotlib.pyplot as plt

    fig = latency_figure(phases)
    fig.savefig(path, dpi=100)
    plt.close(fig)
