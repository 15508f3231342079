"""The local extractive generator: answers by quoting sentences of the issued blocks, each
followed by its block's `[n]`. Deterministic; no generative model. Also the source of faithful
sentences for the fake OpenAI server.

It answers from the best-supported block first: every quotable sentence is scored by what the
question asks (`passages.rank_sentences`), the block with the best sentences wins, and the
answer leads with that block's best sentence, then its other good ones in their own order, so
it reads as one passage rather than a mix of entries. A block holding several entries (an FAQ's
headings) is quoted from the entry of its best sentence: its neighbours are worded alike and
answer other questions. A question that asks several things ("the Basic and Pro plans", "...
and how long does delivery take?", `asks.py`) is answered so for each, one after the other
(`compose`).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from functools import partial
from itertools import pairwise

import anyio
import anyio.lowlevel
import anyio.to_thread
import numpy as np

from ..embed.backends import Embedder, Vectors
from ..language.asks import MAX_ASKS
from ..language.coverage import has_word, name_words, own_words, uncovered
from ..language.followups import resolve
from ..language.question import read_question
from ..prompt_format import HEADER_RE, parse_blocks, parse_history, parse_question
from ..types import Message
from .passages import (
    Candidate,
    Scorer,
    depends,
    entry_texts,
    leads,
    rank_sentences,
    sections,
    speaks_of_heading,
)

NO_ANSWER = "The sources do not answer this question."
_TOKEN = re.compile(r"\S+\s*")
Known = Callable[[str], Vectors | None]  # a vector embedded elsewhere (the retrieval query)
# A sentence under another heading of the chosen block is quoted only when it scores this share
# of the best one: a question asking two things ("what does it cost and how much storage?").
# The sentences of neighbouring FAQ entries that merely share words score 0.5-0.7 of it.
OTHER_SECTION = 0.85
MAX_STEPS = 12  # a procedure's steps quoted past the answer's sentence limit


def select(
    question: str,
    blocks: Mapping[int, str],
    limit: int = 3,
    min_score: float = 0.15,
    dense: Scorer | None = None,
    names: Mapping[int, str] | None = None,
    docs: Mapping[int, str] | None = None,
) -> list[Candidate]:
    """The answer's sentences, from the best-supported block: its best sentence first, then the
    ones at least half as good in the block's order (all in it for "how do I ...?"). A sentence
    going on from the one before it comes with that one; a step comes with its whole list."""
    ranked = _placed(rank_sentences(question, blocks, dense, names, docs))
    if not ranked or ranked[0].score < min_score:
        return []
    by_block: dict[int, list[Candidate]] = {}
    for candidate in ranked:
        by_block.setdefault(candidate.n, []).append(candidate)

    def support(n: int) -> float:
        # The block's best sentence and the next best under the same heading (an FAQ entry's
        # question, a table's rows): a sentence under another answers something else and does
        # not make the passage better ("Can I bill a client in dollars?" went to a billing page
        # of payment methods and add-on prices, over the FAQ entry naming the currencies).
        top, *rest = by_block[n]
        second = next((c.score for c in rest if c.title == top.title), 0.0)
        return top.score + 0.25 * second

    best = max(by_block, key=lambda n: (support(n), -n))
    own = sorted(by_block[best], key=lambda c: c.position)
    at = {c.position: c for c in own}
    top = by_block[best][0]
    floor = max(min_score, top.alone / 2)
    chosen = {top.position}
    how = read_question(question).kind == "steps"
    for candidate in by_block[best][1:]:
        if candidate.step and not how and candidate.item != top.item:
            continue  # a step of a procedure the question does not ask for: not some steps
        bar = floor if candidate.section == top.section else top.alone * OTHER_SECTION
        if candidate.row and candidate.section != top.section:
            continue  # another row of a table: as alike as rows are, it answers something else
        if candidate.step and candidate.item != top.item and candidate.section != top.section:
            continue  # a step of another procedure (an item of a list of facts may answer)
        if candidate.alone >= bar and len(chosen) < limit:
            chosen.add(candidate.position)
    steps = (top.step and top.item) or (
        how and next((at[p].item for p in sorted(chosen) if at[p].item), 0)
    )
    if steps:  # a procedure whole and in order, not its best-scored steps
        chosen |= {c.position for c in own if c.item == steps}
        chosen = {p for p in chosen if not at[p].item or at[p].item == steps}
        return [c for c in own if c.position in chosen][: limit + MAX_STEPS]
    for before, after in pairwise(own):
        follows = (
            after.position == before.position + 1
            and after.section == before.section
            and depends(after.text)
        )
        if follows and before.position in chosen and len(chosen) < limit:
            chosen.add(after.position)
        elif follows and after.position in chosen:
            chosen.add(before.position)  # never alone: "For all other returns, ..."

    def dangles(c: Candidate) -> bool:
        before = at.get(c.position - 1)
        if before is None or before.section != c.section:
            return depends(c.text) and not _headed(c)
        return depends(c.text) and before.position not in chosen

    if how:  # "how do I ...?": what to do reads in its own order
        return [c for c in own if c.position in chosen and not dangles(c)]
    lead = [top.position]
    while lead[0] - 1 in chosen and depends(at[lead[0]].text) and lead[0] - 1 in at:
        if at[lead[0] - 1].section != at[lead[0]].section:
            break
        lead.insert(0, lead[0] - 1)
    rest = [c for c in own if c.position in chosen and c.position not in lead]
    return [at[p] for p in lead] + [c for c in rest if not dangles(c)]


def _headed(c: Candidate) -> bool:
    """A sentence under a heading whose pronoun subject stands for it ("It costs ...")."""
    return c.section > 0 and speaks_of_heading(c.text, c.title)


def _placed(ranked: list[Candidate]) -> list[Candidate]:
    """`ranked` less the sentences that go on from one the block does not hold (a chunk that
    starts mid-paragraph: "They still need a permit ..."): alone they cannot be placed. One
    opening its section with a pronoun for its heading is placed by the heading."""
    held = {(c.n, c.position): c.section for c in ranked}
    return [
        c
        for c in ranked
        if not depends(c.text)
        or held.get((c.n, c.position - 1)) == c.section
        or (_headed(c) and held.get((c.n, c.position - 1)) != c.section)
    ]


def compose(
    question: str,
    blocks: Mapping[int, str],
    limit: int = 3,
    min_score: float = 0.15,
    dense: Scorer | None = None,
    names: Mapping[int, str] | None = None,
    docs: Mapping[int, str] | None = None,
) -> list[Candidate]:
    """`select` for each thing the question asks (`asks`), in its order, when two or more are
    answered: "the Basic and Pro plans" from the Basic plan's block and the Pro plan's, each
    sentence cited to its own. A part is answered only when most of the words it asks and the
    others do not are in some block, one of them is in its answer's block ("how much does
    a gym cost?" beside the opening hours is not answered with the meeting rooms' prices), and
    every name it asks about ("the Basic plan") is in some block. When one part is answered
    and another was left out so, that part's answer is the answer; else the question is
    answered as one, by `select`."""
    parts = list(read_question(question).parts[:MAX_ASKS])
    if len(parts) < 2:
        return select(question, blocks, limit, min_score, dense, names, docs)
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
        chosen = select(part, blocks, limit, min_score, dense, names, docs)
        if chosen and any(has_word(blocks[n], w) for n in {c.n for c in chosen} for w in own):
            answered.append(chosen)
    if len(answered) == 1 and skipped:
        return answered[0]  # the part the blocks answer, not the question as one
    if len(answered) < 2:
        return select(question, blocks, limit, min_score, dense, names, docs)
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
            for sentence, heading, scope in sections(text, title):
                wanted.extend(t for t in (sentence, heading, scope) if t)
            wanted.extend(leads(text, title))
            wanted.extend(entry for _, entry in entry_texts(text, title))
        self.dense.prefill(wanted)

    def answer(self, prompt: str) -> str:
        """The whole answer for a prompt made by `build_messages` (blocking: it may embed)."""
        headers = list(HEADER_RE.finditer(prompt))
        names = {int(m.group(1)): m.group(2) for m in headers}
        question = resolve(parse_question(prompt), parse_history(prompt))
        chosen = compose(
            question,
            parse_blocks(prompt),
            self.sentences,
            dense=self.dense,
            names=names,
            docs={int(m.group(1)): m.group(3) for m in headers},
        )
        return " ".join(f"{c.text} [{c.n}]" for c in chosen) if chosen else NO_ANSWER

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        prompt = next((m.content for m in messages if m.role == "user"), "")
        answer = await anyio.to_thread.run_sync(partial(self.answer, prompt))
        for token in tokens_of(answer):
            yield token
            await anyio.lowlevel.checkpoint()  # a cooperative stream: let other answers progress
