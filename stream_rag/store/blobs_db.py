"""Original bytes in the database (`blob_parts`), for stores every replica shares
(PostgreSQL). Uploads are still staged on local disk; committed bytes are written in parts in
the transaction that stores their version, and read back into a local cache to be served."""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

from .blobs import BlobStore, StagedFile
from .sql import Backend

# One part per statement parameter: bounded memory however large the file.
PART_BYTES = 4 * 1024 * 1024


class DatabaseBlobStore(BlobStore):
    """`BlobStore` whose committed bytes live in the database; `root` is a local cache."""

    def __init__(self, root: Path, backend: Backend) -> None:
        super().__init__(root)
        self.backend = backend

    def commit(self, staged: StagedFile) -> Path:
        """Write the bytes in the caller's transaction (unless stored already), then keep the
        staged file as the cached copy."""
        db = self.backend.connection()
        stored = db.execute(
            "SELECT 1 FROM blob_parts WHERE sha256 = ? AND part = 0", (staged.sha256,)
        ).fetchone()
        if stored is None:
            with staged.path.open("rb") as fh:
                part = 0
                while data := fh.read(PART_BYTES):
                    db.execute(
                        "INSERT INTO blob_parts (sha256, part, data) VALUES (?, ?, ?)",
                        (staged.sha256, part, data),
                    )
                    part += 1
        return super().commit(staged)

    def fetch(self, sha256: str) -> Path | None:
        cached = super().fetch(sha256)
        if cached is not None:
            return cached
        target = self.path_for(sha256)
        # A name of its own: threads fetching the same bytes at once each write a whole file.
        partial = self._staging_dir() / f"fetch-{sha256}-{secrets.token_hex(8)}.part"
        digest, found = hashlib.sha256(), False
        # One part per statement: a large file is never held whole in memory.
        with partial.open("wb") as out:
            part = 0
            while True:
                row = (
                    self.backend.connection()
                    .execute(
                        "SELECT data FROM blob_parts WHERE sha256 = ? AND part = ?",
                        (sha256, part),
                    )
                    .fetchone()
                )
                if row is None:
                    break
                data = bytes(row[0])
                digest.update(data)
                out.write(data)
                found, part = True, part + 1
        if not found or digest.hexdigest() != sha256:
            partial.unlink(missing_ok=True)
            return None
        target.parent.mkdir(exist_ok=True)
        os.replace(partial, target)
        return target

    def remove(self, sha256: str) -> None:
        self.backend.connection().execute("DELETE FROM blob_parts WHERE sha256 = ?", (sha256,))
        super().remove(sha256)

    def sweep(self, referenced: set[str]) -> int:
        """Delete stored bytes and cached copies not in `referenced` (under the write lock)."""
        db = self.backend.connection()
        stored = {str(r[0]) for r in db.execute("SELECT DISTINCT sha256 FROM blob_parts")}
        for sha256 in stored - referenced:
            db.execute("DELETE FROM blob_parts WHERE sha256 = ?", (sha256,))
        super().sweep(referenced)
        return len(stored - referenced)
