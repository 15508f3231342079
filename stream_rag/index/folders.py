"""Storing (and indexing) local files and folders: used by the CLI and `serve --sample`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
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
