"""Open data (CC BY 4.0): the ranking, the Matrix, the week's repeat runs, the course spec, the corrections log
and run recordings, each with a JSON Schema under /api/schemas/.

A published week answers with the exact bytes whose sha256 its publication recorded (the newest publication
unless `publication=N` or `as=corrected` asks otherwise); an unpublished week answers as corrected and says it
is provisional; a publication made while the week was in progress answers `CanItBuy-Status: provisional-publication`
(the week's final publication supersedes it). The repeat-run document is never part of a publication: it is
always as corrected, at the read models' position. Every answer carries a strong ETag and answers 304 to If-None-Match.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.courses.course import course_bytes
from domain.projections.canonical import sha256_hex
from domain.week.publishing import UnknownWeekError
from web.errors import BadRequest, NotFound
from web.public.recording import recording_json
from web.public.results import data_of
from web.public.runs import recording_of
from web.rendering import Page, send
from web.site import Site

JSON = "application/json"
ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIRS = (ROOT / "docs" / "schemas", Path(__file__).parent / "schemas")
"""The core's schemas of the week documents and logs, then the site's own (course, run)."""
KNOWN_PARAMS = {"week", "publication", "as"}


def _document(site: Site, kind: str, week: str, which: str, number: int | None) -> Page:
    data = data_of(site)
    info = data.known(week)
    published = bool(info and info.publications)
    if which == "corrected" or not published:
        docs = data.readmodels.week_documents(week)
        status = "provisional" if not published else "corrected"
        headers = {"CanItBuy-Status": status}
    else:
        index = -1 if number is None else number - 1
        if number is not None and not 1 <= number <= (info.publications if info else 0):
            raise NotFound(f"Week {week} has {info.publications if info else 0} publication(s), not {number}.")
        docs = data.readmodels.published_documents(week, index)
        shown = number if number is not None else info.publications  # type: ignore[union-attr]
        provisional = data.readmodels.publications(week)[shown - 1].provisional
        # a publication made while the week was in progress says so; the week's close supersedes it
        headers = {"CanItBuy-Status": "provisional-publication" if provisional else "published",
                   "CanItBuy-Publication": str(shown)}
    body = docs.ranking if kind == "ranking" else docs.matrix
    headers["CanItBuy-Sha256"] = sha256_hex(body)
    headers["Access-Control-Allow-Origin"] = "*"
    return Page(body, JSON, headers)


async def week_json(request: Request, kind: str) -> Response:
    site: Site = request.app.state.site
    params = request.query_params
    unknown = set(params) - KNOWN_PARAMS
    if unknown:
        raise BadRequest(f"unknown parameter {sorted(unknown)[0]!r}; use week, publication or as")
    which = params.get("as", "published")
    if which not in ("published", "corrected"):
        raise BadRequest("as: must be published or corrected")
    number = None
    if "publication" in params:
        publication = params["publication"]
        if not (publication.isascii() and publication.isdigit()) or int(publication) < 1:
            raise BadRequest("publication: must be a whole number from 1")
        number = int(publication)
    week = data_of(site).pick_week(params.get("week"))
    if week is None:
        raise NotFound("There are no public results yet.")
    key = (f"{kind}.json", week, which, number, site.version)
    page = site.cache.get(key) or site.cache.put(key, await site.call(_document, site, kind, week, which, number))
    return send(request, page, max_age=60)


async def ranking_json(request: Request) -> Response:
    return await week_json(request, "ranking")


async def matrix_json(request: Request) -> Response:
    return await week_json(request, "matrix")


def _repeats(site: Site, week: str) -> Page:
    data = data_of(site)
    try:
        body = data.readmodels.repeats_bytes(week)
    except UnknownWeekError:
        raise NotFound(f"There are no public results for week {week}.") from None
    info = data.known(week)
    status = "corrected" if info and info.publications else "provisional"
    headers = {"CanItBuy-Status": status, "CanItBuy-Sha256": sha256_hex(body), "Access-Control-Allow-Origin": "*"}
    return Page(body, JSON, headers)


async def repeats_json(request: Request) -> Response:
    """The week's repeat runs (docs/schemas/repeats.json), as corrected, at the read models' position."""
    site: Site = request.app.state.site
    params = request.query_params
    unknown = set(params) - {"week"}
    if unknown:
        raise BadRequest(f"unknown parameter {sorted(unknown)[0]!r}; use week")
    week = data_of(site).pick_week(params.get("week"))
    if week is None:
        raise NotFound("There are no public results yet.")
    key = ("repeats.json", week, site.version)
    page = site.cache.get(key) or site.cache.put(key, await site.call(_repeats, site, week))
    return send(request, page, max_age=60)


async def course_json(request: Request) -> Response:
    site: Site = request.app.state.site
    page = site.cache.get_or_make(("course.json",), lambda: Page(course_bytes(), JSON))
    return _open(send(request, page, max_age=3600))


async def corrections_json(request: Request) -> Response:
    site: Site = request.app.state.site
    key = ("corrections.json", site.version)
    page = site.cache.get(key) or site.cache.put(key, Page(await site.call(data_of(site).readmodels.corrections), JSON))
    return _open(send(request, page, max_age=60))


async def run_json(request: Request) -> Response:
    site: Site = request.app.state.site
    key = ("run.json", request.path_params["run_id"], site.version)
    page = site.cache.get(key)
    if page is None:
        recording = await recording_of(site, request.path_params["run_id"])
        page = site.cache.put(key, Page(recording_json(recording), JSON))
    return _open(send(request, page, max_age=10))


def schema_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder in reversed(SCHEMA_DIRS):
        if folder.is_dir():
            found.update({p.stem: p for p in folder.glob("*.json")})
    return found


async def schema(request: Request) -> Response:
    site: Site = request.app.state.site
    name = request.path_params["name"]
    path = schema_files().get(name)
    if path is None:
        raise NotFound(f"No schema {name!r}; there are: {', '.join(sorted(schema_files()))}.")
    page = site.cache.get_or_make(("schema", name), lambda: Page(path.read_bytes(), "application/schema+json"))
    return _open(send(request, page, max_age=3600))


async def schema_index(request: Request) -> Response:
    site: Site = request.app.state.site
    names = sorted(schema_files())
    body = ("{" + ",".join(f'"{n}":"/api/schemas/{n}.json"' for n in names) + "}").encode()
    return _open(send(request, site.cache.get_or_make(("schemas",), lambda: Page(body, JSON)), max_age=3600))


def _open(response: Response) -> Response:
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


routes = [
    Route("/api/ranking.json", ranking_json),
    Route("/api/matrix.json", matrix_json),
    Route("/api/repeats.json", repeats_json),
    Route("/api/course.json", course_json),
    Route("/api/corrections.json", corrections_json),
    Route("/api/runs/{run_id:str}.json", run_json),
    Route("/api/schemas/", schema_index),
    Route("/api/schemas/{name:str}.json", schema),
]
