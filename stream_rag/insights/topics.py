"""Questions grouped by topic: greedy clustering of their vectors (an embedder's, or word
counts without one), each group named by the words its questions share most."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# Cosine similarity a question needs to its group's centroid to join it.
EMBEDDED_JOIN = 0.55
WORDS_JOIN = 0.3
_WORD = re.compile(r"[^\W\d_]{3,}")
# Words that name no topic, in the languages the widget ships (English, German).
_STOP = frozenset(
    """
    about after also and any are can could did does doing for from get has have how into
    its just may might much must not now off one our out over own should some such than
    that the their them then there these they this those through too under use using very
    was way what when where which while who whom why will with would you your yours
    auf aus bei bin bis das dass dem den der des die ein eine einem einen einer eines für
    gibt hat ich ihr ist kann mit nach nicht oder sie sind und von was wie wir zum zur
    """.split()
)

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Topic:
    label: str
    questions: tuple[str, ...]

    def data(self) -> dict[str, object]:
        return {
            "label": self.label,
            "count": len(self.questions),
            "questions": list(self.questions),
        }


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def word_vectors(texts: Sequence[str]) -> Vectors:
    """L2-normalised bag-of-words vectors over the texts' own vocabulary."""
    vocabulary: dict[str, int] = {}
    rows = [Counter(words(t)) for t in texts]
    for row in rows:
        for word in row:
            vocabulary.setdefault(word, len(vocabulary))
    matrix = np.zeros((len(texts), max(len(vocabulary), 1)), dtype=np.float32)
    for i, row in enumerate(rows):
        for word, count in row.items():
            matrix[i, vocabulary[word]] = count
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    normalised: Vectors = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
    return normalised


def cluster(
    questions: Sequence[str],
    embed: Callable[[Sequence[str]], Vectors] | None = None,
    *,
    limit: int = 20,
) -> list[Topic]:
    """Group `questions` (the same text counts once per asking) into at most `limit` topics,
    largest first. `embed` gives L2-normalised vectors; without it, word counts."""
    if not questions:
        return []
    distinct = list(dict.fromkeys(" ".join(q.split()) for q in questions))
    asked = Counter(" ".join(q.split()) for q in questions)
    if embed is not None:
        vectors, join = np.asarray(embed(distinct), dtype=np.float32), EMBEDDED_JOIN
    else:
        vectors, join = word_vectors(distinct), WORDS_JOIN
    sums: list[Vectors] = []
    members: list[list[int]] = []
    for i, vector in enumerate(vectors):
        best, best_score = -1, join
        for g, total in enumerate(sums):
            norm = float(np.linalg.norm(total))
            score = float(vector @ total) / norm if norm else 0.0
            if score >= best_score:
                best, best_score = g, score
        if best < 0:
            sums.append(vector.copy())
            members.append([i])
        else:
            sums[best] += vector
            members[best].append(i)
    topics = []
    for group in members:
        texts = [distinct[i] for i in group]
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(list(dict.fromkeys(words(text))))  # once a question, first seen first
        label = ", ".join(w for w, _ in counts.most_common(3)) or texts[0][:40]
        repeated = tuple(t for t in texts for _ in range(asked[t]))
        topics.append(Topic(label, repeated))
    topics.sort(key=lambda t: (-len(t.questions), t.label))
    return topics[:limit]
