"""What the gate says of a sentence: a `Verdict`, with its `Reason` and the `Stage` that decided.
A failed check is data, not an error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Reason", "Stage", "Verdict"]

Reason = Literal[
    "ok",
    "uncited",
    "unknown_citation",
    "id_mismatch",
    "low_overlap",
    "number_mismatch",
    "empty",
    "hidden_text",
    "claim_mismatch",
]
Stage = Literal["lexical", "semantic", "remote"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a sentence may be sent; `score` is the substance score (0 when not computed).

    `grey`: the lexical stage failed it for overlap alone (citations, numbers and polarity
    check out), so a later stage may judge it; `stage` says which stage decided."""

    ok: bool
    reason: Reason
    cited: tuple[int, ...]
    score: float
    detail: str
    grey: bool = False
    stage: Stage = "lexical"
    scores: dict[str, float] = field(default_factory=dict)

    def scores_json(self) -> dict[str, float]:
        return {"lexical": round(self.score, 4), **self.scores}
