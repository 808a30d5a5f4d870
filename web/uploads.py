"""An uploaded file into the blob store in pieces: never read whole into memory.

Starlette's form parser keeps a file part in memory up to 1 MB and on disk beyond it. From there the file is copied
in CHUNK pieces to a temporary file of our own (in the data dir's uploads/ folder), its type checked on the first
bytes and its size on every piece, then moved into the blob store. A file refused on the way leaves nothing behind.
The whole request is bounded before it is read by the Content-Length check of staff_action.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from starlette.datastructures import UploadFile

from web.site import Site

CHUNK = 1024 * 1024
HEAD = 16
"""Bytes looked at to tell a file's type."""


@dataclass(frozen=True)
class UploadRule:
    what: str
    """How the form names the file, e.g. "the video"."""
    max_bytes: int
    types: dict[str, str]
    """Content types accepted, each with the kind its first bytes must show."""
    kind_of: Callable[[bytes], str | None]
    """The kind the first HEAD bytes show (None: none we take)."""
    missing: str
    """What to say when no file came."""
    wrong_content: str
    """What to say when the first bytes are not of the type claimed."""


async def store_upload(site: Site, upload: object, rule: UploadRule, error: type[Exception]) -> str:
    """The upload's digest in the blob store; raises `error` with a message for the form when it is refused."""
    if not isinstance(upload, UploadFile) or not upload.filename:
        raise error(rule.missing)
    kind = rule.types.get(upload.content_type or "")
    if kind is None:
        raise error(f"{rule.what} must be {' or '.join(sorted(set(rule.types.values())))}")
    limit = f"{rule.what} is larger than {rule.max_bytes // (1024 * 1024)} MB"
    if upload.size is not None and upload.size > rule.max_bytes:
        raise error(limit)
    folder = site.settings.data_dir / "uploads"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=folder, prefix="upload-")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            await upload.seek(0)
            size, first = 0, True
            while chunk := await upload.read(CHUNK):
                if first and rule.kind_of(chunk[:HEAD]) != kind:
                    raise error(rule.wrong_content)
                first, size = False, size + len(chunk)
                if size > rule.max_bytes:
                    raise error(limit)
                await site.call(out.write, chunk)
            if first:
                raise error(f"{rule.what} is empty")
        return str(await site.call(site.runtime.blobs.put_file, path))
    finally:
        path.unlink(missing_ok=True)
