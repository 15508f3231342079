"""The `not_answered` check's reading of each question of the answer sets: its best entry,
the subject words that entry lacks while another block has them, whether a good sentence
states the kind of answer wanted, and what the check decides against what the set expects.

    python -m loadtests.calibrate_answerable [--sets loadtests/answers/sets.json] [--only NAME ...]

Held-out sets are skipped unless named with --only: they are reported, never tuned on. Folds
grouped by document (--folds): the questions whose gold documents fall in one fold are scored
apart, so that a rule found on some documents is seen to hold on the others.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio

from stream_rag.answer.answerable import read_blocks
from stream_rag.answer.evaluate import AnswerSet, kb_services, load_questions, load_sets
from stream_rag.answer.results import Options
from stream_rag.config import Settings
from stream_rag.language.question import read_question

SETS = Path(__file__).parent / "answers" / "sets.json"
Row = tuple[str, str, str, bool, bool]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=Path, default=SETS)
    parser.add_argument("--only", nargs="+")
    parser.add_argument("--folds", type=int, default=0, help="folds grouped by gold document")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    sets = load_sets(args.sets)
    sets = [s for s in sets if (s.name in args.only if args.only else not s.held_out)]
    rows: list[Row] = []
    for answer_set in sets:
        rows.extend(_read_set(answer_set, args.verbose))
    for name in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == name]
        answerable = [r for r in mine if r[2] == "answer"]
        refuse = [r for r in mine if r[2] != "answer"]
        print(
            f"{name:<20} false refusals {sum(r[4] for r in answerable)}/{len(answerable)}  "
            f"must-refuse refused {sum(r[4] for r in refuse)}/{len(refuse)}"
        )
    if args.folds:
        docs = sorted({r[1] for r in rows if r[1]})
        for k in range(args.folds):
            fold = set(docs[k :: args.folds])
            mine = [r for r in rows if r[1] in fold]
            print(
                f"fold {k + 1}: {len(fold)} documents, right {sum(r[3] for r in mine)}/{len(mine)}"
            )


def _read_set(answer_set: AnswerSet, verbose: bool) -> list[Row]:
    """Each question of the set read against its blocks, as (set, gold document, expect,
    the check decided as expected, refused)."""
    items = load_questions(answer_set.questions)
    rows: list[Row] = []
    with kb_services(answer_set.kb, Settings()) as services:

        async def run() -> None:
            answerer = services.answerer
            for item in items:
                if item.history or item.expect == "conflict":
                    continue
                must_refuse = item.expect != "answer"
                prepared = await answerer.prepare(item.question, Options())
                if prepared.refusal is not None:
                    rows.append((answer_set.name, _doc(item.gold), item.expect, must_refuse, True))
                    continue
                reading = read_blocks(
                    read_question(item.question), prepared.blocks, answerer.ranking
                )
                refused = not reading.answered
                ok = refused == must_refuse
                rows.append((answer_set.name, _doc(item.gold), item.expect, ok, refused))
                if verbose or not ok:
                    top = reading.top.text[:70] if reading.top else "-"
                    print(
                        f"{'ok ' if ok else 'BAD'} [{item.expect}] {item.question[:60]!r} "
                        f"missing={list(reading.missing)} on_kind={reading.on_kind} "
                        f"score={reading.top.score if reading.top else 0:.3f} top={top!r}"
                    )
            await services.aclose()

        anyio.run(run)
    return rows


def _doc(gold: tuple[str, ...] | None) -> str:
    return gold[0] if gold else ""


if __name__ == "__main__":
    main()
