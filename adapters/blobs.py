"""A content-addressed blob store on the file system: screenshots, element lists, traces, videos.

Blobs are named by their sha256 and written atomically (temporary file, fsync, rename), so a crash never
leaves a half blob under a real name, and writing the same bytes twice is a no-op. A large upload comes in as a
file (`put_file`), never as bytes in memory.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

_DIGEST = re.compile(r"^[0-9a-f]{64}$")
CHUNK = 1024 * 1024


class FileBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, digest: str) -> Path:
        if not _DIGEST.match(digest):
            raise KeyError(f"not a sha256 digest: {digest!r}")
        return self.root / digest[:2] / digest[2:4] / digest

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if path.exists():
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest

    def put_file(self, source: Path) -> str:
        """Move the file at `source` into the store (read in pieces, never whole) and return its sha256 digest.
        The file is gone afterwards, stored or not (the same bytes may be there already)."""
        hasher = hashlib.sha256()
        with open(source, "rb") as handle:
            while chunk := handle.read(CHUNK):
                hasher.update(chunk)
        digest = hasher.hexdigest()
        path = self._path(digest)
        if path.exists():
            Path(source).unlink(missing_ok=True)
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        os.close(fd)
        try:
            shutil.move(source, tmp)  # a rename on the same file system, else a copy
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        finally:
            Path(source).unlink(missing_ok=True)
        return digest

    def get(self, digest: str) -> bytes:
        path = self._path(digest)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise KeyError(f"no blob {digest}") from None

    def file(self, digest: str) -> Path:
        """Where the blob lies, for serving it from disk in pieces (a video) rather than reading it whole."""
        path = self._path(digest)
        if not path.is_file():
            raise KeyError(f"no blob {digest}")
        return path

    def head(self, digest: str, size: int) -> bytes:
        """The first `size` bytes of the blob (enough to tell its type)."""
        with self.file(digest).open("rb") as handle:
            return handle.read(size)

    def has(self, digest: str) -> bool:
        try:
            return self._path(digest).exists()
        except KeyError:
            return False
