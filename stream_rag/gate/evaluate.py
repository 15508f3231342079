"""Evaluate the citation gate on labelled sentences.

Input JSONL, one object a line: `{"sentence", "blocks": [texts], "cited": [1-based numbers],
"label": bool}` (label true: the blocks support the sentence). Prints the supported-pass rate,
the unsupported-reject rate, balanced accuracy, counts by reason and by deciding stage;
`--curve` adds balanced accuracy over a range of thresholds (lexical stage).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from ..config import Settings
from ..errors import InputError
from .citations import Citation
from .judge import Stages
from .lexical import GateContext, Verdict


@dataclass(frozen=True, slots=True)
class Example:
    sentence: str
    blocks: tuple[str, ...]
    cited: tuple[int, ...]
    label: bool


@dataclass(frozen=True, slots=True)
class Result:
    pass_rate: float  # share of supported sentences that pass
    reject_rate: float  # share of unsupported sentences that fail
    positives: int
    negatives: int
    reasons: dict[str, Counter[str]]  # "supported"/"unsupported" -> reason -> count
    stages: dict[str, Counter[str]] = field(default_factory=dict)  # stage -> outcome -> count

    @property
    def balanced_accuracy(self) -> float:
        return (self.pass_rate + self.reject_rate) / 2


def load(path: Path) -> list[Example]:
    """The labelled records of a JSONL file; an unreadable file or a bad line is an
    `InputError` naming it."""
    examples = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{path}:{number}: not JSON ({exc})") from None
        try:
            examples.append(
                Example(
                    str(obj["sentence"]),
                    tuple(str(b) for b in obj["blocks"]),
                    tuple(int(n) for n in obj["cited"]),
                    bool(obj["label"]),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}:{number}: bad record ({exc})") from None
    return examples


def judge(
    examples: Sequence[Example],
    threshold: float,
    max_unsupported: float | None,
    stages: Stages | None = None,
    mode: str = "strict",
) -> list[Verdict]:
    """Verdicts of the lexical stage, or of every stage in `stages` (block vectors computed
    in memory, as for chunks indexed before they were stored)."""
    contexts = [
        GateContext(ex.blocks, threshold=threshold, max_unsupported=max_unsupported, mode=mode)
        for ex in examples
    ]
    if stages is None:
        return [
            ctx.check(ex.sentence, [Citation(n) for n in ex.cited])
            for ctx, ex in zip(contexts, examples, strict=True)
        ]
    run_stages = stages

    async def run() -> list[Verdict]:
        return [
            await run_stages.judge(ctx).check(ex.sentence, [Citation(n) for n in ex.cited])
            for ctx, ex in zip(contexts, examples, strict=True)
        ]

    return anyio.run(run)


def score(examples: Sequence[Example], verdicts: Sequence[Verdict]) -> Result:
    reasons: dict[str, Counter[str]] = {"supported": Counter(), "unsupported": Counter()}
    stages: dict[str, Counter[str]] = {s: Counter() for s in ("lexical", "semantic", "remote")}
    for ex, verdict in zip(examples, verdicts, strict=True):
        label = "supported" if ex.label else "unsupported"
        reasons[label][verdict.reason] += 1
        stages[verdict.stage][f"{label} {'passed' if verdict.ok else 'dropped'}"] += 1
    positives = sum(reasons["supported"].values())
    negatives = sum(reasons["unsupported"].values())
    passed = reasons["supported"]["ok"]
    rejected = negatives - reasons["unsupported"]["ok"]
    return Result(
        passed / positives if positives else 0.0,
        rejected / negatives if negatives else 0.0,
        positives,
        negatives,
        reasons,
        stages,
    )


def verdict_lines(examples: Sequence[Example], verdicts: Sequence[Verdict]) -> list[str]:
    """One JSON line per example: its sentence, label and the verdict that decided it."""
    return [
        json.dumps(
            {
                "sentence": ex.sentence,
                "label": ex.label,
                "ok": v.ok,
                "reason": v.reason,
                "stage": v.stage,
                "grey": v.grey,
                "detail": v.detail,
                "scores": v.scores_json(),
            },
            ensure_ascii=False,
        )
        + "\n"
        for ex, v in zip(examples, verdicts, strict=True)
    ]


def report(result: Result, threshold: float, max_unsupported: float | None) -> str:
    lines = [
        f"threshold {threshold:.2f}, max_unsupported {max_unsupported}",
        f"supported pass rate     {result.pass_rate:.3f}  ({result.positives} supported)",
        f"unsupported reject rate {result.reject_rate:.3f}  ({result.negatives} unsupported)",
        f"balanced accuracy       {result.balanced_accuracy:.3f}",
        "reasons            supported  unsupported",
    ]
    names = sorted(set(result.reasons["supported"]) | set(result.reasons["unsupported"]))
    for name in names:
        lines.append(
            f"  {name:<17}{result.reasons['supported'][name]:>10}"
            f"{result.reasons['unsupported'][name]:>13}"
        )
    lines.append("decided by     sentences  supported passed  unsupported dropped")
    for stage, outcomes in result.stages.items():
        decided = sum(outcomes.values())
        sup = outcomes["supported passed"] + outcomes["supported dropped"]
        uns = outcomes["unsupported passed"] + outcomes["unsupported dropped"]
        lines.append(
            f"  {stage:<12}{decided:>11}{outcomes['supported passed']:>11} of {sup:<5}"
            f"{outcomes['unsupported dropped']:>12} of {uns}"
        )
    return "\n".join(lines)


def curve(examples: Sequence[Example], max_unsupported: float | None, mode: str = "strict") -> str:
    lines = ["threshold  pass    reject  balanced"]
    for step in range(30, 91, 5):
        threshold = step / 100
        result = score(examples, judge(examples, threshold, max_unsupported, mode=mode))
        lines.append(
            f"{threshold:9.2f}  {result.pass_rate:.3f}   {result.reject_rate:.3f}"
            f"   {result.balanced_accuracy:.3f}"
        )
    return "\n".join(lines)


def eval_stages(settings: Settings) -> tuple[Stages, str]:
    """The stages `--stages all` runs: the semantic one (local MiniLM) unless it is off or not
    installed, and the remote verifier if one is configured. Also a one-line status."""
    from ..embed.minilm import MiniLMEmbedder, ModelNotInstalledError
    from .semantic import SemanticStage
    from .verify import build_verifier

    semantic = None
    status = "stages: lexical"
    if settings.gate_semantic:
        try:
            semantic = SemanticStage(MiniLMEmbedder(), settings.gate_semantic_cutoff)
            cutoffs = ", ".join(f"{mode} {c:.2f}" for mode, c in semantic.cutoffs.items())
            status += f", semantic (cutoff {cutoffs})"
        except ModelNotInstalledError as exc:
            status += f" (semantic off: {exc})"
    verifier = build_verifier(settings)
    if verifier is not None:
        status += f", remote ({verifier.style} at {verifier.url})"
    return Stages(semantic, None, verifier), status
