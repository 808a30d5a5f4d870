"""The data directory and the SQLite files are ours alone: they hold password hashes, the site secret and keys.

Both are made readable by their owner only (0700 and 0600) whatever the umask. SQLite gives its -wal and -shm
files the mode of the database file, so making the database file first is enough.
"""

from __future__ import annotations

import contextlib
import os
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
