"""Who is asking and what they may touch: principals, the key ring, route scopes, and the
ledger of documents each `chat` key has been shown in citations.

Scopes: `admin` (everything, every collection, keys), `write` (upload, version, delete),
`read` (list, download, chunks, search, chat, answer), `chat` (chat and answer; downloads
only of document versions its own answers cited). Without any key configured the server is
open (every request acts as admin), which `check_open_mode` allows only on loopback and
openmode.py only while no request can come from elsewhere.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from ..config import Settings
from ..errors import StreamRagError
from .keys import ApiKey, KeyStore, hash_secret, load_keys_file
from .shared import GrantStore, SharedAnswerSlots, SharedRateLimiter

if TYPE_CHECKING:
    from .openmode import OpenMode

log = logging.getLogger("stream_rag")

DOWNLOAD = "download"  # read, or chat with a citation in the ledger (checked per document)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "[::1]")
# How stale the in-memory copy of the key table may get (revocations apply within this).
KEY_TTL_S = 1.0
LEDGER_PER_KEY = 10_000
LEDGER_KEYS = 10_000


class AuthError(StreamRagError):
    """No key, or an unknown or revoked one (401)."""

    code = "unauthorized"
    status = 401


class ForbiddenError(StreamRagError):
    """The key is valid but lacks the scope, or names a collection it is not bound to (403)."""

    code = "forbidden"
    status = 403


class OpenModeError(StreamRagError):
    """No key is configured and the server would listen beyond loopback."""

    code = "no_keys"
    status = 500


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller. `collections` None means every collection."""

    id: str
    scopes: frozenset[str]
    collections: frozenset[str] | None
    rpm: int | None = None
    max_streams: int | None = None
    anonymous: bool = False

    @classmethod
    def of(cls, key: ApiKey) -> Principal:
        return cls(key.id, key.scopes, key.collections, key.rpm, key.max_streams)

    @classmethod
    def open(cls, client: str) -> Principal:
        return cls(f"addr:{client}", frozenset({"admin"}), None, anonymous=True)

    @property
    def admin(self) -> bool:
        return "admin" in self.scopes

    def has(self, scope: str) -> bool:
        if self.admin or scope in self.scopes:
            return True
        if scope in ("chat", DOWNLOAD):
            return bool(self.scopes & {"read", "chat"})
        return False

    def bound_to(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    def can(self, scope: str, collection: str) -> bool:
        return self.has(scope) and self.bound_to(collection)

    def readable(self, collections: Iterable[str]) -> set[str]:
        return {c for c in collections if self.can("read", c)}


def is_loopback(host: str) -> bool:
    if host.strip("[]") in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


NO_KEYS_MESSAGE = (
    "no API key is configured and STREAM_RAG_HOST={host} is not a loopback address, so anyone "
    "who can reach it could read, change and delete every document. Create a key first: "
    "`stream-rag keys create --scope admin --name ops` (or set STREAM_RAG_KEYS_FILE), or set "
    "STREAM_RAG_ALLOW_ANONYMOUS=1 if this network is trusted."
)


def open_mode_allowed(settings: Settings) -> bool:
    return settings.allow_anonymous or is_loopback(settings.host)


# -- route scopes -----------------------------------------------------------------------------

_ID = r"[^/]+"
_RULES: tuple[tuple[str, re.Pattern[str], str | None], ...] = tuple(
    (methods, re.compile(pattern), scope)
    for methods, pattern, scope in (
        ("GET HEAD", r"/|/healthz|/readyz|/openapi\.json|/favicon\.ico|/static/.*", None),
        ("POST", r"/v1/documents", "write"),
        ("GET HEAD", r"/v1/documents", "read"),
        ("GET HEAD", rf"/v1/documents/{_ID}", "read"),
        ("DELETE", rf"/v1/documents/{_ID}", "write"),
        ("GET HEAD", rf"/v1/documents/{_ID}/content", DOWNLOAD),
        ("POST", rf"/v1/documents/{_ID}/versions", "write"),
        ("GET HEAD", rf"/v1/documents/{_ID}/versions/{_ID}", "read"),
        ("GET HEAD", rf"/v1/documents/{_ID}/versions/{_ID}/chunks", "read"),
        ("GET HEAD", rf"/v1/documents/{_ID}/versions/{_ID}/content", DOWNLOAD),
        ("GET HEAD", rf"/v1/documents/{_ID}/versions/{_ID}/text", DOWNLOAD),
        ("POST", r"/v1/search", "read"),
        ("GET POST", r"/v1/chat", "chat"),
        ("GET DELETE", rf"/v1/streams/{_ID}", "chat"),
        ("POST", r"/v1/answer|/v1/chat/completions", "chat"),
        ("GET", r"/v1/models", "chat"),
        # A visitor rates answers and forgets their conversation with the page's chat key.
        ("POST", r"/v1/feedback", "chat"),
        ("DELETE", rf"/v1/conversations/{_ID}", "chat"),
    )
)
# Routes that run a model: they count against a key's concurrent answers.
ANSWER_PATHS = frozenset({"/v1/chat", "/v1/answer", "/v1/chat/completions"})


@functools.lru_cache(maxsize=1024)  # every request asks; the paths asked are mostly few
def required_scope(method: str, path: str) -> str | None:
    """The scope a request needs; None for public routes. Unknown routes need admin."""
    method = "GET" if method == "HEAD" else method
    for methods, pattern, scope in _RULES:
        if method in methods.split() and pattern.fullmatch(path):
            return scope
    return "admin"


# -- keys -------------------------------------------------------------------------------------


class KeyRing:
    """An in-memory copy of the keys (store + file), refreshed in a worker thread when older
    than `KEY_TTL_S`; an unknown key is looked up in the table at once."""

    def __init__(self, store: KeyStore, file_keys: list[ApiKey]) -> None:
        self.store = store
        self.file_keys = file_keys
        self._by_hash: dict[str, ApiKey] = {}
        self._loaded_at = -1e9
        self._lock = anyio.Lock()

    @classmethod
    def open(cls, settings: Settings) -> KeyRing:
        """Blocking: reads the keys file and the table."""
        file_keys = load_keys_file(settings.keys_file) if settings.keys_file else []
        ring = cls(KeyStore(settings.data_dir, settings.database_url), file_keys)
        ring.reload()
        return ring

    def reload(self) -> None:
        keys = [*self.file_keys, *self.store.list()]
        self._by_hash = {k.sha256: k for k in keys}
        self._loaded_at = time.monotonic()

    async def refresh(self, min_age_s: float = KEY_TTL_S) -> None:
        if time.monotonic() - self._loaded_at < min_age_s:
            return
        async with self._lock:
            if time.monotonic() - self._loaded_at >= min_age_s:
                await anyio.to_thread.run_sync(self.reload)

    @property
    def empty(self) -> bool:
        return not self._by_hash

    def cached(self, secret: str) -> ApiKey | None:
        return self._by_hash.get(hash_secret(secret))

    async def fetch(self, secret: str) -> ApiKey | None:
        """A key not in memory: created a moment ago? One indexed lookup, not a reload."""
        digest = hash_secret(secret)
        key = await anyio.to_thread.run_sync(self.store.find, digest)
        if key is not None:
            self._by_hash[digest] = key
        return key


def check_open_mode(settings: Settings, ring: KeyRing) -> None:
    if ring.empty and not open_mode_allowed(settings):
        raise OpenModeError(NO_KEYS_MESSAGE.format(host=settings.host))


# -- the citation ledger ----------------------------------------------------------------------


class CitationLedger:
    """Which (document, version) pairs each key has been shown in citations, so a `chat` key
    can download exactly those. In memory, bounded: the newest `LEDGER_PER_KEY` per key and
    `LEDGER_KEYS` keys; a restart forgets them (the answer can be asked again)."""

    def __init__(self, per_key: int = LEDGER_PER_KEY, keys: int = LEDGER_KEYS) -> None:
        self.per_key = per_key
        self.keys = keys
        self._seen: OrderedDict[str, OrderedDict[tuple[str, int], None]] = OrderedDict()

    def record(self, key_id: str, cited: Iterable[tuple[str, int]]) -> None:
        seen = self._seen.get(key_id)
        if seen is None:
            seen = self._seen[key_id] = OrderedDict()
            while len(self._seen) > self.keys:
                self._seen.popitem(last=False)
        self._seen.move_to_end(key_id)
        for pair in cited:
            seen[pair] = None
            seen.move_to_end(pair)
        while len(seen) > self.per_key:
            seen.popitem(last=False)

    def allows(self, key_id: str, doc_id: str, version: int) -> bool:
        return (doc_id, version) in self._seen.get(key_id, {})


@dataclass(slots=True)
class Access:
    """What the guard and the handlers share, kept in the lifespan state."""

    settings: Settings
    keys: KeyRing
    ledger: CitationLedger
    open_mode: OpenMode
    # The cited-version grants in the database (every replica's, kept across restarts).
    grants: GrantStore | None = None
    # Rate-limit buckets every replica shares (PostgreSQL); None: in this process's memory.
    limits: SharedRateLimiter | None = None
    # Answer slots every replica shares (PostgreSQL); None: the guard's `AnswerSlots`.
    slots: SharedAnswerSlots | None = None

    def close(self) -> None:
        """Blocking: wait for grants being stored, then close the key table."""
        if self.grants is not None:
            self.grants.close()
        if self.slots is not None:
            try:
                self.slots.close()
            except Exception:  # unreachable database: the rows lapse once their beat is stale
                log.exception("giving back this replica's answer slots failed")
        self.keys.store.close()

    @classmethod
    async def open(cls, settings: Settings) -> Access:
        ring = await anyio.to_thread.run_sync(partial(KeyRing.open, settings))
        check_open_mode(settings, ring)
        from .openmode import OpenMode  # it builds principals: imported here, not in a cycle

        open_mode = OpenMode(settings)
        if ring.empty:
            open_mode.log_start()
        if not is_loopback(settings.host) and not settings.allowed_hosts:
            log.warning("STREAM_RAG_ALLOWED_HOSTS is empty: any Host is served")
        database = ring.store.database
        limits = SharedRateLimiter(database) if settings.database_url else None
        slots = SharedAnswerSlots(database) if settings.database_url else None
        return cls(settings, ring, CitationLedger(), open_mode, GrantStore(database), limits, slots)
