"""`stream-rag ingest`, `documents` and `delete`: documents into and out of the store."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..config import Settings
from ..counts import counted
from ..index.folders import IngestReport, ingest_paths, iter_files
from ..ingest.progress import Progress
from ..services import Services
from ..store.documents import DocumentStore
from ..types import UploadResult
from . import keys, remote

if TYPE_CHECKING:
    import httpx


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`ingest`, `documents`, `delete`."""
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
    ingest.add_argument(
        "--url",
        type=remote.server_url,
        help="upload through a running server's API (e.g. http://127.0.0.1:8000); waits "
        "until the server has indexed what was added",
    )
    ingest.add_argument(
        "--no-wait",
        action="store_true",
        help="with --url: return once the files are stored, before the server has indexed them",
    )

    documents = commands.add_parser(
        "documents", help="list stored documents", description="List stored documents."
    )
    documents.add_argument("--collection", help="only this collection")
    documents.add_argument("--json", action="store_true", help="print JSON instead of a table")
    documents.add_argument(
        "--url",
        type=remote.server_url,
        help="list through a running server's API (GET /v1/documents, a read key)",
    )

    delete = commands.add_parser(
        "delete",
        help="delete a document and all its versions",
        description="Delete a document and all its versions.",
    )
    delete.add_argument("doc_id")
    delete.add_argument(
        "--url",
        type=remote.server_url,
        help="delete through a running server's API (DELETE /v1/documents/ID, write)",
    )


def ingest(services: Services, args: argparse.Namespace) -> int:
    if args.name and (len(args.paths) != 1 or args.paths[0].is_dir()):
        print("stream-rag: error: --name needs exactly one file", file=sys.stderr)
        return 2
    # Catch up first (work a crash left, or a changed embedder), and record the index's
    # fingerprint, so the next `serve` does not index everything again.
    for doc_id, version in services.indexer.reconcile():
        services.indexer.index_version(doc_id, version)
    report = ingest_paths(
        services.store,
        args.paths,
        services.settings,
        indexer=services.indexer,
        collection=args.collection,
        name=args.name,
    )
    return _print_report(report)


def ingest_remote(settings: Settings, args: argparse.Namespace) -> int:
    import httpx

    report = IngestReport()
    files = list(iter_files(args.paths))
    progress = Progress(len(files))
    fields = {k: v for k, v in (("collection", args.collection), ("name", args.name)) if v}
    with httpx.Client(base_url=args.url, timeout=300, headers=keys.client_headers()) as client:
        for path in files:
            try:
                with path.open("rb") as fh:
                    response = client.post(
                        "/v1/documents", files={"file": (path.name, fh)}, data=fields
                    )
            except OSError as exc:
                report.failed.append((path, exc.strerror or str(exc)))
            except httpx.HTTPError as exc:
                print(f"stream-rag: error: cannot reach {args.url}: {exc}", file=sys.stderr)
                return 1
            else:
                if response.status_code in (200, 201):
                    result = UploadResult.from_json(response.json())
                    bucket = report.duplicates if result.duplicate else report.added
                    bucket.append((path, result))
                else:
                    report.failed.append((path, keys.error_message(response)))
            progress.advance(path.name)
        progress.close()
        if not args.no_wait:
            try:
                _wait_indexed(client, report)
            except httpx.HTTPError as exc:
                print(f"stream-rag: error: cannot reach {args.url}: {exc}", file=sys.stderr)
                return 1
    return _print_report(report)


