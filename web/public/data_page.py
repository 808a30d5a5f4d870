"""/data: the open dataset of every published week, as Parquet and CSV that pandas and DuckDB read by URL.

A week's files are made from the log when first asked for (docs/dataset.md), put in the blob store (content
addressed, so the same bytes are stored once) and kept in memory by release: (week, standing publication, the
week's log position). They are served from the blob file, so HEAD and Range requests work (readers that fetch a
Parquet footer first need them), with the sha256 as ETag.

Two addresses per file: /data/<week>/<file> is the week's current release (cached five minutes, since a correction
makes a new release), /data/<week>/<release>/<file> names one release and never changes (cached for a year,
immutable). A superseded release answers 404 naming the current one: its rows are still in the log, and
`canitbuy dataset export` makes only the current release.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapters.dataset import DatasetFile, dataset_files
from domain.projections.dataset import week_dataset
from domain.week.publications import standing
from web.blob_ranges import blob_response
from web.errors import NotFound
from web.public.archive import week_in_path
from web.public.results import data_of
from web.rendering import send
from web.site import Site

CURRENT_MAX_AGE = 300
IMMUTABLE = "public, max-age=31536000, immutable"


class FileEntry(msgspec.Struct, frozen=True):
    name: str
    size: int
    sha256: str
    media_type: str


class Release(msgspec.Struct, frozen=True):
    week: str
    release: int
    publication_number: int
    provisional: bool
    course_version: str
    runs: int
    steps: int
    files: list[FileEntry]

    def file(self, name: str) -> FileEntry | None:
        return next((f for f in self.files if f.name == name), None)


class Releases:
    """The releases made so far, newest kept (a small LRU: a release is a few files' metadata, no bytes)."""

    def __init__(self, capacity: int = 64) -> None:
        self._made: OrderedDict[tuple[str, int, int], Release] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity

    def get(self, site: Site, week: str) -> Release:
        """The week's current release; raises NotFound for a week not published."""
        data = data_of(site)
        info = data.known(week)
        publications = data.readmodels.publications(week)
        if info is None or not publications:
            raise NotFound(f"Week {week} has not been published, so it has no dataset yet.")
        key = (week, publications[standing(publications)].position, info.position)
        with self._lock:  # one maker at a time: a release replays the log, twice
            made = self._made.get(key)
            if made is None:
                made = self._made[key] = _make(site, week)
                while len(self._made) > self._capacity:
                    self._made.popitem(last=False)
            self._made.move_to_end(key)
            return made


def _make(site: Site, week: str) -> Release:
    dataset = week_dataset(site.runtime.record.read_log, week)
    files = dataset_files(dataset)
    for f in files:
        site.runtime.blobs.put(f.data)
    return Release(
        week=week, release=dataset.release, publication_number=dataset.publication_number,
        provisional=dataset.publication.provisional, course_version=dataset.course_version,
        runs=len(dataset.tables["runs"]), steps=len(dataset.tables["steps"]),
        files=[_entry(f) for f in files],
    )


def _entry(f: DatasetFile) -> FileEntry:
    return FileEntry(f.name, len(f.data), f.sha256, f.media_type)


def start(site: Site) -> None:
    site.dataset = Releases()


async def data_index(request: Request) -> Response:
    site: Site = request.app.state.site
    data = data_of(site)

    def make() -> Any:
        weeks = [w for w in data.weeks if w.publications]
        return site.renderer.page("data.html", {"nav": "data", "weeks": weeks, "release": None})

    return send(request, site.cache.get_or_make(("data", site.version), make), max_age=30)


async def week_data(request: Request) -> Response:
    site: Site = request.app.state.site
    week = week_in_path(request.path_params["week"])
    release = await site.call(site.dataset.get, site, week)

    def make() -> Any:
        return site.renderer.page("data.html", {"nav": "data", "week": week, "release": release})

    return send(request, site.cache.get_or_make(("data", week, release.release), make), max_age=30)


async def _serve(request: Request, release: Release, name: str, cache_control: str) -> Response:
    site: Site = request.app.state.site
    found = release.file(name)
    if found is None:
        raise NotFound(f"The dataset of {release.week} has no file {name}.")
    headers = {"Cache-Control": cache_control, "ETag": f'"{found.sha256}"',
               "Access-Control-Allow-Origin": "*"}  # notebooks and DuckDB-Wasm read it from other origins
    asked = {t.strip().removeprefix("W/") for t in request.headers.get("if-none-match", "").split(",")}
    if headers["ETag"] in asked or "*" in asked:
        return Response(status_code=304, headers=headers)
    # through the blob store, either backend, with byte ranges (Parquet readers fetch the footer first)
    return blob_response(request, site.runtime.blobs, found.sha256, found.size, found.media_type, headers)


async def current_file(request: Request) -> Response:
    site: Site = request.app.state.site
    week = week_in_path(request.path_params["week"])
    release = await site.call(site.dataset.get, site, week)
    return await _serve(request, release, request.path_params["name"], f"public, max-age={CURRENT_MAX_AGE}")


async def release_file(request: Request) -> Response:
    site: Site = request.app.state.site
    week = week_in_path(request.path_params["week"])
    release = await site.call(site.dataset.get, site, week)
    asked = request.path_params["release"]
    if asked != release.release:
        raise NotFound(f"Release {asked} of {week} is not the current one; the current release is "
                       f"{release.release} (see /data/{week}).")
    return await _serve(request, release, request.path_params["name"], IMMUTABLE)


routes = [
    Route("/data", data_index),
    Route("/data/{week:str}", week_data),
    Route("/data/{week:str}/{name:str}", current_file),
    Route("/data/{week:str}/{release:int}/{name:str}", release_file),
]
