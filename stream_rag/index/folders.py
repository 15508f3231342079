"""Storing (and indexing) local files and folders: used by the CLI and `serve --sample`."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from ..config import Settings
from ..errors import StreamRagError
from ..ingest.progress import Progress
from ..store.documents import DocumentStore
from ..types import UploadResult
from .indexing import Indexer


def sample_kb_dir() -> Path:
    return Path(str(resources.files("stream_rag") / "sample_kb"))


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
    indexer: Indexer | None = None,
    collection: str | None = None,
    name: str | None = None,
    quiet: bool = False,
) -> IngestReport:
    """Store (and, given an indexer, index) every file; failures are collected, not raised."""
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
            if result.duplicate:
                report.duplicates.append((path, result))
            else:
                if indexer is not None:
                    indexer.index_version(result.document.id, result.version.version)
                report.added.append((path, result))
        progress.advance(path.name)
    progress.close()
    return report


def sample_loaded_key(collection: str) -> str:
    """The store's meta key recording that the sample was loaded into `collection`."""
    return f"sample_loaded:{collection}"


def ingest_sample(store: DocumentStore, settings: Settings) -> IngestReport | None:
    """`serve --sample`: the sample knowledge base into the default collection, once. The
    store's meta records the load, so a sample document the operator deleted stays deleted;
    None when it was loaded before."""
    collection = settings.default_collection
    key = sample_loaded_key(collection)
    if store.meta(key) is not None:
        return None
    files = list(iter_files([sample_kb_dir()]))
    # Loaded by a release that kept no record: a sample file already stored says so.
    digests = {hashlib.sha256(path.read_bytes()).hexdigest() for path in files}
    stored = {v.sha256 for doc in store.list_documents(collection) for v in doc.versions}
    if digests & stored:
        store.set_meta(key, "found stored")
        return None
    report = ingest_paths(store, files, settings, collection=collection, quiet=True)
    if not report.failed:  # a file that failed is tried again at the next start
        store.set_meta(key, datetime.now(UTC).isoformat(timespec="seconds"))
    return report
