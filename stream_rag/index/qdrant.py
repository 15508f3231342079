"""A Qdrant server (or cluster) through qdrant-client; also runs on the client's local mode."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ..config import Settings
from .base import (
    DENSE,
    SPARSE,
    UPSERT_BATCH,
    IndexHit,
    IndexPoint,
    IndexUnavailableError,
    PointRef,
    hit_from_payload,
    ref_from_payload,
)
from .bm25 import SparseVector

_PAYLOAD = ["doc_id", "version", "chunk_id"]
T = TypeVar("T")


def _match(key: str, value: str | int) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


class QdrantIndex:
    def __init__(self, client: QdrantClient, collection: str, dim: int) -> None:
        self._client = client
        self.collection = collection
        self.dim = dim
        self.name = f"qdrant:{collection}"

    @classmethod
    def connect(cls, settings: Settings, dim: int) -> QdrantIndex:
        client = QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key, timeout=30)
        return cls.create(
            client,
            f"{settings.qdrant_collection}_{dim}",
            dim,
            shards=settings.qdrant_shards,
            replicas=settings.qdrant_replicas,
            payload_indexes=True,
        )

    @classmethod
    def create(
        cls,
        client: QdrantClient,
        collection: str,
        dim: int,
        *,
        shards: int | None = None,
        replicas: int | None = None,
        payload_indexes: bool = False,
    ) -> QdrantIndex:
        """Use `collection`, creating it if needed. Payload indexes only matter on a server
        (the client's local mode ignores them, with a warning)."""
        try:
            if client.collection_exists(collection):
                return cls._existing(client, collection, dim)
            try:
                client.create_collection(
                    collection,
                    vectors_config={
                        DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)
                    },
                    sparse_vectors_config={
                        SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)
                    },
                    shard_number=shards,
                    replication_factor=replicas,
                )
            except UnexpectedResponse:
                # Replicas starting together: another one created it a moment ago.
                if not client.collection_exists(collection):
                    raise
                return cls._existing(client, collection, dim)
            if payload_indexes:
                for name, schema in (
                    ("collection", models.PayloadSchemaType.KEYWORD),
                    ("doc_id", models.PayloadSchemaType.KEYWORD),
                    ("version", models.PayloadSchemaType.INTEGER),
                ):
                    client.create_payload_index(collection, name, field_schema=schema, wait=True)
        except (ResponseHandlingException, UnexpectedResponse) as exc:
            raise IndexUnavailableError(f"Qdrant is unreachable or refused: {exc}") from None
        return cls(client, collection, dim)

    @classmethod
    def _existing(cls, client: QdrantClient, collection: str, dim: int) -> QdrantIndex:
        info = client.get_collection(collection)
        vectors = info.config.params.vectors
        size = vectors[DENSE].size if isinstance(vectors, dict) else None
        if size != dim:
            raise IndexUnavailableError(
                f"Qdrant collection {collection!r} holds {size}-dim vectors, not {dim}"
            )
        return cls(client, collection, dim)

    def upsert(self, points: Sequence[IndexPoint]) -> None:
        for start in range(0, len(points), UPSERT_BATCH):
            batch = [self._point(p) for p in points[start : start + UPSERT_BATCH]]
            self._call(partial(self._client.upsert, self.collection, points=batch, wait=True))

    def _point(self, point: IndexPoint) -> models.PointStruct:
        vector: dict[str, list[float] | models.SparseVector] = {}
        if point.dense is not None:
            if point.dense.shape != (self.dim,):
                raise IndexUnavailableError(
                    f"vector of {point.dense.shape} for an index of {self.dim}"
                )
            vector[DENSE] = point.dense.tolist()
        if point.sparse:
            vector[SPARSE] = models.SparseVector(
                indices=list(point.sparse.indices), values=list(point.sparse.values)
            )
        return models.PointStruct(
            id=point.point_id,
            vector=vector,  # type: ignore[arg-type]  # dict is invariant; the values fit
            payload=point.payload(),
        )

    def delete_versions(
        self, doc_id: str, keep: int | None = None, *, below: int | None = None
    ) -> None:
        must_not: list[models.Condition] | None = (
            [_match("version", keep)] if keep is not None else None
        )
        must: list[models.Condition] = [_match("doc_id", doc_id)]
        if below is not None:
            must.append(models.FieldCondition(key="version", range=models.Range(lt=below)))
        selector = models.FilterSelector(filter=models.Filter(must=must, must_not=must_not))
        self._call(
            lambda: self._client.delete(self.collection, points_selector=selector, wait=True)
        )

    def search_dense(
        self, vector: npt.NDArray[np.float32], collection: str, limit: int
    ) -> list[IndexHit]:
        return self._query(vector.tolist(), DENSE, collection, limit)

    def search_sparse(self, vector: SparseVector, collection: str, limit: int) -> list[IndexHit]:
        if not vector:
            return []
        query = models.SparseVector(indices=list(vector.indices), values=list(vector.values))
        return self._query(query, SPARSE, collection, limit)

    def _query(
        self, query: list[float] | models.SparseVector, using: str, collection: str, limit: int
    ) -> list[IndexHit]:
        response = self._call(
            lambda: self._client.query_points(
                self.collection,
                query=query,
                using=using,
                query_filter=models.Filter(must=[_match("collection", collection)]),
                limit=limit,
                with_payload=_PAYLOAD,
            )
        )
        return [hit_from_payload(p.payload, p.score) for p in response.points]

    def count(self) -> int:
        return int(self._call(lambda: self._client.count(self.collection, exact=True)).count)

    def points(self) -> Iterator[PointRef]:
        offset: models.ExtendedPointId | None = None
        while True:
            records, offset = self._call(
                partial(
                    self._client.scroll,
                    self.collection,
                    limit=1000,
                    offset=offset,
                    with_payload=_PAYLOAD,
                    with_vectors=False,
                )
            )
            for record in records:
                yield ref_from_payload(record.id, record.payload)
            if offset is None or not records:
                return

    def delete_points(self, point_ids: Sequence[str]) -> None:
        ids: list[models.ExtendedPointId] = list(point_ids)
        for start in range(0, len(ids), UPSERT_BATCH):
            selector = models.PointIdsList(points=ids[start : start + UPSERT_BATCH])
            self._call(
                partial(self._client.delete, self.collection, points_selector=selector, wait=True)
            )

    def stale_points(self) -> int:
        # A server's own optimiser vacuums deleted points; local mode never keeps them.
        return 0

    def vacuum(self) -> None:
        return None

    def close(self) -> None:
        self._client.close()

    def _call(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except (ResponseHandlingException, UnexpectedResponse) as exc:
            raise IndexUnavailableError(f"Qdrant request failed: {exc}") from None


def wait_for_server(settings: Settings, say: Callable[[str], None]) -> None:
    """Ask the Qdrant server at `STREAM_RAG_QDRANT_URL` until it answers, at most
    `store_wait_attempts` times `store_wait_s` apart, saying each wait; a refused API key
    fails at once (retrying cannot fix it)."""
    url, attempts = settings.qdrant_url, settings.store_wait_attempts
    client = QdrantClient(
        url=url, api_key=settings.qdrant_api_key, timeout=10, check_compatibility=False
    )
    try:
        for attempt in range(1, attempts + 1):
            try:
                client.get_collections()
            except UnexpectedResponse as exc:
                if exc.status_code in (401, 403):
                    raise IndexUnavailableError(
                        f"Qdrant at {url} refused the API key (STREAM_RAG_QDRANT_API_KEY): "
                        f"{exc.status_code}"
                    ) from exc
                reason = f"HTTP {exc.status_code}"
            except (ResponseHandlingException, OSError) as exc:
                reason = str(getattr(exc, "source", None) or exc) or type(exc).__name__
            else:
                if attempt > 1:
                    say(f"Qdrant at {url} answered (attempt {attempt}/{attempts})")
                return
            if attempt == attempts:
                raise IndexUnavailableError(
                    f"Qdrant at {url} did not answer after {attempts} attempts "
                    f"{settings.store_wait_s:g} s apart ({reason}); set "
                    "STREAM_RAG_STORE_WAIT_ATTEMPTS / STREAM_RAG_STORE_WAIT_S to wait longer"
                )
            say(
                f"waiting for Qdrant at {url} (attempt {attempt}/{attempts}: {reason}); "
                f"next in {settings.store_wait_s:g} s"
            )
            time.sleep(settings.store_wait_s)
    finally:
        client.close()