def _wait_indexed(client: httpx.Client, report: IngestReport) -> None:
    """Poll each uploaded version until the server has indexed it, so a question asked next
    finds it; a version that failed to index moves to `report.failed` with the server's reason."""
    uploaded = (*report.added, *report.duplicates)
    pending = [(path, result) for path, result in uploaded if result.version.status == "indexing"]
    progress = Progress(len(pending))
    delay = 0.05
    while pending:
        still = []
        for path, result in pending:
            doc_id, number = quote(result.document.id, safe=""), result.version.version
            response = client.get(f"/v1/documents/{doc_id}/versions/{number}")
            if response.status_code != 200:  # e.g. a write-only key may not read: not waited
                print(
                    f"stream-rag: cannot see whether {path} is indexed: "
                    f"{keys.error_message(response)}",
                    file=sys.stderr,
                )
                continue
            version = response.json()
            if version.get("status") == "indexing":
                still.append((path, result))
                continue
            progress.advance(f"indexed {path.name}")
            if version.get("status") == "failed":
                reason = version.get("status_reason") or "no reason given"
                _move_to_failed(report, path, f"stored, not indexed: {reason}")
        pending = still
        if pending:
            time.sleep(delay)  # the server indexes in its own queue; nothing to wait on but it
            delay = min(delay * 1.5, 1.0)
    progress.close()


def _move_to_failed(report: IngestReport, path: Path, reason: str) -> None:
    report.added = [(p, r) for p, r in report.added if p != path]
    report.duplicates = [(p, r) for p, r in report.duplicates if p != path]
    report.failed.append((path, reason))


def _print_report(report: IngestReport) -> int:
    for path, result in report.added:
        print(f"added      {result.document.id}  v{result.version.version}  {path}")
    for path, result in report.duplicates:
        print(f"duplicate  {result.document.id}  v{result.version.version}  {path}")
    for path, reason in report.failed:
        print(f"failed     {path}: {reason}")
    print(
        f"summary: {len(report.added)} added, {counted(len(report.duplicates), 'duplicate')}, "
        f"{len(report.failed)} failed"
    )
    return 1 if report.failed else 0


def list_documents(store: DocumentStore, args: argparse.Namespace) -> int:
    documents = store.list_documents(args.collection)
    return _print_documents([d.to_json() for d in documents], args)


def list_remote(args: argparse.Namespace) -> int:
    params = {"collection": args.collection} if args.collection else {}
    try:
        page = remote.body(remote.call(args.url, "GET", "/v1/documents", params=params))
        if not isinstance(page, dict) or not isinstance(page.get("documents"), list):
            raise remote.RemoteFailed(f"{args.url} answered /v1/documents without documents")
    except remote.RemoteFailed as exc:
        return remote.fail(exc)
    return _print_documents(page["documents"], args)


def _print_documents(documents: list[dict[str, Any]], args: argparse.Namespace) -> int:
    """`documents` as `Document.to_json` gives them (here or from a server)."""
    if args.json:
        print(json.dumps(documents, indent=2, ensure_ascii=False))
        return 0
    if not documents:
        print("no documents")
        return 0
    print(f"{'ID':<24}  {'VER':>3}  {'CHUNKS':>6}  {'SIZE':>9}  {'COLLECTION':<12}  NAME")
    for d in documents:
        latest = d["versions"][-1]
        print(
            f"{d['id']:<24}  {latest['version']:>3}  {latest['chunk_count']:>6}  "
            f"{latest['size']:>9}  {d['collection']:<12}  {d['name']}"
        )
    return 0


def delete(services: Services, args: argparse.Namespace) -> int:
    document = services.store.get(args.doc_id)
    services.indexer.delete(args.doc_id)
    print(f"deleted {document.id} ({document.name}, {counted(len(document.versions), 'version')})")
    return 0


def delete_remote(args: argparse.Namespace) -> int:
    path = f"/v1/documents/{quote(args.doc_id, safe='')}"
    try:
        deleted = remote.body(remote.call(args.url, "DELETE", path))
        if not isinstance(deleted, dict) or not isinstance(deleted.get("versions"), int):
            raise remote.RemoteFailed(f"{args.url} answered the delete without a count")
    except remote.RemoteFailed as exc:
        return remote.fail(exc)
    versions = counted(deleted["versions"], "version")
    print(f"deleted {deleted.get('deleted')} ({deleted.get('name')}, {versions})")
    return 0
