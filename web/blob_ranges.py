"""A blob streamed to the client in pieces, whole or as one byte range (players seek in videos).

The same code serves both blob backends: the folder reads the range from disk, S3 passes it to GetObject and
streams the answer on. Nothing is held whole in memory, and nothing is redirected: the bucket stays private, and
a blob is reached only under the page that names it.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from adapters.blobs import Blobs

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def byte_range(header: str | None, size: int) -> tuple[int, int] | None | bool:
    """(start, end) inclusive for one satisfiable range; None for the whole blob (no header, or several ranges,
    which a server may answer whole); False when the range cannot be met (416)."""
    if not header:
        return None
    match = _RANGE.match(header.strip())
    if match is None:
        return None
    first, last = match.groups()
    if not first and not last:
        return False
    if not first:  # the last N bytes
        start, end = max(size - int(last), 0), size - 1
    else:
        start, end = int(first), min(int(last), size - 1) if last else size - 1
    if start >= size or start > end:
        return False
    return start, end


def blob_response(request: Request, blobs: Blobs, digest: str, size: int, media_type: str,
                  headers: dict[str, str]) -> Response:
    """The blob (known to exist, of `size` bytes) as 200 or 206, or 416 when the range cannot be met."""
    headers = {**headers, "Accept-Ranges": "bytes"}
    wanted = byte_range(request.headers.get("range"), size)
    if wanted is False:
        return Response(status_code=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    if size == 0:
        return Response(b"", media_type=media_type, headers=headers)
    start, end = wanted if isinstance(wanted, tuple) else (0, size - 1)
    headers["Content-Length"] = str(end - start + 1)
    status = 200
    if isinstance(wanted, tuple):
        status, headers["Content-Range"] = 206, f"bytes {start}-{end}/{size}"
    if request.method == "HEAD":
        return Response(status_code=status, media_type=media_type, headers=headers)
    return StreamingResponse(blobs.chunks(digest, start, end), status_code=status, media_type=media_type,
                             headers=headers)
