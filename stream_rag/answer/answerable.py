"""Whether the retrieved blocks answer what was asked, before any model is called: a block can
be on the question's topic and still answer something else ("How long is someone with mumps
infectious?" over the chickenpox entry's infectious period, "What is the fine for parking
without a permit?" over the permit prices). Such a question is refused as `not_answered`,
naming what the knowledge base does cover nearby, instead of quoting a near miss.

The candidate sentences are ranked as the local generator ranks them (`passages.rank_sentences`,
the question's kind included), and the best one's entry (its heading and the sentences under
it, its document's name) is read against the question (`Reading`):

- `missing`: subject words of the question that the entry lacks while another retrieved block
  has them: the knowledge base speaks of "mumps" elsewhere, this entry does not;
- `on_kind`: whether a sentence good enough to quote states the kind of answer the question
  wants (a duration for "how long", an amount for "how much").

- `unfound`: nouns the question asks about (`Question.focus`) that no retrieved block has, nor
  a word alike: "Is there a hairdresser at the hotel?" over entries about rooms and dogs.

A question is not answered when its best entry is worded as the question but of another
subject, when it asks about something no retrieved block speaks of, or when it wants a value
and no good sentence states one. A paraphrase of what an
entry says misses no word the knowledge base has elsewhere and finds its value, so it is
answered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..events import Refusal
from ..language import wordclass
from ..language.coverage import derived, name_words
from ..language.followups import carried, subject_words
from ..language.question import Question
from ..language.terms import stem
from ..model.passages import Candidate, Scorer, rank_sentences, sections
from ..retrieve.hybrid import Block
from ..text import tokenize

__all__ = [
    "ASKING_WORDS",
    "Reading",
    "answering_order",
    "focus_alike",
    "naming_words",
    "not_answered",
    "only_noun",
    "read_blocks",
    "text_terms",
]

NOT_ANSWERED = (
    "The knowledge base does not answer this question, so I am not answering. "
    "It covers nearby: {nearby}."
)
# A sentence scoring this share of the best one is good enough to quote (as `select` quotes).
GOOD = 0.5
_NEARBY = 3  # headings named in the refusal
# Two nouns this alike (cosine of the words alone) name one thing in other words ("delivery",
# "shipping" 0.69; "pet", "dog" 0.80), not two subjects ("mumps", "chickenpox" 0.35).
ALIKE = 0.5
# A noun the question asks about this alike a word of the retrieved blocks (cosine of the words
# alone) may be that word in the customer's own words; under it, nothing retrieved speaks of it.
# Chosen in folds grouped by knowledge base (docs/decisions/not-answered-asked-about-nowhere.md).
FOCUS_ALIKE = 0.45
# Words of a question that say how it asks or who asks, not what about.
ASKING_WORDS = frozenset(
    "i me my we our you your us they them their it its he she his her someone somebody person "
    "people anyone anybody thing things something get got give given take make need want like "
    "know tell help please able one also just still much many long often soon later ago old "
    "new way ways time times day days week weeks month months year years there here yes no ok "
    "usually normally really go going come coming back".split()
)


@dataclass(frozen=True, slots=True)
class Reading:
    """The question read against its best entry."""

    top: Candidate | None
    missing: tuple[str, ...]  # subject words the entry lacks that another block has
    on_kind: bool  # a good sentence states the kind of answer wanted (True: none wanted)
    nearby: tuple[str, ...]  # the headings of the best entries, what the KB covers nearby
    # The entry asks the question of another subject: (the question's noun it lacks, the
    # entry's noun the question lacks), e.g. ("mumps", "chickenpox"); empty when it does not.
    swapped: tuple[str, ...] = ()
    # Nouns the question asks about that no retrieved block has, nor a word alike ("hairdresser").
    unfound: tuple[str, ...] = ()

    @property
    def answered(self) -> bool:
        # `missing` is reported, not decisive: a generic entry ("pairing a device with the
        # app") answers a question naming a product it does not (dev sets: 16 of 79 Kestrel
        # questions were refused so). `swapped` is decisive: the entry is worded as the
        # question but of something else; so is `unfound`: nothing retrieved speaks of it.
        return self.top is not None and self.on_kind and not self.swapped and not self.unfound


def read_blocks(asked: Question, blocks: Sequence[Block], dense: Scorer | None) -> Reading:
    """`asked` read against the best entry of `blocks` (ranked as the generator ranks them)."""
    texts = {b.n: b.framed for b in blocks}
    names = {b.n: b.name for b in blocks}
    ranked = rank_sentences(asked.text, texts, dense, names, {b.n: b.doc_id for b in blocks})
    nearby = _nearby(ranked)
    if not ranked:
        return Reading(None, (), True, nearby)
    top = ranked[0]
    good = [c for c in ranked if c.alone >= GOOD * top.alone]
    on_kind = not asked.asks_value or any(c.on_kind for c in good)
    entry = text_terms(texts[top.n]) | text_terms(name_words(names[top.n]))
    elsewhere: set[str] = set()
    for block in blocks:
        if block.n != top.n:
            elsewhere |= text_terms(block.framed)
    missing = []
    for word in subject_words(asked.text):
        term = stem(word.casefold())
        if term in ASKING_WORDS or len(term) < 3 or not only_noun(word):
            continue
        if term in entry or derived(term, frozenset(entry)):
            continue
        if term in elsewhere or derived(term, frozenset(elsewhere)):
            missing.append(word)
    one = len(asked.parts) < 2
    swapped = _swapped(asked, top, texts[top.n], names[top.n], dense) if one else ()
    unfound = _unfound(asked, blocks, dense) if one else ()
    return Reading(top, tuple(missing), on_kind, nearby, swapped, unfound)


def _unfound(asked: Question, blocks: Sequence[Block], dense: Scorer | None) -> tuple[str, ...]:
    """The question's focus nouns no block has that are alike none of their words (cosine
    under `FOCUS_ALIKE`): nothing retrieved speaks of them."""
    return tuple(word for word, alike in focus_alike(asked, blocks, dense) if alike < FOCUS_ALIKE)


def focus_alike(
    asked: Question, blocks: Sequence[Block], dense: Scorer | None
) -> tuple[tuple[str, float], ...]:
    """Each noun heading the question's phrases (`Question.focus`; words that can only be
    nouns) that no block has, in its text, its headings or its document's name, with its best
    cosine to their words. Empty with no embedder or in another language than English."""
    if dense is None or not asked.focus or asked.language not in (None, "en"):
        return ()
    before = {stem(w.casefold()) for w in carried(asked.text)}
    have: set[str] = set()
    for block in blocks:
        have |= text_terms(block.framed) | text_terms(name_words(block.name))
    known = frozenset(have)
    out: list[tuple[str, float]] = []
    for word in asked.focus:
        term = stem(word.casefold())
        if term in ASKING_WORDS or len(term) < 3 or term in before or not only_noun(word):
            continue
        if term in known or derived(term, known):
            continue
        # The blocks' words are embedded only once a focus noun is missing from all of them.
        said = naming_words(tuple(f"{b.framed} {name_words(b.name)}" for b in blocks))
        out.append((word, float(max(dense(word, said))) if said else 0.0))
    return tuple(out)


@lru_cache(maxsize=1024)
def naming_words(texts: tuple[str, ...]) -> tuple[str, ...]:
    """The blocks' words that may name something (stop and asking words out), each once."""
    words = (w for text in texts for w in tokenize(text))
    return tuple(dict.fromkeys(w for w in words if len(w) >= 3 and stem(w) not in ASKING_WORDS))


