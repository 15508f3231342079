"""The `stream-rag` command line: the parser and the dispatch. Each command group lives in its
own module (serve, documents, ask, fake, keys, index, evaluate; loadtest/command.py)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..config import Settings
from ..errors import DataDirMissingError, StreamRagError
from ..loadtest import command as loadtest
from ..services import open_services, open_store
from . import ask, database, documents, evaluate, fake, index, keys, serve, worker

DESCRIPTION = """\
stream_rag: a streaming RAG backend that only sends sentences whose citations check out.

Settings come from STREAM_RAG_* environment variables (and a .env file), listed in
docs/reference/settings.md."""


# Commands that read what is stored (run locally): a data directory that is not there is a
# mistake, not an empty knowledge base.
_READERS = frozenset({"documents", "delete", "search", "ask", "reindex", "doctor", "optimize"})
# Commands that use the data directory (the others run on a throwaway one, or none).
_USERS = _READERS | {"ingest", "keys", "serve", "migrate", "worker"}


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Fixed width, so `--help` reads the same everywhere (docs/reference/cli.md quotes it)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=88)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stream-rag", description=DESCRIPTION, formatter_class=_HelpFormatter
    )
    parser.add_argument(
        "--data-dir", type=Path, help="where documents are stored (STREAM_RAG_DATA_DIR)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # In the order `--help` lists them.
    serve.add_parser(commands)
    documents.add_parsers(commands)
    ask.add_parsers(commands)
    fake.add_parser(commands)
    keys.add_parser(commands)
    loadtest.add_parser(commands)
    index.add_parsers(commands)
    evaluate.add_parser(commands)
    database.add_parsers(commands)
    worker.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in a traceback at exit
    except BrokenPipeError:
        # `stream-rag documents --json | head`: the reader has what it wanted. Later writes
        # (the interpreter's own flush at exit) go nowhere instead of failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code


def private_data(data_dir: Path) -> None:
    """What the data directory holds (documents, the key table, blobs) is this user's only:
    files made from here on are 0600 and folders 0700, and an existing directory others can
    enter is closed to them (issue 29: it was world-readable)."""
    os.umask(0o077)
    if data_dir.is_dir() and data_dir.stat().st_mode & 0o077:
        try:
            data_dir.chmod(0o700)
        except OSError as exc:  # not its owner (a volume mounted for another user)
            print(f"warning: {data_dir} is open to other users ({exc})", file=sys.stderr)
            return
        print(f"note: {data_dir} was open to other users; now 0700", file=sys.stderr)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env(data_dir=args.data_dir)
        local = not getattr(args, "url", None)  # `--url` opens no data directory
        if (
            args.command in _USERS
            and local
            and settings.data_dir.exists()
            and not settings.data_dir.is_dir()
        ):
            # Making the store there was a FileExistsError traceback.
            raise DataDirMissingError(
                f"{settings.data_dir} is a file, not a data directory: check --data-dir or "
                "STREAM_RAG_DATA_DIR"
            )
        if args.command in _USERS and local:
            private_data(settings.data_dir)
        if args.command == "serve":
            return serve.run(settings, args)
        if args.command == "eval":
            return evaluate.run(settings, args)
        if args.command == "keys":
            return keys.run(settings, args)
        if args.command == "migrate":
            if args.to:
                return database.move_to(settings, args.to)
            return database.migrate(settings)
        if args.command == "worker":
            return worker.run(settings)
        if args.command == "fake-llm":
            return fake.run(args)
        if args.command == "loadtest":
            return loadtest.run(args)
        if args.command == "optimize" and args.url:
            return index.optimize_remote(args)
        if args.command == "ask" and args.url:
            return ask.ask_remote(args)
        if args.command == "ingest" and args.url:
            return documents.ingest_remote(settings, args)
        if args.command == "delete" and args.url:
            return documents.delete_remote(args)
        if args.command == "search" and args.url:
            return ask.search_remote(args)
        if args.command == "documents" and args.url:
            return documents.list_remote(args)
        stored_here = settings.database_url is None  # else the documents are in PostgreSQL
        if args.command in _READERS and stored_here and not settings.data_dir.is_dir():
            # Opening the store would make an empty one there: a mistyped --data-dir listed
            # "no documents" and exited 0, and left the new directory behind.
            raise DataDirMissingError(
                f"no data directory at {settings.data_dir} (nothing was ever stored there): "
                "check --data-dir or STREAM_RAG_DATA_DIR; `stream-rag ingest` creates it"
            )
        if args.command in ("documents",):
            store = open_store(settings)
            try:
                return documents.list_documents(store, args)
            finally:
                store.close()
        services = open_services(settings)
        try:
            if args.command == "ingest":
                return documents.ingest(services, args)
            if args.command == "delete":
                return documents.delete(services, args)
            if args.command == "search":
                return ask.search(services, args)
            if args.command == "reindex":
                return index.reindex(services)
            if args.command == "doctor":
                return index.doctor(services, args)
            if args.command == "optimize":
                return index.optimize(services)
            if args.command == "ask":
                return ask.ask(services, args)
        finally:
            services.close()
    except StreamRagError as exc:
        print(f"stream-rag: error: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    raise AssertionError(f"unhandled command {args.command}")
