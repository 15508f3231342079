"""Question-to-question matching: a chunk's FAQ questions, embedded at ingest and stored with
the chunk, so a search can compare the user's question with the questions an entry answers.

A restated question is closer to the entry's own question than to its answer text (the
answer rarely repeats the question's words), so the best cosine of the query to a chunk's
questions is a third retrieval branch (`title`), fused with dense and BM25. Only headings
that ask a question count: a topic heading ("Refund policy") says little about which
questions its text answers. A chunk without a question stands in the branch with its own
dense cosine, so FAQ entries are not favoured merely for having one; with no question among
the candidates the branch is empty and the fusion is dense and BM25 alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..embed.backends import Embedder, Vectors
from ..ingest.chunking import paragraph_spans, pieces
from ..store.database import in_batches

if TYPE_CHECKING:
    from ..store.documents import DocumentStore

_QUESTION_END = ("?", "？")
# A question line is one short sentence: a longer line is prose that ends in a question.
_MAX_QUESTION = 200
_SENTENCE_END = re.compile(r"[.!。！]\s")


def is_question(title: str) -> bool:
    return title.rstrip().endswith(_QUESTION_END)


def chunk_questions(text: str, context: Sequence[str]) -> list[str]:
    """The FAQ questions a chunk answers: the questions heading its text (a heading, or a
    paragraph's first line with the answer on the next: "Q: ...?\nA: ..."), else the
    innermost heading it sits under when that is a question."""
    inner = [" ".join(text[s:e].strip().lstrip("#").split()) for s, e, h in pieces(text) if h]
    for start, end in paragraph_spans(text):
        first, _, rest = text[start:end].partition("\n")
        one = len(first) <= _MAX_QUESTION and not _SENTENCE_END.search(first)
        if rest.strip() and one and is_question(first):
            inner.append(" ".join(first.lstrip("#").split()))
    titles = inner or list(context[-1:])
    return list(dict.fromkeys(t for t in titles if t and is_question(t)))


def embed_questions(embedder: Embedder, per_chunk: Sequence[Sequence[str]]) -> list[Vectors]:
    """Each chunk's question vectors `(k, dim)` (k may be 0), in one model call."""
    unique = list(dict.fromkeys(q for questions in per_chunk for q in questions))
    dim = embedder.dim
    vectors = embedder.embed(unique) if unique else np.zeros((0, dim), np.float32)
    row = {q: i for i, q in enumerate(unique)}
    return [
        vectors[[row[q] for q in questions]] if questions else np.zeros((0, dim), np.float32)
        for questions in per_chunk
    ]


def save_questions(
    store: DocumentStore, model: str, chunk_ids: Sequence[str], vectors: Sequence[Vectors]
) -> None:
    """Store each chunk's question vectors (float16); rows of chunks deleted meanwhile are
    skipped. A chunk with no question gets an empty row: it was looked at."""
    rows = [
        (cid, model, int(v.shape[0]), np.asarray(v, np.float16).tobytes(), cid)
        for cid, v in zip(chunk_ids, vectors, strict=True)
    ]
    with store.transaction() as db:
        db.executemany(
            "INSERT INTO chunk_questions (chunk_id, model, count, vectors) "
            "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?) "
            "ON CONFLICT (chunk_id) DO UPDATE SET model = excluded.model, "
            "count = excluded.count, vectors = excluded.vectors",
            rows,
        )


def any_questions(store: DocumentStore, model: str) -> bool:
    """Whether any chunk has a question embedded by `model` (an index seek, ~30 us): if none
    has, a search skips looking its candidates up."""
    query = "SELECT 1 FROM chunk_questions WHERE model = ? AND count > 0 LIMIT 1"
    return store.connection().execute(query, (model,)).fetchone() is not None


def load_questions(
    store: DocumentStore, chunk_ids: Sequence[str], model: str, dim: int
) -> dict[str, Vectors]:
    """Stored question vectors `(k, dim)` float32 of the chunks that have at least one."""
    found: dict[str, Vectors] = {}
    db = store.connection()
    for batch, marks in in_batches(chunk_ids):
        query = (
            "SELECT chunk_id, count, vectors FROM chunk_questions "
            f"WHERE model = ? AND count > 0 AND chunk_id IN ({marks})"
        )
        for chunk_id, count, blob in db.execute(query, (model, *batch)):
            matrix = np.frombuffer(blob, dtype=np.float16)
            if matrix.size == int(count) * dim:
                found[chunk_id] = matrix.reshape(int(count), dim).astype(np.float32)
    return found


def question_hits(
    query: Vectors, vectors: Mapping[str, Vectors], dense: Sequence[tuple[str, float]]
) -> list[tuple[str, float]]:
    """The `title` branch: each chunk's best cosine of `query` to one of its questions, else
    its dense score; empty when no chunk has a question."""
    if not vectors:
        return []
    hits = [(cid, float(np.max(matrix @ query))) for cid, matrix in vectors.items()]
    return hits + [(cid, score) for cid, score in dense if cid not in vectors]
