"""The local extractive generator: answers by quoting sentences of the issued blocks, each
followed by its block's `[n]`. Deterministic; no generative model. Also the source of faithful
sentences for the fake OpenAI server.

It answers from the best-supported block first: every quotable sentence is scored by what the
question asks (dense similarity to the question when an embedder is given, IDF-weighted term
overlap, and the block's retrieval rank), the block with the best sentences wins, and the answer
is that block's best sentences in their own order, so it reads as one passage rather than a
mix of entries. A block holding several entries (an FAQ's headings) is quoted from the entry of
its best sentence: its neighbours are worded alike and answer other questions. A question that
asks several things ("the Basic and Pro plans", "... and how long does delivery take?",
`asks.py`) is answered so for each, one after the other (`compose`).
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import pairwise

import anyio
import anyio.lowlevel
import anyio.to_thread
import numpy as np

from ..embed.backends import Embedder, Vectors
from ..ingest.chunking import pieces, sentence_spans
from ..language.asks import asks
from ..language.coverage import has_word, name_words, own_words, uncovered
from ..language.followups import resolve
from ..language.terms import NEGATION, NEGATION_CUE, model_names, names_model, stem
from ..prompt_format import HEADER_RE, parse_blocks, parse_history, parse_question
from ..text import tokenize
from ..types import Message
from .tables import Table

NO_ANSWER = "The sources do not answer this question."
_TOKEN = re.compile(r"\S+\s*")
_LIST_MARK = re.compile(r"^(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|(?:A|Answer)\s*:\s+)")
# A sentence opening with one of these goes on from the one before it: keep them together.
_CONTINUES = re.compile(
    r"^(?:it|its|this|that|these|those|they|them|then|there|otherwise|also|however|to do so|"
    r"if so|in that case|after that|for example)\b",
    re.IGNORECASE,
)
# The block at rank n is worth (1 - RANK_DECAY) ** (n - 1) of the first: retrieval, which
# matches the question against each entry's own question too, says more than the
# generator's own sentence scores (0.12 quoted the second block for 5 of 94 dev questions).
RANK_DECAY = 0.25
DENSE_WEIGHT = 0.6
DENSE_BLOCKS = 5  # with dense scoring, only the top blocks are candidates (cost bound)
TITLE_WEIGHT = 0.5  # an FAQ entry's question says best what its sentences answer
RESTATES = 0.8  # a sentence holding this share of the question's terms, and little else
# A sentence under another heading of the chosen block is quoted only when it scores this share
# of the best one: a question asking two things ("what does it cost and how much storage?").
# The sentences of neighbouring FAQ entries that merely share words score 0.5-0.7 of it.
OTHER_SECTION = 0.85

# Fewer words than this (BM25 tokens, stop words out) is a fragment ("See below."); two is an
# instruction ("Do not use solvents.", "Keep it dry.").
MIN_TOKENS = 2

Scorer = Callable[[str, Sequence[str]], Sequence[float]]
Known = Callable[[str], Vectors | None]  # a vector embedded elsewhere (the retrieval query)


@dataclass(frozen=True, slots=True)
class Candidate:
    n: int
    position: int
    text: str
    score: float
    section: int = 0  # which heading of the block it sits under (0: before any), or which row
    row: bool = False  # a table row: quoted alone, its neighbours are other entries


def _terms(text: str) -> set[str]:
    return {stem(t) for t in tokenize(text)}


def titles(text: str) -> list[str]:
    """The block's headings and question lines: what the entry says it is about."""
    return [" ".join(text[s:e].strip().lstrip("#").split()) for s, e, h in pieces(text) if h]


def block_sentences(text: str) -> list[str]:
    """Sentences of a block fit to quote: no headings, questions, list markers or fragments."""
    return [sentence for sentence, _ in sections(text)]


def sections(text: str, title: str = "") -> list[tuple[str, str]]:
    """Each quotable sentence with the heading it sits under (`title` before any heading)."""
    return [(sentence, heading) for sentence, heading, _, _ in _sectioned(text, title)]


def _sectioned(text: str, title: str) -> list[tuple[str, str, int, bool]]:
    """`sections`, each sentence also with its section (the ordinal of its heading in the block;
    each table row one of its own) and whether it is a table row."""
    out: list[tuple[str, str, int, bool]] = []
    section = 0
    table = Table()
    for p_start, p_end, heading in pieces(text):
        if heading:
            title = " ".join(text[p_start:p_end].strip().lstrip("#").split())
            section += 1
            table.reset()
            continue
        rows = table.read(text[p_start:p_end].split("\n"))
        if rows is not None:
            for row in rows:
                if len(tokenize(row)) >= MIN_TOKENS:
                    section += 1
                    out.append((row, title, section, True))
            continue
        if table.header is not None:  # the text after a table is not the last row's
            section += 1
        table.reset()
        for s_start, s_end in sentence_spans(text, p_start, p_end):
            sentence = _LIST_MARK.sub("", " ".join(text[s_start:s_end].split()))
            if len(tokenize(sentence)) >= MIN_TOKENS and sentence[-1:] in ".!。！":
                out.append((sentence, title, section, False))
    return out


