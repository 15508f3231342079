"""Why the local generator's first sentence misses: for each answerable question of the FAQ
answer sets that states the sentence it wants first (`first`), the blocks retrieval gives and
the sentences the generator ranks, and a cause for each miss: the answering sentence not in the
blocks (`retrieval`), its block's rank decay (it wins with none: `rank`), the kind of answer
asked (`kind`), another sentence of the answering entry (`same entry`), or the sentence scores
(`score`). Refused before the model: `refused:<reason>`.

    python -m loadtests.faq_errors [--sets loadtests/answers/sets.json] [--only NAME ...] [-v]

Held-out sets are skipped unless named with --only: they are reported, never tuned on.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import anyio

from stream_rag.answer.evaluate import AnswerSet, Question, kb_services, load_questions, load_sets
from stream_rag.answer.results import Options
from stream_rag.config import Settings
from stream_rag.model import passages
from stream_rag.model.extractive import compose
from stream_rag.model.passages import Candidate, Scorer
from stream_rag.retrieve.hybrid import Block

SETS = Path(__file__).parent / "answers" / "sets.json"
FAQ_SETS = (
    "birdflu",
    "tenancy",
    "campus",
    "harbour",
    "civic",
    "health",
    "bank",
    "passport",
    "consumer",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=Path, default=SETS)
    parser.add_argument("--only", nargs="+")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    names = args.only or FAQ_SETS
    sets = [s for s in load_sets(args.sets) if s.name in names and (args.only or not s.held_out)]
    total: Counter[str] = Counter()
    for answer_set in sets:
        causes = _read_set(answer_set, args.verbose)
        total.update(causes)
        print(f"{answer_set.name}: " + ", ".join(f"{k} {v}" for k, v in causes.most_common()))
    print("all: " + ", ".join(f"{k} {v}" for k, v in total.most_common()))


def _plain(text: str) -> str:
    return " ".join(text.replace("’", "'").casefold().split())


def _read_set(answer_set: AnswerSet, verbose: bool) -> Counter[str]:
    questions = [
        q for q in load_questions(answer_set.questions) if q.expect == "answer" and q.first
    ]
    settings = Settings.from_env()
    causes: Counter[str] = Counter()
    with kb_services(answer_set.kb, settings) as services:
        answerer = services.answerer
        dense = answerer.ranking

        async def run() -> None:
            try:
                for item in questions:
                    prepared = await answerer.prepare(item.question, Options())
                    if prepared.refusal is not None:
                        cause = f"refused:{prepared.refusal.reason}"
                        note = ""
                    else:
                        cause, note = _cause(item, prepared.blocks, dense)
                    causes[cause] += 1
                    if verbose and cause != "right":
                        print(f"  [{cause}] {item.question}\n      {note}")
            finally:
                await services.aclose()

        anyio.run(run)
    return causes


def _cause(item: Question, blocks: Sequence[Block], dense: Scorer | None) -> tuple[str, str]:
    texts = {b.n: b.text for b in blocks}
    names = {b.n: b.name for b in blocks}
    files = {b.n: b.filename for b in blocks}
    docs = {b.n: b.doc_id for b in blocks}
    gold = set(item.gold or ())
    wanted = [_plain(p) for p in item.first]

    def answers(c: Candidate) -> bool:
        return files[c.n] in gold and any(p in _plain(c.text) for p in wanted)

    chosen = compose(item.question, texts, 3, dense=dense, names=names, docs=docs)
    if chosen and answers(chosen[0]):
        return "right", ""
    top = chosen[0] if chosen else None
    ranked = passages.rank_sentences(item.question, texts, dense, names, docs)
    good = [c for c in ranked if answers(c)]
    said = f"top {top.title!r}: {top.text[:70]!r} [{top.n}]" if top else "nothing chosen"
    if not good:
        return "retrieval", said
    want = good[0]
    said += f" | wanted {want.title!r}: {want.text[:60]!r} [{want.n}]"
    if top is not None and top.title == want.title and top.n == want.n:
        return "same entry", said
    if top is not None and top.on_kind and not want.on_kind:
        return "kind", said
    decay = passages.RANK_DECAY
    try:
        passages.RANK_DECAY = 0.0
        passages.forget_rankings()
        flat = compose(item.question, texts, 3, dense=dense, names=names, docs=docs)
    finally:
        passages.RANK_DECAY = decay
        passages.forget_rankings()
    if flat and answers(flat[0]):
        return "rank", said
    return "score", said


if __name__ == "__main__":
    main()
