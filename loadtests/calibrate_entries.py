"""Would an FAQ entry's own question tell an answerable question from one the FAQ does not
answer? For each question of the answer sets that passes the checks before the model, the
MiniLM cosine of the question to the questions of the retrieved FAQ entries (the best
entry's, and the best of any), and whether a word it asks is in no retrieved block; then the
refusals each rule would add, per threshold, and in folds grouped by knowledge base (a
threshold chosen on the other folds, scored on the one left out).

    python -m loadtests.calibrate_entries [--sets loadtests/answers/sets.json] [--only NAME ...]

Held-out sets are skipped unless named with --only: they are reported, never tuned on.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from stream_rag.answer.answerable import read_blocks
from stream_rag.answer.evaluate import AnswerSet, kb_services, load_questions, load_sets
from stream_rag.answer.results import Options
from stream_rag.config import Settings
from stream_rag.index.questions import is_question
from stream_rag.language.coverage import derived, name_words
from stream_rag.language.question import read_question
from stream_rag.language.terms import stem
from stream_rag.model.passages import sections
from stream_rag.retrieve.hybrid import Block
from stream_rag.text import tokenize

SETS = Path(__file__).parent / "answers" / "sets.json"
THRESHOLDS = (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
Scorer = Callable[[str, Sequence[str]], Sequence[float]]


@dataclass(frozen=True, slots=True)
class Row:
    kb: str
    refuse: bool  # the set expects a refusal
    top: float | None  # cosine to the best entry's own question (None: not an FAQ entry)
    best: float | None  # the best cosine to any retrieved entry's question
    absent: bool  # a content word it asks is in no retrieved block


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=Path, default=SETS)
    parser.add_argument("--only", nargs="+")
    args = parser.parse_args()
    sets = [
        s for s in load_sets(args.sets) if (s.name in args.only if args.only else not s.held_out)
    ]
    rows = [row for answer_set in sets for row in _read_set(answer_set)]
    rules: dict[str, Callable[[Row, float], bool]] = {
        "best entry's question under T": lambda r, t: r.top is not None and r.top < t,
        "... and a word it asks no block has": lambda r, t: (
            r.top is not None and r.top < t and r.absent
        ),
        "every entry's question under T": lambda r, t: r.best is not None and r.best < t,
    }
    refuse = sum(r.refuse for r in rows)
    print(f"{len(rows)} questions pass the checks, {refuse} of them must be refused")
    for name, rule in rules.items():
        print(f"\n{name}: T, must-refuse refused, answerable refused")
        for t in THRESHOLDS:
            hit = sum(rule(r, t) for r in rows if r.refuse)
            false = sum(rule(r, t) for r in rows if not r.refuse)
            print(f"  {t:.2f}  {hit}/{refuse}  {false}/{len(rows) - refuse}")
        _folds(rows, rule)


def _folds(rows: Sequence[Row], rule: Callable[[Row, float], bool], k: int = 3) -> None:
    """A threshold chosen on the other folds (most refusals gained less false ones, none if
    no threshold gains), scored on the fold left out; folds grouped by knowledge base."""
    kbs = sorted({r.kb for r in rows})
    for i in range(k):
        held = set(kbs[i::k])

        def gain(t: float, mine: Sequence[Row]) -> int:
            return sum(rule(r, t) if r.refuse else -rule(r, t) for r in mine)

        train = [r for r in rows if r.kb not in held]
        test = [r for r in rows if r.kb in held]
        best = max(THRESHOLDS, key=lambda t: gain(t, train))
        if gain(best, train) <= 0:
            print(f"  fold {i + 1}: no threshold gains on the other folds")
            continue
        hit = sum(rule(r, best) for r in test if r.refuse)
        false = sum(rule(r, best) for r in test if not r.refuse)
        print(f"  fold {i + 1}: T {best} from the others; here +{hit} refused, {false} false")


def _read_set(answer_set: AnswerSet) -> list[Row]:
    questions = [q for q in load_questions(answer_set.questions) if not q.history]
    settings = Settings.from_env()
    with kb_services(answer_set.kb, settings) as services:
        answerer = services.answerer
        dense = answerer.ranking
        if dense is None:
            raise SystemExit("the local MiniLM is needed (an embedder)")

        async def run() -> list[Row]:
            out = []
            try:
                for item in questions:
                    if item.expect == "conflict":
                        continue
                    prepared = await answerer.prepare(item.question, Options())
                    if prepared.refusal is None:
                        out.append(
                            _row(
                                answer_set.kb.name,
                                item.question,
                                item.expect,
                                prepared.blocks,
                                dense,
                            )
                        )
            finally:
                await services.aclose()
            return out

        return anyio.run(run)


def _row(kb: str, question: str, expect: str, blocks: Sequence[Block], dense: Scorer) -> Row:
    asked = read_question(question)
    top = read_blocks(asked, blocks, dense).top
    asks = [
        h
        for b in blocks
        for _, heading, scope in sections(b.text, name_words(b.name))
        for h in (heading, scope)
        if h and is_question(heading)
    ]
    have: set[str] = set()
    for b in blocks:
        have |= {stem(t) for t in tokenize(f"{b.text} {name_words(b.name)}")}
    own = frozenset(have)
    nouns = [w for w in asked.subject if len(w) > 3 and w.isalpha() and w.islower()]
    absent = any((t := stem(w.casefold())) not in own and not derived(t, own) for w in nouns)
    return Row(
        kb,
        expect == "refuse",
        max(dense(question, [top.title])) if top is not None and is_question(top.title) else None,
        max(dense(question, list(dict.fromkeys(asks)))) if asks else None,
        absent,
    )


if __name__ == "__main__":
    main()
