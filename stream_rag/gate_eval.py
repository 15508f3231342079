"""Evaluate the citation gate on labelled sentences.

Input JSONL, one object a line: `{"sentence", "blocks": [texts], "cited": [1-based numbers],
"label": bool}` (label true: the blocks support the sentence). Prints the supported-pass rate,
the unsupported-reject rate, balanced accuracy and counts by reason; `--curve` adds balanced
accuracy over a range of thresholds.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .citations import Citation
from .errors import InputError
from .gate import GateContext, Verdict


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

    @property
    def balanced_accuracy(self) -> float:
        return (self.pass_rate + self.reject_rate) / 2


def load(path: Path) -> list[Example]:
    examples = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            obj = json.loads(line)
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
    examples: Sequence[Example], threshold: float, max_unsupported: float | None
) -> list[Verdict]:
    return [
        GateContext(ex.blocks, threshold=threshold, max_unsupported=max_unsupported).check(
            ex.sentence, [Citation(n) for n in ex.cited]
        )
        for ex in examples
    ]


def score(examples: Sequence[Example], verdicts: Sequence[Verdict]) -> Result:
    reasons: dict[str, Counter[str]] = {"supported": Counter(), "unsupported": Counter()}
    for ex, verdict in zip(examples, verdicts, strict=True):
        reasons["supported" if ex.label else "unsupported"][verdict.reason] += 1
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
    )


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
    return "\n".join(lines)


def curve(examples: Sequence[Example], max_unsupported: float | None) -> str:
    lines = ["threshold  pass    reject  balanced"]
    for step in range(30, 91, 5):
        threshold = step / 100
        result = score(examples, judge(examples, threshold, max_unsupported))
        lines.append(
            f"{threshold:9.2f}  {result.pass_rate:.3f}   {result.reject_rate:.3f}"
            f"   {result.balanced_accuracy:.3f}"
        )
    return "\n".join(lines)
