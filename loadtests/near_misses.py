"""Why must-refuse questions get answered: per set, the must-refuse questions the checks before
the generator refuse and the answerable ones they refuse (false refusals), by reason; for each
must-refuse question they let through, what its words are against the retrieved blocks; and
the sentence-level variants of the focus rule swept over thresholds, in folds by knowledge base.

    python -m loadtests.near_misses [--sets loadtests/answers/sets.json] [--only NAME ...]

A variant refuses a question that every check answers when one of its subject words is in no
retrieved block (text, headings, document name; stems and derivations) and its best cosine,
word to word, to `--against` words (`all`: every retrieved block's, as the rule on main reads
them; `entry`: the chosen sentence's entry's only) is under the threshold. Held-out sets are
skipped unless named with --only.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio

from stream_rag.answer.answerable import (
    ASKING_WORDS,
    naming_words,
    only_noun,
    read_blocks,
    text_terms,
)
from stream_rag.answer.evaluate import AnswerSet, kb_services, load_questions, load_sets
from stream_rag.answer.results import Options
from stream_rag.config import Settings
from stream_rag.language.coverage import derived, name_words
from stream_rag.language.followups import carried, subject_words
from stream_rag.language.question import read_question
from stream_rag.language.terms import stem
from stream_rag.model.passages import sections

SETS = Path(__file__).parent / "answers" / "sets.json"
GRID = (0.35, 0.4, 0.45, 0.5)


@dataclass(frozen=True, slots=True)
class Word:
    word: str
    focus: bool  # a head of the question's phrases (`Question.focus`)
    kinds: frozenset[str]  # the dictionary's parts of speech (none: not in it)
    all: float  # best cosine to the words of every retrieved block
    entry: float  # best cosine to the words of the chosen sentence's entry


@dataclass(frozen=True, slots=True)
class Row:
    set: str
    kb: str
    question: str
    must_refuse: bool
    refusal: str | None  # the checks' reason, None: answered
    words: tuple[Word, ...] = ()  # subject words in no retrieved block (answered, one part)
    elsewhere: bool = False  # a subject noun another block has and the chosen entry lacks


# Which of the words a variant reads.
PICKS: dict[str, Callable[[Word], bool]] = {
    "focus, only a noun (main)": lambda w: w.focus and only_noun(w.word),
    "focus, a noun not an adjective": lambda w: w.focus and _nounlike(w),
    "subject, only a noun": lambda w: only_noun(w.word),
    "subject, a noun not an adjective, or unknown": lambda w: _nounlike(w) or not w.kinds,
}


def _nounlike(w: Word) -> bool:
    return "NOUN" in w.kinds and not w.kinds & {"ADJ", "ADV"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=Path, default=SETS)
    parser.add_argument("--only", nargs="+")
    parser.add_argument("--folds", type=int, default=3, help="folds grouped by knowledge base")
    args = parser.parse_args()
    sets = [
        s for s in load_sets(args.sets) if (s.name in args.only if args.only else not s.held_out)
    ]
    rows = [row for answer_set in sets for row in _read_set(answer_set)]
    print(f"{'set':<20} {'must-refuse refused':<42} answerable refused (false)")
    for name in dict.fromkeys(r.set for r in rows):
        mine = [r for r in rows if r.set == name]
        print(f"{name:<20} {_refused(mine, True):<42} {_refused(mine, False)}")
    causes = Counter(_cause(r) for r in rows if r.must_refuse and r.refusal is None)
    print("\nmust-refuse answered, by what their words are against the blocks:")
    for cause, n in causes.most_common():
        print(f"{n:>4}  {cause}")
    for r in rows:
        if r.must_refuse and r.refusal is None:
            print(f"      {r.set:<18} {_cause(r)[:32]:<32} {r.question}")
    kbs = sorted({r.kb for r in rows})
    for against in ("all", "entry"):
        print(f"\nrefused must-refuse/answerable, cosine against {against!r} words under T:")
        for pick in PICKS:
            counts = "  ".join(f"{t}: {_counts(rows, pick, against, t)}" for t in GRID)
            print(f"  {pick:<46} {counts}")
            for k in range(args.folds):
                held = set(kbs[k :: args.folds])
                train = [r for r in rows if r.kb not in held]
                best = max(GRID, key=lambda t: (_gain(train, pick, against, t), -t))
                test = [r for r in rows if r.kb in held]
                held_out = _counts(test, pick, against, best)
                print(f"    fold {k + 1}: T {best} from the others, held out {held_out}")


def _refuses(row: Row, pick: str, against: str, threshold: float) -> bool:
    chosen = PICKS[pick]
    return any(chosen(w) and getattr(w, against) < threshold for w in row.words)


def _counts(rows: list[Row], pick: str, against: str, threshold: float) -> str:
    refuse = sum(_refuses(r, pick, against, threshold) for r in rows if r.must_refuse)
    false = sum(_refuses(r, pick, against, threshold) for r in rows if not r.must_refuse)
    return f"{refuse}/{false}"


def _gain(rows: list[Row], pick: str, against: str, threshold: float) -> int:
    return sum((1 if r.must_refuse else -1) for r in rows if _refuses(r, pick, against, threshold))


def _refused(rows: list[Row], must_refuse: bool) -> str:
    mine = [r for r in rows if r.must_refuse == must_refuse]
    reasons = Counter(r.refusal for r in mine if r.refusal is not None)
    said = ", ".join(f"{k} {v}" for k, v in reasons.most_common())
    return f"{sum(reasons.values())}/{len(mine)} ({said})" if said else f"0/{len(mine)}"


def _cause(row: Row) -> str:
    if not row.words and row.elsewhere:
        return "a noun another block has, the chosen entry lacks"
    if not row.words:
        return "every subject word in a retrieved block (asked of another thing)"
    if any(w.focus and only_noun(w.word) for w in row.words):
        return "a focus noun in no block, alike a block's word"
    return "a word in no block that the focus rule does not read"


def _read_set(answer_set: AnswerSet) -> list[Row]:
    items = load_questions(answer_set.questions)
    kb = answer_set.kb.resolve().name
    rows: list[Row] = []
    with kb_services(answer_set.kb, Settings()) as services:

        async def run() -> None:
            answerer = services.answerer
            dense = answerer.ranking
            for item in items:
                if item.history or item.expect not in ("answer", "refuse"):
                    continue
                must = item.expect == "refuse"
                prepared = await answerer.prepare(item.question, Options())
                refused = prepared.refusal.reason if prepared.refusal is not None else None
                asked = read_question(item.question)
                reading = read_blocks(asked, prepared.blocks, dense)
                if refused or reading.top is None or dense is None or len(asked.parts) > 1:
                    rows.append(Row(answer_set.name, kb, item.question, must, refused))
                    continue
                blocks = prepared.blocks
                top = reading.top
                block = next(b for b in blocks if b.n == top.n)
                title = name_words(block.name)
                said = [top.title, title] + [
                    s for s, heading, _ in sections(block.framed, title) if heading == top.title
                ]
                entry = naming_words(tuple(said))
                everywhere = naming_words(tuple(f"{b.framed} {name_words(b.name)}" for b in blocks))
                have = frozenset().union(
                    *(text_terms(b.framed) | text_terms(name_words(b.name)) for b in blocks)
                )
                before = {stem(w.casefold()) for w in carried(item.question)}
                words = []
                for word in subject_words(item.question):
                    term = stem(word.casefold())
                    if term in ASKING_WORDS or len(term) < 3 or term in before:
                        continue
                    if term in have or derived(term, have):
                        continue
                    words.append(
                        Word(
                            word,
                            word in asked.focus,
                            _kinds(word),
                            float(max(dense(word, everywhere), default=0.0)),
                            float(max(dense(word, entry), default=0.0)),
                        )
                    )
                elsewhere = bool(reading.missing)
                rows.append(
                    Row(answer_set.name, kb, item.question, must, None, tuple(words), elsewhere)
                )
            await services.aclose()

        anyio.run(run)
    return rows


def _kinds(word: str) -> frozenset[str]:
    import lemminflect

    return frozenset(lemminflect.getAllLemmas(word.casefold()))


if __name__ == "__main__":
    main()
