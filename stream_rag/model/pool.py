"""httpcore's connection pool, with its pass over every connection skipped when a response
closes and the pass could only sweep (the lean backend's pools, network.py)."""

from __future__ import annotations

from typing import Any


def lean_pool(base: type) -> type:
    """`base` (httpcore's pool class) with a pass over its connections only when it can assign
    or close one (a subclass made once per class)."""
    if getattr(base, "_lean", False):
        return base
    made = _POOLS.get(base)
    if made is None:
        full = getattr(base, "_assign_requests_to_connections")  # noqa: B009 (private to httpcore)

        def assign(pool: Any) -> list[Any]:
            # Called whenever a request joins the pool or leaves it (its response closed). A
            # pass costs a dozen calls per connection (~2.7 us a connection, ~250 us at 100
            # streams) twice per answer. When no request waits for a connection and the
            # pool holds no more than it keeps alive, a pass could only sweep connections
            # that closed or expired meanwhile: the next request's pass does that.
            if len(pool._connections) <= pool._max_keepalive_connections and not any(
                request.is_queued() for request in pool._requests
            ):
                return []
            result: list[Any] = full(pool)
            return result

        made = _POOLS[base] = type(
            base.__name__,
            (base,),
            {
                "_assign_requests_to_connections": assign,
                "_lean": True,
                "__module__": base.__module__,
            },
        )
    return made


_POOLS: dict[type, type] = {}
POOL_STATE = (
    "_assign_requests_to_connections",
    "_connections",
    "_requests",
    "_max_keepalive_connections",
)
