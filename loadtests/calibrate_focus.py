"""The `not_answered` check's focus rule (`answerable.focus_alike`) swept over thresholds: for
each question of the answer sets that passes the checks before it (and that the other
`not_answered` rules answer), the nouns it asks about that no retrieved block has, with their
best cosine to the blocks' words; per set and threshold, the must-refuse questions it refuses
and the answerable ones it refuses falsely.

    python -m loadtests.calibrate_focus [--sets loadtests/answers/sets.json] [--only NAME ...]

Held-out sets are skipped unless named with --only. Folds grouped by knowledge base (--folds,
default 3): the threshold that gains most on the other folds (must-refuse refused less false
refusals; the lowest on a tie) is scored on the fold left out.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path

import anyio

from stream_rag.answer.answerable import FOCUS_ALIKE, focus_alike, read_blocks
from stream_rag.answer.evaluate import AnswerSet, kb_services, load_questions, load_sets
from stream_rag.answer.results import Options
from stream_rag.config import Settings
from stream_rag.language.question import read_question

SETS = Path(__file__).parent / "answers" / "sets.json"
GRID = (0.35, 0.4, 0.42, 0.45, 0.48, 0.5, 0.55)


@dataclass(frozen=True, slots=True)
class Row:
    set: str
    kb: str
    question: str
    must_refuse: bool
    alike: tuple[tuple[str, float], ...]  # focus nouns no block has, and their best cosine

    def refused(self, threshold: float) -> bool:
        return any(cosine < threshold for _, cosine in self.alike)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=Path, default=SETS)
    parser.add_argument("--only", nargs="+")
    parser.add_argument("--folds", type=int, default=3, help="folds grouped by knowledge base")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    sets = [
        s for s in load_sets(args.sets) if (s.name in args.only if args.only else not s.held_out)
    ]
    rows = [row for answer_set in sets for row in _read_set(answer_set)]
    print(f"{'set':<20} " + "  ".join(f"T {t:<4} refused/false" for t in GRID))
    for name in dict.fromkeys(r.set for r in rows):
        mine = [r for r in rows if r.set == name]
        print(f"{name:<20} " + "  ".join(f"{_counts(mine, t):>20}" for t in GRID))
    print(f"{'all':<20} " + "  ".join(f"{_counts(rows, t):>20}" for t in GRID))
    kbs = sorted({r.kb for r in rows})
    for k in range(args.folds):
        held = set(kbs[k :: args.folds])
        train = [r for r in rows if r.kb not in held]
        test = [r for r in rows if r.kb in held]
        best = max(GRID, key=lambda t: (_gain(train, t), -t))
        print(
            f"fold {k + 1} ({', '.join(sorted(held))}): T {best} from the others, "
            f"held out {_counts(test, best)} (must-refuse refused/false refusals)"
        )
    if args.verbose:
        for r in rows:
            if r.refused(FOCUS_ALIKE):
                kind = "must-refuse" if r.must_refuse else "FALSE"
                alike = ", ".join(f"{w} {c:.2f}" for w, c in r.alike)
                print(f"{kind:<12} {r.set:<12} {r.question!r} ({alike})")


def _counts(rows: list[Row], threshold: float) -> str:
    refuse = [r for r in rows if r.must_refuse]
    answer = [r for r in rows if not r.must_refuse]
    refused = sum(r.refused(threshold) for r in refuse)
    false = sum(r.refused(threshold) for r in answer)
    return f"{refused}/{len(refuse)} {false}/{len(answer)}"


def _gain(rows: list[Row], threshold: float) -> int:
    return sum((1 if r.must_refuse else -1) for r in rows if r.refused(threshold))


def _read_set(answer_set: AnswerSet) -> list[Row]:
    """The set's questions that pass the checks before the focus rule, read against their
    blocks."""
    items = load_questions(answer_set.questions)
    rows: list[Row] = []
    settings = replace(Settings(), check_answered=False)
    with kb_services(answer_set.kb, settings) as services:

        async def run() -> None:
            answerer = services.answerer
            for item in items:
                if item.history or item.expect not in ("answer", "refuse"):
                    continue
                prepared = await answerer.prepare(item.question, Options())
                if prepared.refusal is not None:
                    continue
                asked = read_question(item.question)
                reading = read_blocks(asked, prepared.blocks, answerer.ranking)
                if reading.top is None or not reading.on_kind or reading.swapped:
                    continue  # refused by the other rules whatever this one says
                alike = focus_alike(asked, prepared.blocks, answerer.ranking)
                if len(asked.parts) > 1:
                    alike = ()  # the rule reads questions asking one thing
                kb = answer_set.kb.resolve().name
                rows.append(Row(answer_set.name, kb, item.question, item.expect == "refuse", alike))
            await services.aclose()

        anyio.run(run)
    return rows


if __name__ == "__main__":
    main()
