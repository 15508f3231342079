"""The checks before any model call: weak evidence, names the sources lack, disagreeing
sources, and the parts of a question no source covers (`Answerer.precheck` keeps their
outcome per question and blocks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ..events import Refusal, Uncovered
from ..language.asking import asked
from ..language.coverage import left_out, name_words
from ..language.followups import leans_on_history, own_words, resolve, subject_words
from ..language.question import Question, read_question
from ..language.terms import stem
from ..model.passages import Candidate, Scorer, rank_sentences
from ..retrieve.hybrid import Block
from ..text import tokenize
from ..types import Turn
from .conflicts import Conflict, ConflictDetector
from .evidence import Similarity, entry_evidence, evidence_score, sentence_evidence, unnamed
from .refusals import conflict_message

NO_SOURCES = "Nothing in the knowledge base matches this question."
LOW_EVIDENCE = "The knowledge base does not seem to cover this question, so I am not answering."
# A sentence of the top blocks this close to the question (cosine) says what it asks in other
# words, however few of its terms the blocks share: it is evidence enough. Both vectors fp32
# (the ranking's, warmed at indexing; 0.6 was set on an int8 question, whose cosines run
# ~0.01 lower): on the dev sets the evidence score refuses 20 answerable and 67 must-refuse
# questions, and 0.62 (the middle of the gap between them) keeps 2 of the 20 and lets none
# of the 67 through, as 0.6 did; folds by set: kept 1/20, let through 1/67, as before.
PARAPHRASED = 0.62


def refusal(
    question: str,
    blocks: Sequence[Block],
    floor: float,
    check: bool,
    *,
    detector: ConflictDetector,
    entries: Similarity | None = None,
    mentions: Callable[[str], bool] | None = None,
    ranking: Scorer | None = None,
) -> Refusal | None:
    """A refusal when `blocks` are too weak an evidence for `question` (under `floor`), or,
    with `check`, disagree on what it asks; None to go on. `mentions` says whether any live
    chunk of the collection names a word; `ranking` scores sentences against the question (the
    answering order's dense part)."""
    evidence = evidence_score(question, blocks)
    said = 0.0
    if evidence < floor and entries is not None:
        # Embedding entries costs: only for a question the whole blocks would refuse.
        evidence = max(evidence, entry_evidence(question, blocks, entries))
        if evidence < floor and floor > 0:
            # The ranking's vectors: fp32 question and sentences, the sentences embedded as
            # their chunks were indexed (the entries' are int8 questions, filled on demand).
            said = sentence_evidence(question, blocks, ranking or entries)
    # A name the blocks lack but the knowledge base has elsewhere (the product's own name,
    # every noun of a German question) is retrieval's miss, not a question about something
    # the sources never cover: only names no live chunk has refuse.
    missing = [
        name
        for name in (unnamed(asked(question), blocks) if floor > 0 else [])
        if mentions is None or not mentions(name)
    ]
    parts = parts_of(question)
    if (
        missing
        and len(parts) > 1
        and any(not set(unnamed(part, blocks)) & set(missing) for part in parts)
    ):
        # A question asking several things, one of which names nothing the sources lack
        # ("the Pro plan and the Basic plan"): that one is answered, the other is not.
        missing = []
    if (evidence < floor and said < PARAPHRASED) or missing:
        detail: dict[str, object] = {"evidence": round(evidence, 4), "threshold": floor}
        if said:
            detail["best_sentence"] = round(said, 4)
        if missing:  # the sources never name what the question asks about
            detail["not_in_sources"] = missing
        return Refusal("low_evidence", LOW_EVIDENCE, [detail])
    if check:
        # A question asking several things: what disagrees must be what one of them asks
        # ("... and where do I get spare parts?" does not ask how long they are kept).
        found = (
            c
            for part in parts
            for c in answering(part, blocks, detector.find(part, blocks), ranking)
        )
        conflicts = list({(c.a.n, c.b.n, c.sentence_a, c.sentence_b): c for c in found}.values())
        conflicts = about_the_follow_up(question, conflicts)
        if conflicts:
            return Refusal(
                "conflicting_sources",
                conflict_message(conflicts),
                [c.to_json() for c in conflicts],
            )
    return None


def stale_or_current(
    asked: Question,
    lead: Block,
    others: Sequence[Block],
    detector: ConflictDetector,
    sources: Sequence[Block],
) -> tuple[Refusal | None, tuple[Block, ...]]:
    """The `conflicting_sources` refusal when a document retrieval left out (`others`, looked
    up by the words of the sentence the answer would lead with, in `lead`) gives another value
    for it: an outdated price list retrieved alone, its current one not, or the other way.
    Checked part by part as `refusal` checks the retrieved blocks. With it, the blocks of
    `others` it cites that are not among `sources`, numbered on after them: the sources the
    client is sent, so that every side's `n` is one of them."""
    if not others:
        return None, ()
    found = (
        c
        for part in parts_of(asked.text)
        for c in detector.find(part, [lead, *others])
        if lead.chunk_id in (c.a.chunk_id, c.b.chunk_id)
    )
    unique = {(c.a.chunk_id, c.b.chunk_id, c.sentence_a, c.sentence_b): c for c in found}
    conflicts = about_the_follow_up(asked.text, list(unique.values()))
    if not conflicts:
        return None, ()
    given = {b.chunk_id for b in sources}
    added: dict[str, Block] = {}
    for block in (side for c in conflicts for side in (c.a, c.b)):
        if block.chunk_id not in given and block.chunk_id not in added:
            added[block.chunk_id] = replace(block, n=len(sources) + len(added) + 1)
    conflicts = [
        replace(c, a=added.get(c.a.chunk_id, c.a), b=added.get(c.b.chunk_id, c.b))
        for c in conflicts
    ]
    refused = Refusal(
        "conflicting_sources", conflict_message(conflicts), [c.to_json() for c in conflicts]
    )
    return refused, tuple(added.values())


def about_the_follow_up(query: str, conflicts: Sequence[Conflict]) -> list[Conflict]:
    """For a follow-up (`query` carries the subject of earlier questions), the conflicts one
    of whose sentences has a word of the follow-up's own: "Do I need the receipt for it?"
    after "How many days do I have to return a product?" is not refused over the two return
    windows the first was; "And how many days for opened ones?" still is."""
    own = own_words(query)
    if own is None or not conflicts or not subject_words(own):
        return list(conflicts)  # "How long do I have for that?" asks the carried subject
    asked = {stem(t) for t in tokenize(" ".join(subject_words(own)))}
    return [
        c
        for c in conflicts
        if any(asked & {stem(t) for t in tokenize(s)} for s in (c.sentence_a, c.sentence_b))
    ]


_MAX_CHECKED = 8
# A conflicting sentence this close to the best answering one is what the answer rests on
# (set before measuring: the stale and the current sides of the dev sets' true conflicts
# rank first and at 0.50-0.76 of the first).
RESTS = 0.8


def answering(
    question: str, blocks: Sequence[Block], conflicts: Sequence[Conflict], ranking: Scorer | None
) -> list[Conflict]:
    """The conflicts over the statement the answer would rest on: one of the two sentences is
    the best answering candidate, or scores at least `RESTS` of it (ranked as the local
    generator ranks them). A disagreement the question only brushes ("Does that cost me
    anything if I return it?" against two delivery prices) is not the question's. A conflict
    whose sentences are not among the candidates (a heading, a row read otherwise) stands.
    A question asking how to do something, when the blocks hold a procedure (a list), rests on
    its steps: two delivery prices beside the steps of booking a delivery are not what "How
    do I book a delivery day?" asks; two deadlines in those steps are."""
    if not conflicts:
        return []
    texts = {b.n: b.framed for b in blocks}
    docs = {b.n: b.doc_id for b in blocks}
    ranked = rank_sentences(question, texts, ranking, {b.n: b.name for b in blocks}, docs)
    if not ranked:
        return list(conflicts)
    top = ranked[0].score
    steps = read_question(question).kind == "steps" and any(c.item for c in ranked)

    def found(n: int, sentence: str) -> list[Candidate]:
        said = " ".join(sentence.split())
        return [c for c in ranked if c.n == n and (c.text in said or said in c.text)]

    kept = []
    for c in conflicts:
        sides = [found(c.a.n, c.sentence_a), found(c.b.n, c.sentence_b)]
        if steps and all(side for side in sides):
            if any(x.item for side in sides for x in side):
                kept.append(c)
            continue
        known = [max(x.score for x in side) for side in sides if side]
        if len(known) < 2 or max(known) >= RESTS * top:
            kept.append(c)
    return kept


def parts_of(question: str) -> list[str]:
    """The things `question` asks (`asks`), a part that leans on one before it ("... and how
    long do you keep them?") with that one's subject words. All of them, not the three the
    local generator answers: what the sources disagree on may be what the fourth asks. Over
    `_MAX_CHECKED` the question is checked whole, as before it was split (each part costs a
    conflict search: a 4,000-character question can ask 190 things)."""
    parts = list(read_question(question).parts)
    if len(parts) > _MAX_CHECKED:
        return [question]
    return [
        resolve(part, [Turn(p, "") for p in parts[:i]]) if i and leans_on_history(part) else part
        for i, part in enumerate(parts)
    ]


def uncovered(question: str, blocks: Sequence[Block]) -> tuple[Uncovered, ...]:
    titled = [f"{b.framed}\n{name_words(b.name)}" for b in blocks]
    found = left_out(question, [b.text for b in blocks], titled, _MAX_CHECKED)
    return tuple(Uncovered(part, tuple(missing)) for part, missing in found)
