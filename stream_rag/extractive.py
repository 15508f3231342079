"""The local extractive generator: answers by quoting the sentences of the issued blocks
that best match the question, each followed by its block's `[n]`. Deterministic; no model
weights. Also the source of faithful sentences for the fake OpenAI server."""

from __future__ import annotations

import math
import re
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass

import anyio
import anyio.lowlevel

from .chunking import paragraph_spans, sentence_spans
from .prompt import Message, parse_blocks, parse_question
from .text import tokenize

NO_ANSWER = "The sources do not answer this question."
_TOKEN = re.compile(r"\S+\s*")


@dataclass(frozen=True, slots=True)
class Candidate:
    n: int
    position: int
    text: str
    score: float


def block_sentences(text: str) -> list[str]:
    """Sentences of a block fit to quote: no headings, list markers or fragments."""
    out: list[str] = []
    for p_start, p_end in paragraph_spans(text):
        for s_start, s_end in sentence_spans(text, p_start, p_end):
            sentence = " ".join(text[s_start:s_end].split())
            sentence = re.sub(r"^(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+)", "", sentence)
            if len(tokenize(sentence)) >= 3 and sentence[-1:] in ".!?。！？":
                out.append(sentence)
    return out


def rank_sentences(question: str, blocks: Mapping[int, str]) -> list[Candidate]:
    """Every quotable sentence, scored by IDF-weighted overlap with the question."""
    sentences = [
        (n, i, s) for n, text in blocks.items() for i, s in enumerate(block_sentences(text))
    ]
    token_sets = [set(tokenize(s)) for _, _, s in sentences]
    df: dict[str, int] = {}
    for tokens in token_sets:
        for token in tokens:
            df[token] = df.get(token, 0) + 1
    total = max(len(sentences), 1)
    query = set(tokenize(question))
    idf = {t: math.log(1 + (total - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in query}
    norm = sum(idf.values()) or 1.0
    ranked = [
        Candidate(n, i, s, sum(idf[t] for t in query & tokens) / norm * (1 - 0.03 * (n - 1)))
        for (n, i, s), tokens in zip(sentences, token_sets, strict=True)
    ]
    return sorted(ranked, key=lambda c: (-c.score, c.n, c.position))


def select(
    question: str, blocks: Mapping[int, str], limit: int = 3, min_score: float = 0.15
) -> list[Candidate]:
    """The best sentences: at least `min_score`, and at least half as good as the best one,
    so a strong answer is not padded with loosely related sentences."""
    ranked = rank_sentences(question, blocks)
    floor = max(min_score, ranked[0].score / 2) if ranked else min_score
    chosen = [c for c in ranked if c.score >= floor][:limit]
    return sorted(chosen, key=lambda c: (c.n, c.position))


def tokens_of(text: str) -> list[str]:
    """Split text into word-sized pieces, as a model would stream it."""
    return _TOKEN.findall(text)


class ExtractiveModel:
    """The default generator when no model endpoint is configured."""

    name = "local-extractive"

    def __init__(self, sentences: int = 3) -> None:
        self.sentences = sentences

    async def stream(self, messages: Sequence[Message]) -> AsyncGenerator[str, None]:
        prompt = next((m.content for m in messages if m.role == "user"), "")
        chosen = select(parse_question(prompt), parse_blocks(prompt), self.sentences)
        answer = " ".join(f"{c.text} [{c.n}]" for c in chosen) if chosen else NO_ANSWER
        for token in tokens_of(answer):
            yield token
            await anyio.lowlevel.checkpoint()  # a cooperative stream: let other answers progress
