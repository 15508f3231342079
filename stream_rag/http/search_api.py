"""`/v1/search` (retrieval without generation) and `/v1/index/optimize` (HNSW, admin)."""

from __future__ import annotations

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse

from ..access import tenancy
from ..answer.limits import check_question
from ..errors import InputError, InvalidFieldError, StreamRagError
from . import state


async def search(request: Request) -> JSONResponse:
    body = await state.json_object(request)
    query = body.get("query")
    if not isinstance(query, str):
        raise InvalidFieldError("'query' must be a string")
    check_question(query, "query")
    collection = body.get("collection")
    top_k = body.get("top_k")
    weights = body.get("weights")
    fusion = body.get("fusion")
    collection = tenancy.collection_for(
        request, collection, state.settings(request).default_collection
    )
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool)):
        raise InvalidFieldError("'top_k' must be an integer")
    if weights is not None and not (
        isinstance(weights, dict)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in weights.values())
    ):
        raise InvalidFieldError("'weights' must be an object of numbers, e.g. {\"dense\": 0.5}")
    if fusion is not None and not isinstance(fusion, str):
        raise InvalidFieldError("'fusion' must be 'weighted' or 'rrf'")
    result = await state.services(request).retriever.search(
        query, collection=collection, top_k=top_k, weights=weights, fusion=fusion
    )
    return JSONResponse(state.public(request, result.to_json()))


async def optimize_index(request: Request) -> JSONResponse:
    """Give the embedded index HNSW graphs (a child process builds them on a copy; searches go
    on meanwhile). Admin only, like every route access.py does not list."""
    build = getattr(state.services(request).index, "build_hnsw", None)
    if build is None:
        raise InputError("only the embedded index is optimised here; Qdrant builds its own HNSW")
    running: set[str] = request.app.state.optimizing
    if running:
        # Each call held a worker thread until the one before it ended: 50 of them slowed
        # every listing from 3 ms to 6.7 s (issue 29).
        raise OptimizeRunningError("an optimize is already running; wait for it to finish")
    running.add("optimize")  # checked and set in one step of the event loop
    try:
        timings = await anyio.to_thread.run_sync(build)
    finally:
        running.clear()
    return JSONResponse({"optimized": True, **timings})


class OptimizeRunningError(StreamRagError):
    """A second optimize while one runs (409)."""

    code = "optimize_running"
    status = 409
