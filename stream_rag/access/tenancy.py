"""Per-request checks that keep a key inside its collections. A document the key may not
see answers exactly like one that does not exist (404, same message), so ids never leak."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import anyio.to_thread
from starlette.requests import Request

from ..errors import InvalidFieldError, NotFoundError
from ..retrieve.hybrid import Block
from ..types import Document
from .principals import Access, ForbiddenError, Principal

# Request fields that loosen the safety checks: honoured only for admin keys (and open mode).
# The verifier's knobs are settings only today; naming them here keeps a future request field
# of the same name admin-only from its first day.
SAFETY_FIELDS = (
    "gate_threshold",
    "min_evidence",
    "check_conflicts",
    "gate_semantic",
    "gate_semantic_cutoff",
    "verify_url",
    "verify_style",
    "verify_model",
    "verify_timeout_ms",
    "verify_label",
    "ungated_baseline",
)


def principal(request: Request) -> Principal:
    found: Principal = request.state.principal
    return found


def access(request: Request) -> Access:
    found: Access = request.state.access
    return found


def collection_for(request: Request, requested: object, default: str) -> str:
    """The collection a search, answer or upload works in: the one named (it must be bound to
    the key), else the default if bound, else the key's only collection."""
    who = principal(request)
    if requested is not None and not isinstance(requested, str):
        raise InvalidFieldError("'collection' must be a string")
    if requested:
        if not who.bound_to(requested):
            raise ForbiddenError(f"this key is not bound to collection {requested!r}")
        return requested
    if who.bound_to(default):
        return default
    if who.collections is not None and len(who.collections) == 1:
        return next(iter(who.collections))
    raise ForbiddenError(
        f"this key is not bound to the default collection {default!r}; name one of its own"
    )


def visible(request: Request, document: Document, scope: str) -> Document:
    """`document` if the key may act on it with `scope`, else the same 404 as an unknown id."""
    # DOWNLOAD passes chat keys here; `downloadable` then checks their citations.
    if not principal(request).can(scope, document.collection):
        raise NotFoundError(f"no document with id {document.id!r}")
    return document


async def downloadable(request: Request, document: Document, version: int) -> None:
    """Read keys download anything in their collections; chat keys only what they were cited
    (on any replica, before any restart: the grants in the database)."""
    who = principal(request)
    if who.can("read", document.collection):
        return
    if who.can("chat", document.collection):
        shared = access(request)
        if shared.ledger.allows(who.id, document.id, version):
            return
        grants = shared.grants
        if grants is not None and await anyio.to_thread.run_sync(
            grants.allows, who.id, document.id, version
        ):
            return
    raise NotFoundError(f"no document with id {document.id!r}")


def readable(request: Request, documents: Iterable[Document]) -> list[Document]:
    who = principal(request)
    return [d for d in documents if who.can("read", d.collection)]


def check_overrides(request: Request, body: Mapping[str, object]) -> None:
    if principal(request).admin:
        return
    for name in SAFETY_FIELDS:
        if body.get(name) is not None:
            raise ForbiddenError(f"{name!r} overrides a safety setting; only an admin key may")


def citation_recorder(request: Request) -> Callable[[Sequence[Block]], None]:
    """Records the (document, version) of every citation shown to this key."""
    who, shared = principal(request), access(request)

    def record(blocks: Sequence[Block]) -> None:
        if not who.anonymous:
            pairs = [(b.doc_id, b.version) for b in blocks]
            shared.ledger.record(who.id, pairs)
            if shared.grants is not None:
                shared.grants.record(who.id, pairs)

    return record


async def stored_grants(request: Request) -> None:
    """Wait until the grants recorded so far are in the database (they are written behind)."""
    grants = access(request).grants
    if grants is not None:
        await anyio.to_thread.run_sync(grants.flush)
