"""The quotable sentences of the issued blocks, ranked by how well each answers the question.

A sentence is scored by what the question asks (dense similarity to the question when an
embedder is given, IDF-weighted term overlap, the heading it sits under, its block's retrieval
rank) and by whether it states the kind of answer the question wants (`language/question.py`:
"how long" a duration, "how much" an amount, "when" a time): a sentence that does not is worth
`OFF_KIND` of its score, so "How long is flu infectious?" leads with the infectious period,
not with the incubation period beside it, and "How long does the permit take?" with the days,
not with who may apply. Each sentence also records whether it is a list item (a step of a
procedure, quoted with its whole list) and whether it goes on from the one before it ("For all
other currencies, ...", never quoted alone).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache

from ..language.coverage import name_words
from ..language.followups import subject_words
from ..language.question import offers, other_thing, read_question
from ..language.terms import NEGATION, NEGATION_CUE, model_names, names_model, stem
from ..text import tokenize
from .entry_order import within_entries
from .quotable import (
    Quotable,
    block_sentences,
    depends,
    entry_texts,
    leads,
    sectioned,
    sections,
    speaks_of_heading,
    titles,
)

__all__ = [
    "Candidate",
    "block_sentences",
    "depends",
    "entry_texts",
    "forget_rankings",
    "leads",
    "rank_sentences",
    "restates",
    "sections",
    "speaks_of_heading",
    "titles",
]

# The block at rank n is worth (1 - RANK_DECAY) ** (n - 1) of the first: retrieval, which
# matches the question against each entry's own question too, says more than the
# generator's own sentence scores (0.12 quoted the second block for 5 of 94 dev questions).
RANK_DECAY = 0.25
DENSE_WEIGHT = 0.6
DENSE_BLOCKS = 5  # with dense scoring, only the top blocks are candidates (cost bound)
TITLE_WEIGHT = 0.5  # an FAQ entry's question says best what its sentences answer
RESTATES = 0.8  # a sentence holding this share of the question's terms, and little else
# A sentence not stating the kind of answer the question wants keeps this share of its score.
OFF_KIND = 0.7
# An FAQ entry read whole (its question and the sentences answering it) is what a customer's
# question paraphrases: an entry's sentences keep (its cosine / the best entry's) ** this of
# their score, so the entry that matches best leads and the rest fall behind it; a sentence
# of no entry keeps its own (loadtests/faq_errors.py: the right entry first for 149 -> 157 of
# 162 dev questions; docs/decisions/faq-entry-read-whole.md).
ENTRY_POWER = 2.0
# An FAQ entry whose question asks about another thing of a kind the customer's asks about
# ("What is the incubation period?" for "How long is the infectious period?",
# `question.other_thing`) keeps this share of its sentences' scores.
OTHER_THING = 0.8

_NUMBERS = (
    "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    " seventeen eighteen nineteen twenty"
)

# Words that say how a question asks, not what about: a heading holding them ("How to book")
# is about no more of the question for it.
_HOW_WORDS = frozenset(stem(w) for w in "how much many long cost price pay need get".split())

Scorer = Callable[[str, Sequence[str]], Sequence[float]]
Terms = frozenset[str]


@dataclass(frozen=True, slots=True)
class Candidate:
    n: int
    position: int
    text: str
    score: float
    section: int = 0  # which heading of the block it sits under (0: before any), or which row
    row: bool = False  # a table row: quoted alone, its neighbours are other entries
    item: int = 0  # the list it is an item of (a step of a procedure; 0: none)
    on_kind: bool = True  # it states the kind of answer the question wants
    title: str = ""  # the heading it sits under, else its document's name
    step: bool = False  # an item of a numbered list: an instruction, not a statement
    # Its score without its FAQ entry read whole (None: the same): which sentences of the
    # chosen entry, or of its neighbours, are good enough to quote is read on this; the
    # entry's part is alike for them all and would let worded-alike neighbours in.
    said: float | None = None

    @property
    def alone(self) -> float:
        return self.score if self.said is None else self.said


# A period's adjective matches its unit: "the hourly price" asks for "6 euros per hour", "a
# monthly fee" for "9 euros a month". Not "annual": "an annual plan" names a plan, and matched
# "$80 per year" over the refund policy of annual plans (sample 41 -> 40).
_PERIODS = {
    "hourly": "hour",
    "daily": "day",
    "nightly": "night",
    "weekly": "week",
    "monthly": "month",
    "yearly": "year",
}

# A number written out matches its digits: "space for eight" asks for "Seats 8".
_DIGITS = {w: str(i) for i, w in enumerate(_NUMBERS.split(), start=2)}


def _terms(text: str) -> set[str]:
    return {_DIGITS.get(t) or _PERIODS.get(t) or stem(t) for t in tokenize(text)}


@lru_cache(maxsize=4096)
def _quotable(text: str, title: str) -> tuple[tuple[Quotable, frozenset[str], frozenset[str]], ...]:
    """`sectioned` with each sentence's terms, and those terms with NEGATION if it negates
    (for `restates`), kept per block: the same blocks come back for question after question,
    and splitting and stemming them was most of an answer's CPU (the fake model's too, on the
    cores it shares with what it load-tests)."""
    out = []
    for s in sectioned(text, title):
        terms = frozenset(_terms(s.text))
        if s.section and speaks_of_heading(s.text, s.title):
            # "It costs 19 euros a month." under "## Pro plan" says so of the Pro plan: the
            # heading's words are what the sentence speaks of, as its own would be.
            terms |= _terms(s.title)
        out.append((s, terms, terms | {NEGATION} if _negates(s.text) else terms))
    return tuple(out)


def _negates(text: str) -> bool:
    return NEGATION_CUE.search(text.lower()) is not None


def restates(question_terms: Set[str], sentence_terms: Set[str]) -> bool:
    """The sentence mostly repeats the question (an FAQ entry's title written as a sentence),
    adding no number and no negation: "The device needs 12 volts" answers "How many volts does
    it need?", "The warranty does not cover water" answers "Does the warranty cover water?"."""
    if not question_terms or not sentence_terms:
        return False
    added = sentence_terms - question_terms
    if NEGATION in added or any(term[:1].isdigit() for term in added):
        return False
    shared = len(question_terms & sentence_terms)
    return shared >= RESTATES * len(question_terms) and shared >= RESTATES * len(sentence_terms)


def rank_sentences(
    question: str,
    blocks: Mapping[int, str],
    dense: Scorer | None = None,
    names: Mapping[int, str] | None = None,
    docs: Mapping[int, str] | None = None,
) -> list[Candidate]:
    """Every quotable sentence, scored by how well it and the heading it sits under (else its
    document's name) match the question, dense and lexical, by its block's rank, and by whether
    it states the kind of answer the question wants. `docs`: each block's document id (else
    its name tells one document from another)."""
    named = tuple((names or {}).items())
    ids = tuple((docs or {}).items())
    return list(_kept_by(dense)(question, tuple(blocks.items()), named, ids))


Ranked = Callable[
    [str, tuple[tuple[int, str], ...], tuple[tuple[int, str], ...], tuple[tuple[int, str], ...]],
    tuple[Candidate, ...],
]
# Each scorer's rankings live as long as the scorer does (a module-level cache keyed on it kept
# a closed Services' sentence vectors alive); the cache refers to its scorer weakly.
_BY_SCORER: weakref.WeakKeyDictionary[Scorer, Ranked] = weakref.WeakKeyDictionary()
_BY_SCORER_LOCK = threading.Lock()


@lru_cache(maxsize=256)
def _unscored(
    question: str,
    items: tuple[tuple[int, str], ...],
    named: tuple[tuple[int, str], ...],
    ids: tuple[tuple[int, str], ...],
) -> tuple[Candidate, ...]:
    return _ranked(question, items, None, named, ids)


def _kept_by(dense: Scorer | None) -> Ranked:
    """The rankings kept for `dense` (made at its first use)."""
    if dense is None:
        return _unscored
    try:
        scorer = weakref.ref(dense)
    except TypeError:  # no weak reference to it: nothing kept
        return lambda question, items, named, ids: _ranked(question, items, dense, named, ids)
    with _BY_SCORER_LOCK:
        kept = _BY_SCORER.get(dense)
        if kept is None:
            kept = _BY_SCORER[dense] = _keeper(scorer)
    return kept


def forget_rankings() -> None:
    """Drop every kept ranking (for a measurement that changes this module's weights)."""
    _unscored.cache_clear()
    with _BY_SCORER_LOCK:
        _BY_SCORER.clear()


def _keeper(scorer: weakref.ref[Scorer]) -> Ranked:
    @lru_cache(maxsize=256)
    def ranked(
        question: str,
        items: tuple[tuple[int, str], ...],
        named: tuple[tuple[int, str], ...],
        ids: tuple[tuple[int, str], ...],
    ) -> tuple[Candidate, ...]:
        return _ranked(question, items, scorer(), named, ids)

    return ranked


def _ranked(
    question: str,
    items: tuple[tuple[int, str], ...],
    dense: Scorer | None,
    named: tuple[tuple[int, str], ...],
    ids: tuple[tuple[int, str], ...] = (),
) -> tuple[Candidate, ...]:
    """`rank_sentences`, kept per question and blocks (`_kept_by`): the answerability check, the
    prompt's block order, the conflicts' check and the local generator each rank the same
    sentences for one question (a scorer gives a text the same score whenever it is asked)."""
    blocks: Mapping[int, str] = dict(items)
    names = dict(named)
    read = read_question(question)
    kind = read.kind
    query = _terms(question)
    asked = query | {NEGATION} if _negates(question) else query
    blocks = _naming(question, blocks, names or {})
    rank = _ranks(question, blocks, names or {})  # among the blocks left: 0, 1, ...
    # Blocks of one document: by its id when known (two documents of a collection may share
    # a name: "faq.md" of two agencies), else by its name.
    doc = dict(ids) or names or {}
    first = {n: min(rank[m] for m in blocks if doc.get(m, m) == doc.get(n, n)) for n in blocks}
    sentences: list[tuple[int, int, Quotable, frozenset[str]]] = []
    entries: list[tuple[tuple[int, int], str]] = []
    if dense is not None:  # each new sentence costs an embedding; lower blocks rarely win
        blocks = {n: text for n, text in blocks.items() if n <= DENSE_BLOCKS}
    for n, text in blocks.items():
        name = name_words((names or {}).get(n, ""))
        entries.extend(((n, section), entry) for section, entry in entry_texts(text, name))
        for i, (sentence, terms, said) in enumerate(_quotable(text, name)):
            if not restates(asked, said):
                sentences.append((n, i, sentence, terms))
    if not sentences:
        return ()
    # A sentence is scored with its heading or all its headings, whichever matches better:
    # "# Rider Club" is the context of "## What members get", so a question about the club's
    # puncture repairs is not answered with the sentence under the title only because that
    # one shares the club's name; an FAQ entry's own question is not diluted by the page's.
    heads = sorted({h for _, _, s, _ in sentences for h in (s.title, s.scope, s.lead) if h})
    df: dict[str, int] = {}
    for *_, terms in sentences:
        for term in terms & query:
            df[term] = df.get(term, 0) + 1
    total = len(sentences)
    idf = {t: math.log(1 + (total - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in query}
    norm = sum(idf.values()) or 1.0

    def lexical(terms: Set[str]) -> float:
        return sum(idf[t] for t in query & terms) / norm

    texts = [s.text for _, _, s, _ in sentences] + heads
    own = [lexical(terms) for *_, terms in sentences] + [lexical(_terms(h)) for h in heads]
    entry: dict[tuple[int, int], float] = {}
    if dense is not None:
        similarity = dense(question, texts + [e for _, e in entries])
        tail = similarity[len(texts) :]
        entry = {k: max(0.0, c) for (k, _), c in zip(entries, tail, strict=True)}
        own = [
            DENSE_WEIGHT * max(0.0, d) + (1 - DENSE_WEIGHT) * w
            for d, w in zip(similarity[: len(texts)], own, strict=True)
        ]
    title_score = dict(zip(heads, own[len(sentences) :], strict=True))
    best_entry = max(entry.values(), default=0.0) or 1.0
    ranked = []
    for (n, i, s, _), score in zip(sentences, own, strict=False):
        if s.title or s.scope or s.lead:
            # A list item is read under its lead-in too: "To register as a new patient, do
            # the following:" says what the steps under "Booking your first appointment" do.
            head = max(title_score.get(h, 0.0) for h in (s.title, s.scope, s.lead))
            score = (1 - TITLE_WEIGHT) * score + TITLE_WEIGHT * head
        alone = score
        if (n, s.section) in entry:
            score *= (entry[(n, s.section)] / best_entry) ** ENTRY_POWER
        # A step of a procedure says what to do, not whether, how much or when: it answers
        # "how do I ...?" (or an open question), and a fact beside it answers the others.
        on_kind = offers(s.text, kind) and not (s.step and kind not in (None, "steps"))
        # An FAQ entry ranks with its document's first block: the chunks of one FAQ share
        # its topic, and retrieval ranked each by its best entry, not by this one.
        place = first[n] if s.title.rstrip().endswith(("?", "？")) else rank[n]
        factor = (1 - RANK_DECAY) ** place * (1.0 if on_kind else OFF_KIND)
        if other_thing(read, s.title):
            factor *= OTHER_THING
        without = alone * factor if (n, s.section) in entry else None
        ranked.append(
            Candidate(
                n,
                i,
                s.text,
                score * factor,
                s.section,
                s.row,
                s.item,
                on_kind,
                s.title,
                s.step,
                without,
            )
        )
    # What the question asks beyond all of a sentence's headings: "Residents' parking permits"
    # over "How to apply" says "permit" as much as the entry's own heading would.
    headed = [(s.title, f"{s.scope} {s.title}", terms) for _, _, s, terms in sentences]
    ranked = within_entries(ranked, headed, read, query, idf, _terms)
    return tuple(sorted(ranked, key=lambda c: (-c.score, c.n, c.position)))


def _ranks(question: str, blocks: Mapping[int, str], names: Mapping[int, str]) -> dict[int, int]:
    """Each block's place for the rank decay: retrieval's order, except that a block about
    something the question names (in its headings or its document's name: "Resident plan")
    ranks with the first block above it that never mentions that: the page about the asked
    plan or membership is not decayed below the general page whose price it overrides."""
    order = sorted(blocks)
    rank = {n: i for i, n in enumerate(order)}
    asked = {stem(w.casefold()) for w in subject_words(question)} - _HOW_WORDS
    if not asked or len(order) < 2:
        return rank
    said = {n: _said(blocks[n]) | _terms(name_words(names.get(n, ""))) for n in order}
    about = {
        n: asked & _terms(" ".join([*titles(blocks[n]), name_words(names.get(n, ""))]))
        for n in order
    }
    for i, n in enumerate(order[1:], start=1):
        # Only over a block that is about nothing asked which this one does not say too (a
        # page on sharing a device with the app is not passed by the grinder's cleaning page),
        # nor about more of it ("Seeblick Friends" is not passed by "Rooms and rates" for "As a
        # Seeblick Friends member, what does it cost me to keep my room until 2 pm?").
        above = next(
            (
                j
                for j, m in enumerate(order[:i])
                if about[n] - said[m] and about[m] <= said[n] and len(about[n]) >= len(about[m])
            ),
            None,
        )
        if above is not None:
            rank[n] = above
    return rank


@lru_cache(maxsize=4096)
def _said(text: str) -> frozenset[str]:
    return frozenset(_terms(text))


def _naming(
    question: str, blocks: Mapping[int, str], names: Mapping[int, str]
) -> Mapping[int, str]:
    """The blocks that name the most of the models the question names ("X200"), in their text
    or their document's name; all of them if none names one. A block about the X300 does not
    answer a question about the X200, however alike their sentences."""
    models = model_names(question)
    if not models:
        return blocks
    named = {
        n: sum(names_model(m, text, names.get(n, "")) for m in models) for n, text in blocks.items()
    }
    most = max(named.values(), default=0)
    return blocks if not most else {n: text for n, text in blocks.items() if named[n] == most}
