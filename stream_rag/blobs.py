"""Content-addressed storage of original bytes, and staging of incoming files."""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from .errors import EmptyFileError, FileTooLargeError

_COPY_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class StagedFile:
    """A fully received upload sitting in the staging area, hashed and measured."""

    path: Path
    sha256: str
    size: int


class Stager:
    """Receives an upload piece by piece, hashing as it goes and refusing past `limit` bytes.

    Use as a context manager: on exit the temporary file is removed unless the blob store
    took it over.
    """

    def __init__(self, tmp_dir: Path, limit: int) -> None:
        self.limit = limit
        self.path = tmp_dir / f"upload-{secrets.token_hex(8)}.part"
        self._hash = hashlib.sha256()
        self._size = 0
        self._file = self.path.open("xb")

    def write(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self.limit:
            raise FileTooLargeError(
                f"the file is larger than the upload limit of {_mb(self.limit)} "
                "(STREAM_RAG_MAX_UPLOAD_MB)"
            )
        self._hash.update(data)
        self._file.write(data)

    def finish(self) -> StagedFile:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        if self._size == 0:
            raise EmptyFileError("the file is empty (0 bytes)")
        return StagedFile(self.path, self._hash.hexdigest(), self._size)

    def discard(self) -> None:
        if not self._file.closed:
            self._file.close()
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> Stager:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.discard()


class BlobStore:
    """Original bytes under `root/ab/abcdef...`, named by their SHA-256."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp = root.parent / "tmp"
        self.root.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir(parents=True, exist_ok=True)

    def path_for(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def stager(self, limit: int) -> Stager:
        return Stager(self.tmp, limit)

    def stage_file(self, source: Path, limit: int) -> StagedFile:
        """Copy a local file into staging (used by the CLI); the caller owns the result."""
        stager = self.stager(limit)
        try:
            with source.open("rb") as fh:
                while data := fh.read(_COPY_CHUNK):
                    stager.write(data)
            return stager.finish()
        except BaseException:
            stager.discard()
            raise

    def commit(self, staged: StagedFile) -> Path:
        """Move a staged file to its content address (atomic rename; same bytes keep one copy)."""
        target = self.path_for(staged.sha256)
        if target.exists():
            # Refresh the mtime so a concurrent `sweep` treats the blob as fresh.
            os.utime(target)
            staged.path.unlink(missing_ok=True)
            return target
        target.parent.mkdir(exist_ok=True)
        os.replace(staged.path, target)
        _fsync_dir(target.parent)
        return target

    def remove(self, sha256: str) -> None:
        self.path_for(sha256).unlink(missing_ok=True)

    def sweep(self, referenced: set[str], older_than_s: float = 3600.0) -> int:
        """Delete unreferenced blobs and stale staging files left by a crash; return the count.

        Only files older than `older_than_s` go, so a concurrent upload that has stored its
        blob but not yet committed its metadata keeps it.
        """
        cutoff = time.time() - older_than_s
        removed = 0
        candidates = [p for p in self.root.glob("*/*") if p.name not in referenced]
        candidates += list(self.tmp.glob("upload-*.part"))
        for path in candidates:
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        return removed


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB"
