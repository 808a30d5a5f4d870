"""The site's stylesheet and script, held in memory as cached pages and sent by `send`: gzipped to the browsers
that accept it (all do), with an ETag and a 304, instead of read from disk in a thread on every request.

Only the files in the folder when the site starts are served (no name from the address reaches the file system);
each is read again when its size or modification time changes, so an edited stylesheet shows without a restart.
"""

from __future__ import annotations

import mimetypes
import os
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from web.errors import NotFound
from web.rendering import Page, send

MAX_AGE = 300
"""The addresses carry no version: a changed stylesheet reaches every reader within five minutes."""


class StaticFiles:
    def __init__(self, directory: Path) -> None:
        self._files = {p.relative_to(directory).as_posix(): p for p in directory.rglob("*") if p.is_file()}
        self._pages: dict[str, tuple[tuple[int, int], Page]] = {}

    def page(self, name: str) -> Page:
        path = self._files.get(name)
        if path is None:
            raise NotFound(f"There is no file {name} here.")
        stat = os.stat(path)
        stamp = (stat.st_mtime_ns, stat.st_size)
        held = self._pages.get(name)
        if held is None or held[0] != stamp:
            media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
            held = self._pages[name] = (stamp, Page(path.read_bytes(), media_type))
        return held[1]

    async def serve(self, request: Request) -> Response:
        return send(request, self.page(request.path_params["name"]), max_age=MAX_AGE)

    def routes(self, prefix: str) -> list[Route]:
        return [Route(prefix + "/{name:path}", self.serve)]