def _swapped(
    asked: Question, top: Candidate, text: str, name: str, dense: Scorer | None
) -> tuple[str, ...]:
    """The question's one word the answering entry lacks (its heading, sentences, document
    name), a noun, when the entry's heading or document name holds a noun the question lacks,
    the two share two or more other words, and the two nouns are not alike (cosine under
    `ALIKE`): the entry asks the same thing of another subject ("How long is someone with mumps
    infectious?" over chickenpox.md's "How long is someone infectious?"), not in other words
    ("free delivery" over "free shipping"). Empty when not so, or with no embedder."""
    title = name_words(name)
    entry = text_terms(title) | text_terms(top.title)
    for sentence, heading, _ in sections(text, title):
        if heading == top.title:
            entry |= text_terms(sentence)
    heads = {t for t in text_terms(f"{top.title} {title}") if t not in ASKING_WORDS}
    # A follow-up's words carried from the turn before ("kettle" into "What about the
    # blender?") are not what it asks of this entry.
    before = {stem(w.casefold()) for w in carried(asked.text)}
    asked_terms = {t for t in asked.terms if t not in ASKING_WORDS and t not in before}
    if dense is None or len(heads & asked_terms) < 2:
        return ()
    own = frozenset(entry)
    extra = [t for t in asked_terms if t not in own and not derived(t, own)]
    lacking = [
        w
        for w in asked.subject
        if (t := stem(w.casefold())) in extra and len(t) >= 3 and only_noun(w)
    ]
    if len(extra) != 1 or len(lacking) != 1:
        return ()  # the entry lacks more of the question than one subject: not a swap
    said = {stem(w.casefold()) for w in asked.subject}
    other = [
        w
        for w in subject_words(f"{top.title} {title}")
        if (t := stem(w.casefold())) not in ASKING_WORDS
        and len(t) >= 3
        and t not in said
        and not derived(t, frozenset(said))
    ]
    nouns = [w for w in other if only_noun(w)]
    # Alike any word the entry has in its place ("shipping" is a verb's form too) is a paraphrase.
    if not nouns or max(dense(lacking[0], other)) >= ALIKE:
        return ()
    return (lacking[0], nouns[0])