@lru_cache(maxsize=4096)
def _quotable(
    text: str, title: str
) -> tuple[tuple[str, str, frozenset[str], int, bool, frozenset[str]], ...]:
    """`_sectioned` with each sentence's terms, and those terms with NEGATION if it negates
    (for `restates`), kept per block: the same blocks come back for question after question,
    and splitting and stemming them was most of an answer's CPU (the fake model's too, on the
    cores it shares with what it load-tests)."""
    out = []
    for s, t, k, r in _sectioned(text, title):
        terms = frozenset(_terms(s))
        out.append((s, t, terms, k, r, terms | {NEGATION} if _negates(s) else terms))
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
) -> list[Candidate]:
    """Every quotable sentence, scored by how well it and the heading it sits under (else its
    document's name) match the question, dense and lexical, and by its block's rank."""
    query = _terms(question)
    asked = query | {NEGATION} if _negates(question) else query
    blocks = _naming(question, blocks, names or {})
    rank = {n: i for i, n in enumerate(sorted(blocks))}  # among the blocks left: 0, 1, ...
    sentences: list[tuple[int, int, str, frozenset[str], str]] = []
    section_of: dict[tuple[int, int], tuple[int, bool]] = {}
    if dense is not None:  # each new sentence costs an embedding; lower blocks rarely win
        blocks = {n: text for n, text in blocks.items() if n <= DENSE_BLOCKS}
    for n, text in blocks.items():
        name = name_words((names or {}).get(n, ""))
        for i, (sentence, title, terms, section, row, said) in enumerate(_quotable(text, name)):
            if not restates(asked, said):
                sentences.append((n, i, sentence, terms, title))
                section_of[n, i] = section, row
    if not sentences:
        return []
    heads = sorted({title for *_, title in sentences if title})
    df: dict[str, int] = {}
    for *_, terms, _ in sentences:
        for term in terms & query:
            df[term] = df.get(term, 0) + 1
    total = len(sentences)
    idf = {t: math.log(1 + (total - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in query}
    norm = sum(idf.values()) or 1.0

    def lexical(terms: Set[str]) -> float:
        return sum(idf[t] for t in query & terms) / norm

    texts = [s for _, _, s, _, _ in sentences] + heads
    own = [lexical(terms) for *_, terms, _ in sentences] + [lexical(_terms(h)) for h in heads]
    if dense is not None:
        similarity = dense(question, texts)
        own = [
            DENSE_WEIGHT * max(0.0, d) + (1 - DENSE_WEIGHT) * w
            for d, w in zip(similarity, own, strict=True)
        ]
    title_score = dict(zip(heads, own[len(sentences) :], strict=True))
    ranked = []
    for (n, i, sentence, _, title), score in zip(sentences, own, strict=False):
        if title:
            score = (1 - TITLE_WEIGHT) * score + TITLE_WEIGHT * title_score[title]
        weighted = score * (1 - RANK_DECAY) ** rank[n]
        ranked.append(Candidate(n, i, sentence, weighted, *section_of[n, i]))
    return sorted(ranked, key=lambda c: (-c.score, c.n, c.position))


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


def select(
    question: str,
    blocks: Mapping[int, str],
    limit: int = 3,
    min_score: float = 0.15,
    dense: Scorer | None = None,
    names: Mapping[int, str] | None = None,
) -> list[Candidate]:
    """The answer's sentences, from the best-supported block, in that block's order: its best
    sentence, the ones at least half as good, and those that go on from a chosen one."""
    ranked = rank_sentences(question, blocks, dense, names)
    if not ranked or ranked[0].score < min_score:
        return []
    by_block: dict[int, list[Candidate]] = {}
    for candidate in ranked:
        by_block.setdefault(candidate.n, []).append(candidate)

    def support(n: int) -> float:
        scores = [c.score for c in by_block[n]]
        return scores[0] + 0.25 * (scores[1] if len(scores) > 1 else 0.0)

    best = max(by_block, key=lambda n: (support(n), -n))
    own = sorted(by_block[best], key=lambda c: c.position)
    top = by_block[best][0]
    floor = max(min_score, top.score / 2)
    chosen = {top.position}
    for candidate in by_block[best][1:]:
        bar = floor if candidate.section == top.section else top.score * OTHER_SECTION
        if candidate.row and candidate.section != top.section:
            continue  # another row of a table: as alike as rows are, it answers something else
        if candidate.score >= bar and len(chosen) < limit:
            chosen.add(candidate.position)
    for before, after in pairwise(own):
        follows = (
            after.position == before.position + 1
            and after.section == before.section
            and _CONTINUES.match(after.text) is not None
        )
        if before.position in chosen and follows and len(chosen) < limit:
            chosen.add(after.position)
    return [c for c in own if c.position in chosen]


def compose(
    question: str,
    blocks: Mapping[int, str],
    limit: int = 3,
    min_score: float = 0.15,
    dense: Scorer | None = None,
    names: Mapping[int, str] | None = None,
) -> list[Candidate]:
    """`select` for each thing the question asks (`asks`), in its order, when two or more are
    answered: "the Basic and Pro plans" from the Basic plan's block and the Pro plan's, each
    sentence cited to its own. A part is answered only when most of the words it asks and the
    others do not are in some block, one of them is in its answer's block ("how much does
    a gym cost?" beside the opening hours is not answered with the meeting rooms' prices), and
    every name it asks about ("the Basic plan") is in some block. When one part is answered
    and another was left out so, that part's answer is the answer; else the question is
    answered as one, by `select`."""
    parts = asks(question)
    if len(parts) < 2:
        return select(question, blocks, limit, min_score, dense, names)
    words = own_words(parts)
    answered: list[list[Candidate]] = []
    # A name is in a block's text or its document's name ("kestrel-pricing.md").
    titled = [f"{text}\n{name_words((names or {}).get(n, ''))}" for n, text in blocks.items()]
    # Parts no block covers ("... and is there a gym?"), or that ask nothing the others do not.
    skipped = set(uncovered(parts, list(blocks.values()), titled)) | {
        i for i, own in enumerate(words) if not own
    }
    for i, part in enumerate(parts):
        if i in skipped:
            continue
        own = words[i]
        chosen = select(part, blocks, limit, min_score, dense, names)
        if chosen and any(has_word(blocks[n], w) for n in {c.n for c in chosen} for w in own):
            answered.append(chosen)
    if len(answered) == 1 and skipped:
        return answered[0]  # the part the blocks answer, not the question as one
    if len(answered) < 2:
        return select(question, blocks, limit, min_score, dense, names)
    out: dict[tuple[int, int], Candidate] = {}
    for chosen in answered:
        for candidate in chosen:
            out.setdefault((candidate.n, candidate.position), candidate)
    return list(out.values())[: limit * 2]


def tokens_of(text: str) -> list[str]:
    """Split text into word-sized pieces, as a model would stream it."""
    return _TOKEN.findall(text)


class SentenceVectors:
    """Dense similarity of sentences to a question, with vectors cached by text: a knowledge
    base's sentences recur across questions, and embedding them costs ~10 ms each on a CPU."""

    def __init__(
        self, embedder: Embedder, capacity: int = 20000, *, known: Known | None = None
    ) -> None:
        self.embedder = embedder
        self.capacity = capacity
        self.known = known
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def prefill(self, texts: Sequence[str]) -> None:
        """Embed `texts` not yet cached, while the cache has room (never evicting for it)."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            missing = missing[: max(0, self.capacity - len(self._cache))]
        if missing:
            vectors = self.embedder.embed(missing)
            with self._lock:
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache.setdefault(text, vector)

    def __call__(self, question: str, sentences: Sequence[str]) -> list[float]:
        asked = self.known(question) if self.known is not None else None
        texts = list(sentences) if asked is not None else [question, *sentences]
        with self._lock:
            known = {t: v for t in texts if (v := self._cache.get(t)) is not None}
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:  # embedded outside the lock: answers in other threads need not wait
            known.update(zip(missing, self.embedder.embed(missing), strict=True))
        with self._lock:
            for text in texts:
                self._cache[text] = known[text]
                self._cache.move_to_end(text)
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
        query = asked if asked is not None else known[question]
        if not sentences:
            return []
        return [float(x) for x in np.stack([known[t] for t in sentences]) @ query]


class ExtractiveModel:
    """The default generator when no model endpoint is configured."""

    name = "local-extractive"

    def __init__(
        self, sentences: int = 3, *, embedder: Embedder | None = None, known: Known | None = None
    ) -> None:
        self.sentences = sentences
        self.dense = SentenceVectors(embedder, known=known) if embedder is not None else None

    def warm(self, name: str, texts: Sequence[str]) -> None:
        """Embed the sentences and headings of newly indexed chunks (blocking; the indexer
        calls it), so a first question about them does not wait for that."""
        if self.dense is None:
            return
        title = name_words(name)
        wanted: list[str] = [title] if title else []
        for text in texts:
            for sentence, heading in sections(text, title):
                wanted.extend((sentence, heading) if heading else (sentence,))
        self.dense.prefill(wanted)

    def answer(self, prompt: str) -> str:
        """The whole answer for a prompt made by `build_messages` (blocking: it may embed)."""
        names = {int(m.group(1)): m.group(2) for m in HEADER_RE.finditer(prompt)}
        question = resolve(parse_question(prompt), parse_history(prompt))
        chosen = compose(
            question,
            parse_blocks(prompt),
            self.sentences,
            dense=self.dense,
            names=names,
        )
        return " ".join(f"{c.text} [{c.n}]" for c in chosen) if chosen else NO_ANSWER

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        prompt = next((m.content for m in messages if m.role == "user"), "")
        answer = await anyio.to_thread.run_sync(partial(self.answer, prompt))
        for token in tokens_of(answer):
            yield token
            await anyio.lowlevel.checkpoint()  # a cooperative stream: let other answers progress
