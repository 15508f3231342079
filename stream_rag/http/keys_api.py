"""`/v1/keys`: admin keys manage keys over HTTP (the guard lets only `admin` through)."""

from __future__ import annotations

from functools import partial

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..access.keys import ALL, check_limit
from ..access.tenancy import access
from ..errors import InputError
from .limits import read_json


async def create_key(request: Request) -> JSONResponse:
    """`{"scopes": [...], "collections"?: [...] | "*", "name"?, "rpm"?, "max_streams"?}`: 201
    with the key's record and its secret, which is never shown again."""
    body = await read_json(request, access(request).settings.max_json_bytes)
    if not isinstance(body, dict):
        raise InputError("the request body must be a JSON object")
    scopes, collections = body.get("scopes"), body.get("collections", ALL)
    if isinstance(collections, str):
        collections = [collections]
    if not isinstance(scopes, list) or not _strings(scopes) or not _strings(collections):
        raise InputError("'scopes' and 'collections' must be lists of strings")
    name = body.get("name", "")
    if not isinstance(name, str) or len(name) > 200:
        raise InputError("'name' must be a string of at most 200 characters")
    ring = access(request).keys
    key, secret = await anyio.to_thread.run_sync(
        partial(
            ring.store.create,
            name=name,
            scopes=scopes,
            collections=collections,
            rpm=check_limit(body.get("rpm"), "rpm"),
            max_streams=check_limit(body.get("max_streams"), "max_streams"),
        )
    )
    await anyio.to_thread.run_sync(ring.reload)
    return JSONResponse({**key.to_json(), "key": secret}, status_code=201)


async def list_keys(request: Request) -> JSONResponse:
    ring = access(request).keys
    stored = await anyio.to_thread.run_sync(ring.store.list)
    keys = [*ring.file_keys, *stored]
    return JSONResponse({"keys": [k.to_json() for k in keys]})


async def revoke_key(request: Request) -> JSONResponse:
    ring = access(request).keys
    key = await anyio.to_thread.run_sync(ring.store.revoke, request.path_params["key_id"])
    await anyio.to_thread.run_sync(ring.reload)  # no grace second on this server
    return JSONResponse(key.to_json())


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def routes() -> list[Route]:
    return [
        Route("/v1/keys", create_key, methods=["POST"]),
        Route("/v1/keys", list_keys, methods=["GET"]),
        Route("/v1/keys/{key_id}", revoke_key, methods=["DELETE"]),
    ]