def not_answered(reading: Reading, template: str | None = None) -> Refusal | None:
    """The `not_answered` refusal for a question its best entry does not answer, else None.
    `template` is the team's wording (`STREAM_RAG_NOT_ANSWERED_TEXT`; `{nearby}` is replaced by
    the headings of what the knowledge base covers nearby)."""
    if reading.answered:
        return None
    nearby = "; ".join(reading.nearby) or "nothing close"
    message = (template or NOT_ANSWERED).replace("{nearby}", nearby)
    detail: dict[str, object] = {"nearby": list(reading.nearby), "on_kind": reading.on_kind}
    if reading.missing:
        detail["not_in_entry"] = list(reading.missing)
    if reading.swapped:
        detail["asked_of_other"] = list(reading.swapped)
    if reading.unfound:
        detail["not_found_nearby"] = list(reading.unfound)
    return Refusal("not_answered", message, [detail])


def answering_order(question: str, blocks: Sequence[Block], dense: Scorer | None) -> list[Block]:
    """`blocks` in the order of their best sentence's score as the local generator ranks them
    (the blocks it does not rank after, in retrieval's order): a chat model's prompt offers
    first the block that answers, not the one retrieval liked best. Numbers are unchanged."""
    texts = {b.n: b.framed for b in blocks}
    best: dict[int, float] = {}
    docs = {b.n: b.doc_id for b in blocks}
    for c in rank_sentences(question, texts, dense, {b.n: b.name for b in blocks}, docs):
        best.setdefault(c.n, c.score)
    return sorted(blocks, key=lambda b: (b.n not in best, -best.get(b.n, 0.0), b.n))


@lru_cache(maxsize=8192)
def text_terms(text: str) -> frozenset[str]:
    """Kept per text: the same blocks and their sentences are read for question after question
    (tokenizing them again was ~40% of the check's CPU)."""
    return frozenset(stem(t) for t in tokenize(text))


def _nearby(ranked: Sequence[Candidate]) -> tuple[str, ...]:
    """The headings over the best sentences, best first, each once: what the knowledge base
    covers close to the question."""
    out: list[str] = []
    for c in ranked:
        head = _HEAD_MARK.sub("", c.title).strip()
        if head and head not in out:
            out.append(head)
        if len(out) >= _NEARBY:
            break
    return tuple(out)


_HEAD_MARK = re.compile(r"^(?:Q\s*:\s*)", re.IGNORECASE)


def only_noun(word: str) -> bool:
    """Whether `word` can only be a noun (dictionary lemmas): what a question asks about, not
    how ("pay", "bring", "taken"); a word the dictionary lacks (a name) is the names check's."""
    return word.isascii() and word.isalpha() and wordclass.only_noun(word.casefold())
