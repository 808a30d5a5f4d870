"""The data directory and the SQLite files are ours alone: they hold password hashes, the site secret and keys.

Both are made readable by their owner only (0700 and 0600) whatever the umask. SQLite gives its -wal and -shm
files the mode of the database file, so making the database file first is enough.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def private_dir(path: Path) -> Path:
    """Make the directory (and its parents) if missing; the directory itself only its owner may enter."""
    path = Path(path)
    if not path.is_dir():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)  # mkdir's mode passes through the umask; this one does not
    return path


def private_file(path: Path) -> Path:
    """Make an empty file only its owner may read, unless it exists (then it is left as it is)."""
    path = Path(path)
    private_dir(path.parent)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return path


def write_once(path: Path, data: bytes) -> bytes:
    """Keep `data` in `path` (readable by its owner only) unless the file exists; return what the file holds.

    Two processes starting on one data directory (two site processes, a site and a worker) may both find no
    file: each writes its own to a temporary name and links it into place, which fails for the second. The name
    appears with its whole content, so the second reads the first one's, never a file still being written."""
    path = Path(path)
    private_dir(path.parent)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:
            os.link(temporary, path)
        except FileExistsError:
            return path.read_bytes()
        return data
    finally:
        os.unlink(temporary)
