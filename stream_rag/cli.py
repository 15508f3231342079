"""The `stream-rag` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .config import Settings
from .documents import DocumentStore
from .errors import StreamRagError
from .progress import Progress
from .types import UploadResult

DESCRIPTION = """\
stream_rag: a streaming RAG backend that only sends sentences whose citations check out.

Settings come from STREAM_RAG_* environment variables (and a .env file); see README.md."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Fixed width, so `--help` reads the same everywhere (README.md quotes it)."""

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

    serve = commands.add_parser(
        "serve", help="run the HTTP API and web page", description="Run the HTTP API."
    )
    serve.add_argument("--host", help="interface to bind (STREAM_RAG_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind (STREAM_RAG_PORT, default 8000)")
    serve.add_argument(
        "--sample",
        action="store_true",
        help="first ingest the bundled sample knowledge base (skipped if already stored)",
    )

    ingest = commands.add_parser(
        "ingest",
        help="store files or whole folders as documents",
        description="Store files, or every file under the given folders, as documents. "
        "Identical bytes already in the collection are reported as duplicates. Exits 1 if "
        "any file failed.",
    )
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    ingest.add_argument("--collection", help="collection to add to (default: default)")
    ingest.add_argument("--name", help="display name (only with a single file)")

    documents = commands.add_parser(
        "documents", help="list stored documents", description="List stored documents."
    )
    documents.add_argument("--collection", help="only this collection")
    documents.add_argument("--json", action="store_true", help="print JSON instead of a table")

    delete = commands.add_parser(
        "delete",
        help="delete a document and all its versions",
        description="Delete a document and all its versions.",
    )
    delete.add_argument("doc_id")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env(data_dir=args.data_dir)
        if args.command == "serve":
            return _serve(settings, args)
        store = _open(settings)
        try:
            if args.command == "ingest":
                return _ingest(store, settings, args)
            if args.command == "documents":
                return _documents(store, args)
            if args.command == "delete":
                document = store.delete(args.doc_id)
                print(f"deleted {document.id} ({document.name}, {len(document.versions)} versions)")
                return 0
        finally:
            store.close()
    except StreamRagError as exc:
        print(f"stream-rag: error: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    raise AssertionError(f"unhandled command {args.command}")


def _open(settings: Settings) -> DocumentStore:
    from .app import open_store

    return open_store(settings)


# -- serve ------------------------------------------------------------------------------------


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn

    from .app import create_app

    settings = settings.with_overrides(host=args.host, port=args.port)
    if args.sample:
        store = _open(settings)
        try:
            report = ingest_paths(store, [sample_kb_dir()], settings, quiet=True)
        finally:
            store.close()
        print(
            f"sample knowledge base: {len(report.added)} added, "
            f"{len(report.duplicates)} already stored",
            file=sys.stderr,
        )
    print(f"serving on http://{settings.host}:{settings.port}", file=sys.stderr)
    uvicorn.run(
        create_app(settings), host=settings.host, port=settings.port, log_level=settings.log_level
    )
    return 0


def sample_kb_dir() -> Path:
    return Path(str(resources.files("stream_rag") / "sample_kb"))


# -- ingest -----------------------------------------------------------------------------------


@dataclass(slots=True)
class IngestReport:
    added: list[tuple[Path, UploadResult]] = field(default_factory=list)
    duplicates: list[tuple[Path, UploadResult]] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)


def iter_files(paths: Sequence[Path]) -> Iterator[Path]:
    """Files named directly, and every non-hidden file under named folders, in sorted order."""
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                relative = child.relative_to(path)
                if child.is_file() and not any(p.startswith(".") for p in relative.parts):
                    yield child
        else:
            yield path


def ingest_paths(
    store: DocumentStore,
    paths: Sequence[Path],
    settings: Settings,
    *,
    collection: str | None = None,
    name: str | None = None,
    quiet: bool = False,
) -> IngestReport:
    files = list(iter_files(paths))
    report = IngestReport()
    progress = Progress(len(files))
    progress.enabled = progress.enabled and not quiet
    for path in files:
        try:
            staged = store.blobs.stage_file(path, settings.max_upload_bytes)
            try:
                result = store.add(
                    staged,
                    filename=path.name,
                    name=name,
                    collection=collection or settings.default_collection,
                )
            finally:
                staged.path.unlink(missing_ok=True)
        except StreamRagError as exc:
            report.failed.append((path, exc.message))
        except OSError as exc:
            report.failed.append((path, exc.strerror or str(exc)))
        else:
            (report.duplicates if result.duplicate else report.added).append((path, result))
        progress.advance(path.name)
    progress.close()
    return report


def _ingest(store: DocumentStore, settings: Settings, args: argparse.Namespace) -> int:
    if args.name and (len(args.paths) != 1 or args.paths[0].is_dir()):
        print("stream-rag: error: --name needs exactly one file", file=sys.stderr)
        return 2
    report = ingest_paths(store, args.paths, settings, collection=args.collection, name=args.name)
    for path, result in report.added:
        print(f"added      {result.document.id}  v{result.version.version}  {path}")
    for path, result in report.duplicates:
        print(f"duplicate  {result.document.id}  v{result.version.version}  {path}")
    for path, reason in report.failed:
        print(f"failed     {path}: {reason}")
    print(
        f"summary: {len(report.added)} added, {len(report.duplicates)} duplicates, "
        f"{len(report.failed)} failed"
    )
    return 1 if report.failed else 0


# -- documents --------------------------------------------------------------------------------


def _documents(store: DocumentStore, args: argparse.Namespace) -> int:
    documents = store.list_documents(args.collection)
    if args.json:
        print(json.dumps([d.to_json() for d in documents], indent=2, ensure_ascii=False))
        return 0
    if not documents:
        print("no documents")
        return 0
    print(f"{'ID':<24}  {'VER':>3}  {'CHUNKS':>6}  {'SIZE':>9}  {'COLLECTION':<12}  NAME")
    for d in documents:
        latest = d.latest
        print(
            f"{d.id:<24}  {latest.version:>3}  {latest.chunk_count:>6}  {latest.size:>9}  "
            f"{d.collection:<12}  {d.name}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
