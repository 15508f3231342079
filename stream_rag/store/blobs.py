"""Content-addressed storage of original bytes, and staging of incoming files."""

from __future__ import annotations

import fcntl
import hashlib
import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ..errors import EmptyFileError, FileTooLargeError

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
    """Original bytes under `root/ab/abcdef...`, named by their SHA-256.

    Uploads are staged in `tmp/p-<id>/`, one folder per open store, whose `.lock` the store
    holds (flock) while it lives: a folder whose lock can be taken belongs to no live process,
    so everything in it was left by a crash, however recent.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp = root.parent / "tmp"
        self.root.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir(parents=True, exist_ok=True)
        self._staging: Path | None = None
        self._lock_fd: int | None = None

    def path_for(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def fetch(self, sha256: str) -> Path | None:
        """A local file holding these bytes, or None if they are not stored."""
        path = self.path_for(sha256)
        return path if path.is_file() else None

    def stager(self, limit: int) -> Stager:
        return Stager(self._staging_dir(), limit)

    def _staging_dir(self) -> Path:
        if self._staging is None:
            # Locked before it gets its final name, so a sweep never sees it unlocked.
            fresh = self.tmp / f".new-{secrets.token_hex(8)}"
            fresh.mkdir()
            fd = os.open(fresh / ".lock", os.O_CREAT | os.O_RDWR, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            final = self.tmp / f"p-{fresh.name.removeprefix('.new-')}"
            os.rename(fresh, final)
            self._staging, self._lock_fd = final, fd
        return self._staging

    def close(self) -> None:
        """Give up this store's staging folder (files still in it are abandoned uploads)."""
        if self._lock_fd is not None and self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            os.close(self._lock_fd)
            self._staging, self._lock_fd = None, None

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

    def sweep(self, referenced: set[str]) -> int:
        """Delete blobs not in `referenced`; return the count. The caller must hold the
        store's write lock: blobs are committed under it, with the rows that reference them."""
        removed = 0
        for path in self.root.glob("*/*"):
            if path.name not in referenced:
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    def sweep_staging(self) -> int:
        """Delete what crashed processes left in staging: every staging folder no live store
        holds, and loose files of the old layout. Returns the number of files removed."""
        removed = 0
        for entry in self.tmp.iterdir():
            if entry.is_file():
                if entry.name.startswith("upload-") and entry.suffix == ".part":
                    entry.unlink(missing_ok=True)
                    removed += 1
            elif entry.name.startswith("p-"):
                removed += _remove_unlocked(entry)
            elif entry.name.startswith(".new-") and time.time() - entry.stat().st_mtime > 3600:
                # A crash between mkdir and rename; give a live creator ample time to finish.
                removed += _remove_unlocked(entry)
        return removed


def _remove_unlocked(folder: Path) -> int:
    """Remove `folder` unless a live store holds its lock; the number of files removed."""
    try:
        fd = os.open(folder / ".lock", os.O_RDWR)
    except FileNotFoundError:
        fd = None
    except OSError:
        return 0
    try:
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return 0  # in flight
        files = sum(1 for p in folder.rglob("*") if p.is_file() and p.name != ".lock")
        shutil.rmtree(folder, ignore_errors=True)
        return files
    finally:
        if fd is not None:
            os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB"
