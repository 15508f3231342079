"""API keys: scopes, bound collections, the `api_keys` table and the optional keys file.

A key's secret is shown once, at creation; only its SHA-256 is stored (secrets are 256 random
bits, so a fast hash is enough: there is nothing to brute-force). Keys come from the store
(`stream-rag keys create`) and from `STREAM_RAG_KEYS_FILE` (TOML or JSON), merged.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import stat
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidFieldError, NotFoundError
from ..store.database import Database
from ..store.records import validate_collection
from ..store.sql import Connection

SCOPES = ("admin", "write", "read", "chat")
ALL = "*"
SECRET_PREFIX = "sr_"


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One key. `collections` is None for `*` (every collection)."""

    id: str
    name: str
    sha256: str
    prefix: str
    scopes: frozenset[str]
    collections: frozenset[str] | None
    rpm: int | None = None
    max_streams: int | None = None
    created_at: str = ""
    revoked_at: str | None = None
    source: str = "store"

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "prefix": self.prefix,
            "scopes": sorted(self.scopes),
            "collections": ALL if self.collections is None else sorted(self.collections),
            "rpm": self.rpm,
            "max_streams": self.max_streams,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
            "source": self.source,
        }


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def check_scopes(scopes: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(scopes)
    if not chosen:
        raise InvalidFieldError(f"a key needs at least one scope of {', '.join(SCOPES)}")
    unknown = sorted(chosen - set(SCOPES))
    if unknown:
        raise InvalidFieldError(f"unknown scope {unknown[0]!r}; scopes are {', '.join(SCOPES)}")
    return chosen


def check_collections(collections: Iterable[str], scopes: frozenset[str]) -> frozenset[str] | None:
    """Validate the bound collections; `*` means every collection. Callers that were given
    none pass `*`: an empty list asked for no collection, and is refused, not widened."""
    names = [c.strip() for c in collections if c.strip()]
    if not names:
        raise InvalidFieldError(
            "a key needs at least one collection, or '*' for every one (none was given)"
        )
    if ALL in names:
        if len(names) > 1:
            raise InvalidFieldError("'*' already means every collection; give it alone")
        return None
    if "admin" in scopes:
        raise InvalidFieldError("an admin key manages every collection: bind it to '*'")
    return frozenset(validate_collection(c) for c in names)


def check_limit(value: object, what: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidFieldError(f"{what} must be a positive integer")
    return value


class KeyStore:
    """The `api_keys` table in the store's database (SQLite in `data_dir`, or PostgreSQL at
    `database_url`); blocking. Each statement is its own transaction: keys change rarely."""

    def __init__(self, data_dir: Path, database_url: str | None = None) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.database = Database(database_url or data_dir / "stream_rag.sqlite3", pool_size=4)

    def close(self) -> None:
        self.database.close()

    def create(
        self,
        *,
        name: str,
        scopes: Iterable[str],
        collections: Iterable[str] = (ALL,),
        rpm: int | None = None,
        max_streams: int | None = None,
    ) -> tuple[ApiKey, str]:
        """Store a new key; returns it with its secret, which is not stored anywhere."""
        chosen = check_scopes(scopes)
        bound = check_collections(collections, chosen)
        secret = new_secret()
        key = ApiKey(
            id="key_" + secrets.token_hex(6),
            name=name.strip() or "unnamed",
            sha256=hash_secret(secret),
            prefix=secret[:8],
            scopes=chosen,
            collections=bound,
            rpm=check_limit(rpm, "rpm"),
            max_streams=check_limit(max_streams, "max_streams"),
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        with self._connect() as db:
            db.execute(
                "INSERT INTO api_keys (id, name, sha256, prefix, scopes, collections, rpm, "
                "max_streams, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.id,
                    key.name,
                    key.sha256,
                    key.prefix,
                    ",".join(sorted(chosen)),
                    ALL if bound is None else ",".join(sorted(bound)),
                    key.rpm,
                    key.max_streams,
                    key.created_at,
                ),
            )
        return key, secret

    def list(self, *, include_revoked: bool = False) -> list[ApiKey]:
        query = "SELECT * FROM api_keys"
        if not include_revoked:
            query += " WHERE revoked_at IS NULL"
        with self._connect() as db:
            return [_key(row) for row in db.execute(query + " ORDER BY created_at, id")]

    def find(self, sha256: str) -> ApiKey | None:
        """The active key with this hash, if any (one indexed lookup)."""
        with self._connect() as db:
            row = db.execute(
                "SELECT * FROM api_keys WHERE sha256 = ? AND revoked_at IS NULL", (sha256,)
            ).fetchone()
        return None if row is None else _key(row)

    def revoke(self, key_id: str) -> ApiKey:
        if key_id.startswith("file:"):  # `_file_key`'s ids; the table's are key_...
            raise InvalidFieldError(
                f"{key_id} comes from STREAM_RAG_KEYS_FILE: remove it there and restart the "
                "server to revoke it"
            )
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._connect() as db:
            changed = db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (now, key_id),
            ).rowcount
            row = db.execute("SELECT * FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        if row is not None and not changed:
            raise NotFoundError(f"{key_id} was revoked already, at {row['revoked_at']}")
        if row is None:
            raise NotFoundError(f"no key with id {key_id!r} (`stream-rag keys list` lists them)")
        return _key(row)

    @contextmanager
    def _connect(self) -> Iterator[Connection]:
        yield self.database.connection()


def _key(row: Any) -> ApiKey:
    collections = row["collections"]
    return ApiKey(
        id=row["id"],
        name=row["name"],
        sha256=row["sha256"],
        prefix=row["prefix"],
        scopes=frozenset(row["scopes"].split(",")),
        collections=None if collections == ALL else frozenset(collections.split(",")),
        rpm=row["rpm"],
        max_streams=row["max_streams"],
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
    )


def load_keys_file(path: Path) -> list[ApiKey]:
    """Keys from a TOML or JSON file: `[[keys]]` (or `{"keys": [...]}`) with `name`, `key` (the
    secret) or `sha256`, `scopes`, `collections` (default `*`), optional `rpm`, `max_streams`."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidFieldError(f"STREAM_RAG_KEYS_FILE: cannot read {path}: {exc}") from None
    try:
        if path.suffix.lower() == ".json":
            data: Any = json.loads(raw)
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidFieldError(f"STREAM_RAG_KEYS_FILE: {path} does not parse: {exc}") from None
    entries = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise InvalidFieldError(f"STREAM_RAG_KEYS_FILE: {path} needs a list 'keys'")
    plaintext = any(isinstance(e, dict) and "key" in e for e in entries)
    check_file_mode(path, plaintext)
    return [_file_key(entry, i) for i, entry in enumerate(entries)]


def check_file_mode(path: Path, plaintext: bool) -> None:
    """Refuse a keys file others may change (they could add an admin key), or read when it
    holds secrets in the clear."""
    mode = path.stat().st_mode
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise InvalidFieldError(
            f"STREAM_RAG_KEYS_FILE: {path} is writable by other users, who could add a key; "
            f"`chmod 600 {path}`"
        )
    if plaintext and mode & stat.S_IROTH:
        raise InvalidFieldError(
            f"STREAM_RAG_KEYS_FILE: {path} holds keys in the clear and every user of this "
            f"machine can read it; `chmod 600 {path}` (or store each key's 'sha256' instead)"
        )


def _file_key(entry: object, i: int) -> ApiKey:
    where = f"STREAM_RAG_KEYS_FILE: keys[{i}]"
    if not isinstance(entry, dict):
        raise InvalidFieldError(f"{where} must be a table/object")
    secret, digest = entry.get("key"), entry.get("sha256")
    if isinstance(secret, str) and len(secret) >= 16:
        digest = hash_secret(secret)
    elif not (isinstance(digest, str) and len(digest) == 64):
        raise InvalidFieldError(f"{where} needs 'key' (16+ characters) or 'sha256' (64 hex)")
    scopes, collections = entry.get("scopes"), entry.get("collections", [ALL])
    if isinstance(collections, str):
        collections = [collections]
    if not isinstance(scopes, list) or not _strings(scopes) or not _strings(collections):
        raise InvalidFieldError(f"{where}: 'scopes' and 'collections' must be lists of strings")
    try:
        chosen = check_scopes(scopes)
        bound = check_collections(collections, chosen)
        rpm = check_limit(entry.get("rpm"), "rpm")
        streams = check_limit(entry.get("max_streams"), "max_streams")
    except InvalidFieldError as exc:
        raise InvalidFieldError(f"{where}: {exc.message}") from None
    name = entry.get("name")
    return ApiKey(
        id=f"file:{name}" if isinstance(name, str) and name else f"file:{i}",
        name=name if isinstance(name, str) and name else f"keys[{i}]",
        sha256=digest.lower(),
        prefix=secret[:8] if isinstance(secret, str) else "",
        scopes=chosen,
        collections=bound,
        rpm=rpm,
        max_streams=streams,
        source="file",
    )


def _strings(value: object) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and all(isinstance(v, str) for v in value)
    )
