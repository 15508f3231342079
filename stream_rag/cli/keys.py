"""`stream-rag keys create|list|revoke`: API keys in the store's SQLite file."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from ..access.keys import ALL, SCOPES, KeyStore, load_keys_file
from ..config import Settings
from ..counts import counted

if TYPE_CHECKING:
    import httpx


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = commands.add_parser(
        "keys",
        help="create, list and revoke API keys",
        description="API keys for the HTTP API, sent as 'Authorization: Bearer <key>'. Once "
        "any key exists, every route except the page and /healthz needs one.",
    )
    actions = keys.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser(
        "create",
        help="create a key and print its secret (shown only this once)",
        description="Create a key. Scopes: admin (everything), write (upload, version, "
        "delete), read (list, download, chunks, search, chat, answer), chat (chat and answer; "
        "downloads only of documents its answers cited).",
    )
    create.add_argument(
        "--scope", action="append", choices=SCOPES, required=True, help="repeat for several"
    )
    create.add_argument(
        "--collection",
        action="append",
        help=f"collection the key is bound to; repeat for several (default: {ALL}, every one)",
    )
    create.add_argument("--name", default="", help="a label to recognise the key by")
    create.add_argument("--rpm", type=int, help="requests a minute (STREAM_RAG_RATE_LIMIT_RPM)")
    create.add_argument(
        "--max-streams", type=int, help="answers at a time (STREAM_RAG_MAX_STREAMS)"
    )
    create.add_argument("--json", action="store_true", help="print JSON instead of text")
    listing = actions.add_parser("list", help="list keys (never their secrets)")
    listing.add_argument(
        "--all", action="store_true", help="include revoked keys, marked 'revoked <when>'"
    )
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    revoke = actions.add_parser("revoke", help="revoke a key (a running server stops it in 1 s)")
    revoke.add_argument("key_id")


def run(settings: Settings, args: argparse.Namespace) -> int:
    store = KeyStore(settings.data_dir, settings.database_url)
    if args.action == "create":
        key, secret = store.create(
            name=args.name,
            scopes=args.scope,
            collections=args.collection or [ALL],
            rpm=args.rpm,
            max_streams=args.max_streams,
        )
        if args.json:
            print(json.dumps({**key.to_json(), "key": secret}, indent=2))
        else:
            print(secret)
            print(
                f"created {key.id} ({', '.join(sorted(key.scopes))} on "
                f"{', '.join(sorted(key.collections or [ALL]))}); the secret above is not "
                "stored and is shown only now"
            )
        return 0
    if args.action == "list":
        every = store.list(include_revoked=True)
        keys = every if args.all else [k for k in every if not k.revoked_at]
        hidden = len(every) - len(keys)
        if settings.keys_file:
            keys = [*load_keys_file(settings.keys_file), *keys]
        if args.json:
            print(json.dumps([k.to_json() for k in keys], indent=2))
            return 0
        for key in keys:
            state = f"revoked {key.revoked_at}" if key.revoked_at else "active"
            print(
                f"{key.id}\t{key.name}\t{key.prefix}...\t{','.join(sorted(key.scopes))}\t"
                f"{','.join(sorted(key.collections or [ALL]))}\t{key.source}\t{state}"
            )
        if not keys:
            print("no active keys: the server runs open, and only on loopback")
        if hidden:
            # On stderr: the table stays one key a line for scripts.
            shown = f"({counted(hidden, 'revoked key')} not shown: --all lists them)"
            print(shown, file=sys.stderr)
        return 0
    revoked = store.revoke(args.key_id)
    print(f"revoked {revoked.id} ({revoked.name})")
    return 0


def print_first_key(settings: Settings) -> None:
    """The first admin key of a fresh deployment, printed once (to stderr, so logs keep it)."""
    key, secret = KeyStore(settings.data_dir, settings.database_url).create(
        name="first admin key", scopes=["admin"]
    )
    print(
        f"\nNo API key existed, so an admin key was created ({key.id}). It is shown only now:\n\n"
        f"    {secret}\n\nSend it as 'Authorization: Bearer <key>'. Create narrower keys with "
        "`stream-rag keys create --scope chat --collection NAME`.\n",
        file=sys.stderr,
        flush=True,
    )


def client_headers() -> dict[str, str]:
    """For commands that call a running server (`--url`): the key in `STREAM_RAG_API_KEY`."""
    key = os.environ.get("STREAM_RAG_API_KEY", "").strip()
    return {"Authorization": f"Bearer {key}"} if key else {}


def error_message(response: httpx.Response) -> str:
    """What a failed `--url` call says: a stream_rag error body's message, else the status and
    the start of whatever answered (a proxy's HTML error page is not JSON)."""
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        text = " ".join(response.text.split())[:200]
        return f"HTTP {response.status_code} {response.reason_phrase}: {text}".rstrip(": ")
    if response.status_code == 401:
        # The server speaks of a header, which the CLI's operator never writes.
        sent = "Authorization" in response.request.headers
        hint = "check the key in STREAM_RAG_API_KEY" if sent else "set STREAM_RAG_API_KEY to one"
        return f"{message} ({hint})"
    return str(message)
