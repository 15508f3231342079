"""What indexing reads and writes in the store: versions' status and their durable jobs,
BM25 token counts, and data derived per chunk (features, the gate's sentence vectors)."""

from __future__ import annotations

from collections.abc import Sequence

from ..types import Chunk
from .database import Database, in_batches
from .records import chunk_of, utc_now

# (chunk_id, model, spans_json, dim, vectors, token_counts_json, token_dims, tokens)
SentenceVectorRow = tuple[str, str, str, int, bytes, str | None, int | None, bytes | None]


class IndexingState(Database):
    """The indexing side of `DocumentStore` (which adds documents, versions and bytes)."""

    def set_ready(self, doc_id: str, version: int, tokens: int, chunks: int) -> int | None:
        """Mark a version indexed (with its BM25 token count) and make it live if it is the
        newest indexed one. Returns the live version, or None if the document is gone."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT live_version FROM documents WHERE id = ?", (doc_id,)
            ).fetchone()
            exists = db.execute(
                "SELECT 1 FROM versions WHERE doc_id = ? AND version = ?", (doc_id, version)
            ).fetchone()
            if row is None or exists is None:
                return None
            live = max(int(row["live_version"] or 0), version)
            db.execute(
                "UPDATE versions SET status = 'ready', status_reason = NULL, bm25_tokens = ? "
                "WHERE doc_id = ? AND version = ?",
                (tokens, doc_id, version),
            )
            db.execute("UPDATE documents SET live_version = ? WHERE id = ?", (live, doc_id))
            db.execute("DELETE FROM jobs WHERE doc_id = ? AND version = ?", (doc_id, version))
            return live

    def set_failed(self, doc_id: str, version: int, reason: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE versions SET status = 'failed', status_reason = ? "
                "WHERE doc_id = ? AND version = ?",
                (reason, doc_id, version),
            )
            db.execute("DELETE FROM jobs WHERE doc_id = ? AND version = ?", (doc_id, version))

    def set_indexing(self, keys: list[tuple[str, int]]) -> None:
        """Mark versions for (re)indexing and queue their jobs, durably."""
        now = utc_now()
        with self._transaction() as db:
            db.executemany(
                "UPDATE versions SET status = 'indexing', status_reason = NULL "
                "WHERE doc_id = ? AND version = ?",
                keys,
            )
            db.executemany(
                "INSERT INTO jobs (doc_id, version, created_at) "
                "SELECT doc_id, version, ? FROM versions WHERE doc_id = ? AND version = ? "
                "ON CONFLICT DO NOTHING",
                [(now, d, v) for d, v in keys],
            )

    def pending(self) -> list[tuple[str, int]]:
        """Versions waiting to be indexed, oldest first: the queued jobs, and versions an
        older release left `indexing` without one (`Indexer.reconcile` queues those)."""
        rows = self._db().execute(
            "SELECT doc_id, version, min(created_at) FROM (SELECT doc_id, version, created_at "
            "FROM jobs UNION ALL SELECT doc_id, version, created_at FROM versions "
            "WHERE status = 'indexing') GROUP BY doc_id, version ORDER BY 3, 1, 2"
        )
        return [(r[0], r[1]) for r in rows]

    def chunk_batch(self, doc_id: str, version: int, offset: int, limit: int) -> list[Chunk]:
        """Chunks `offset` .. `offset + limit` of a version (none once it is deleted)."""
        rows = self._db().execute(
            "SELECT * FROM chunks WHERE doc_id = ? AND version = ? AND ordinal >= ? "
            "ORDER BY ordinal LIMIT ?",
            (doc_id, version, offset, limit),
        )
        return [chunk_of(row) for row in rows]

    def newest_versions(self) -> list[tuple[str, int]]:
        """Every document's newest version: what a full re-index must index."""
        rows = (
            self._db()
            .execute(
                "SELECT doc_id, max(version) AS version FROM versions GROUP BY doc_id "
                "ORDER BY doc_id"
            )
            .fetchall()
        )
        return [(r["doc_id"], r["version"]) for r in rows]

    def live_chunk_ids(self) -> dict[str, tuple[str, int]]:
        """Every chunk of a live version: chunk id -> (doc_id, version)."""
        rows = self._db().execute(
            "SELECT c.id, c.doc_id, c.version FROM chunks c JOIN documents d "
            "ON d.id = c.doc_id AND d.live_version = c.version"
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def versions_with_status(self, status: str) -> set[tuple[str, int]]:
        rows = self._db().execute(
            "SELECT doc_id, version FROM versions WHERE status = ?", (status,)
        )
        return {(r[0], r[1]) for r in rows}

    def live_without_bm25_tokens(self) -> list[tuple[str, int]]:
        """Live versions indexed before token counts were kept per version."""
        rows = self._db().execute(
            "SELECT v.doc_id, v.version FROM versions v JOIN documents d "
            "ON d.id = v.doc_id AND d.live_version = v.version "
            "WHERE v.bm25_tokens IS NULL ORDER BY v.doc_id"
        )
        return [(r[0], r[1]) for r in rows]

    def set_bm25_tokens(self, doc_id: str, version: int, tokens: int) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE versions SET bm25_tokens = ? WHERE doc_id = ? AND version = ?",
                (tokens, doc_id, version),
            )

    def bm25_average_length(self, extra_tokens: int = 0, extra_chunks: int = 0) -> float:
        """Mean tokens per live chunk, counting a batch about to be indexed. Derived from the
        live versions each time, so deletes and superseded versions never skew it."""
        tokens, chunks = self.bm25_totals()
        tokens, chunks = tokens + extra_tokens, chunks + extra_chunks
        return tokens / chunks if chunks else 1.0

    def bm25_totals(self) -> tuple[int, int]:
        """(tokens, chunks) over live versions whose token count is known."""
        row = (
            self._db()
            .execute(
                "SELECT coalesce(sum(v.bm25_tokens), 0), coalesce(sum(v.chunk_count), 0) "
                "FROM versions v JOIN documents d "
                "ON d.id = v.doc_id AND d.live_version = v.version "
                "WHERE v.bm25_tokens IS NOT NULL"
            )
            .fetchone()
        )
        return int(row[0]), int(row[1])

    def chunk_features(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """Stored features (`features.ChunkFeatures` as JSON) of the chunks that have them."""
        found: dict[str, str] = {}
        for batch, marks in in_batches(chunk_ids):
            query = f"SELECT chunk_id, data FROM chunk_features WHERE chunk_id IN ({marks})"
            for row in self._db().execute(query, batch):
                found[row["chunk_id"]] = row["data"]
        return found

    def set_chunk_features(self, rows: Sequence[tuple[str, str]]) -> None:
        """Store (chunk id, features JSON) pairs; rows of chunks deleted meanwhile are skipped."""
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO chunk_features (chunk_id, data) "
                "SELECT ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?) "
                "ON CONFLICT (chunk_id) DO UPDATE SET data = excluded.data",
                [(cid, data, cid) for cid, data in rows],
            )

    def save_sentence_vectors(self, rows: Sequence[SentenceVectorRow]) -> None:
        """Store `(chunk_id, model, spans_json, dim, float16 bytes, token_counts_json,
        token_dims, int8 bytes)` rows (the gate's semantic stage; see embed/sentences.py; the
        token columns may be None). Rows of chunks deleted meanwhile are skipped."""
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO chunk_sentence_vectors "
                "(chunk_id, model, spans, dim, vectors, token_counts, token_dims, tokens) "
                "SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?) "
                "ON CONFLICT (chunk_id) DO UPDATE SET model = excluded.model, "
                "spans = excluded.spans, dim = excluded.dim, vectors = excluded.vectors, "
                "token_counts = excluded.token_counts, token_dims = excluded.token_dims, "
                "tokens = excluded.tokens",
                [(*row, row[0]) for row in rows],
            )

    def sentence_vectors(
        self, chunk_ids: Sequence[str], model: str
    ) -> dict[str, tuple[str, int, bytes, tuple[str, int, bytes] | None]]:
        """chunk id -> `(spans_json, dim, bytes, tokens)` of the chunks that have vectors of
        `model`; `tokens` is `(counts_json, dims, int8 bytes)`, or None if not stored."""
        found: dict[str, tuple[str, int, bytes, tuple[str, int, bytes] | None]] = {}
        for batch, marks in in_batches(chunk_ids):
            query = (
                "SELECT chunk_id, spans, dim, vectors, token_counts, token_dims, tokens "
                f"FROM chunk_sentence_vectors WHERE model = ? AND chunk_id IN ({marks})"
            )
            for row in self._db().execute(query, (model, *batch)):
                tokens = None
                if row["tokens"] is not None:
                    tokens = (row["token_counts"], int(row["token_dims"]), bytes(row["tokens"]))
                found[row["chunk_id"]] = (
                    row["spans"],
                    int(row["dim"]),
                    bytes(row["vectors"]),
                    tokens,
                )
        return found
