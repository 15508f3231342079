"""A small Qdrant server for tests: the REST routes stream_rag's `QdrantIndex` calls, served by
Starlette and carried out by qdrant-client's own local mode (a real implementation, persisted
under `--path`). No Qdrant server binary is available on these machines; several replicas in
the multi-process tests share this one index.

    python -m tests.qdrant_server --path DIR --port N
"""

from __future__ import annotations

import argparse
import importlib.metadata
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
import uvicorn
from pydantic import BaseModel
from qdrant_client import QdrantClient, models
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

Handler = Callable[[QdrantClient, str, dict[str, Any]], Any]


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _exists(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    return models.CollectionExistence(exists=client.collection_exists(name))


def _create(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    request = models.CreateCollection.model_validate(body)
    return client.create_collection(
        name, vectors_config=request.vectors, sparse_vectors_config=request.sparse_vectors
    )


def _info(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    return client.get_collection(name)


def _collections(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    return client.get_collections()


def _done(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    return models.UpdateResult(operation_id=0, status=models.UpdateStatus.COMPLETED)


def _upsert(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    points = models.PointsList.model_validate(body).points
    return client.upsert(name, points=points, wait=True)


def _delete(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    selector: models.PointsSelector
    if "filter" in body:
        selector = models.FilterSelector.model_validate(body)
    else:
        selector = models.PointIdsList.model_validate(body)
    return client.delete(name, points_selector=selector, wait=True)


def _query(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    request = models.QueryRequest.model_validate(body)
    query: Any = request.query
    if isinstance(query, models.NearestQuery):
        query = query.nearest
    return client.query_points(
        name,
        query=query,
        using=request.using,
        query_filter=request.filter,
        limit=request.limit or 10,
        with_payload=request.with_payload if request.with_payload is not None else True,
    )


def _count(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    request = models.CountRequest.model_validate(body)
    return client.count(name, count_filter=request.filter, exact=True)


def _scroll(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    request = models.ScrollRequest.model_validate(body)
    records, offset = client.scroll(
        name,
        scroll_filter=request.filter,
        limit=request.limit or 10,
        offset=request.offset,
        with_payload=request.with_payload if request.with_payload is not None else True,
        with_vectors=False,
    )
    return models.ScrollResult(points=records, next_page_offset=offset)


def build_app(path: str) -> Starlette:
    client = QdrantClient(path=path)
    lock = threading.Lock()  # local mode is one process's, one call at a time

    def route(handler: Handler) -> Callable[[Request], Awaitable[JSONResponse]]:
        async def endpoint(request: Request) -> JSONResponse:
            body = await request.json() if await request.body() else {}
            name = request.path_params.get("name", "")

            def call() -> Any:
                with lock:
                    return handler(client, name, body)

            started = time.perf_counter()
            try:
                result = await anyio.to_thread.run_sync(call)
            except (ValueError, KeyError) as exc:
                # As Qdrant answers: 409 for a collection that exists, else 404.
                status = 409 if "already exists" in str(exc) else 404
                return JSONResponse({"status": {"error": str(exc)}, "time": 0.0}, status)
            elapsed = time.perf_counter() - started
            return JSONResponse({"result": _dump(result), "status": "ok", "time": elapsed})

        return endpoint

    async def root(request: Request) -> JSONResponse:
        version = importlib.metadata.version("qdrant-client")
        return JSONResponse({"title": "qdrant - test server", "version": version})

    collection = "/collections/{name}"
    return Starlette(
        routes=[
            Route("/", root),
            Route("/collections", route(_collections)),
            Route(collection + "/exists", route(_exists)),
            Route(collection, route(_create), methods=["PUT"]),
            Route(collection, route(_info), methods=["GET"]),
            Route(collection + "/index", route(_done), methods=["PUT"]),
            Route(collection + "/points", route(_upsert), methods=["PUT"]),
            Route(collection + "/points/delete", route(_delete), methods=["POST"]),
            Route(collection + "/points/query", route(_query), methods=["POST"]),
            Route(collection + "/points/count", route(_count), methods=["POST"]),
            Route(collection + "/points/scroll", route(_scroll), methods=["POST"]),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--path", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(build_app(args.path), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
