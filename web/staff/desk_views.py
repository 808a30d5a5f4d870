"""The desk's view of the public ranking, Matrix and recordings: the same pages, with "Correct this run" on each
recording and Matrix cell and "Correct this week" on each ranking row and station column.

They live under /staff, where the session cookie is sent (its path is /staff), and are rendered per request with
`Cache-Control: no-store`, never put in the page cache: the public addresses serve the same bytes to everyone,
and no staff link or token can reach a cached public response. Auditors see the same pages without the links.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from web.public.results import data_of, render_week
from web.public.runs import recording_of, render_recording
from web.rendering import Page
from web.site import Site
from web.staff.guard import staff_page
from web.staff.session import Session

RUN_BASE = "/staff/runs/"


class DeskView:
    """What the public templates' staff includes read (`desk`)."""

    def __init__(self, session: Session, stations: dict[str, str], public_path: str) -> None:
        self.email, self.role = session.email, session.role
        self.can_correct = session.role == "staff"
        self.public_path = public_path
        """The same page at its public address."""
        self.stations = stations
        """The station of each Matrix cell's run, for the link's accessible name."""


def desk_context(session: Session, public_path: str, stations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"desk": DeskView(session, stations or {}, public_path), "run_base": RUN_BASE, "picker_base": "/staff"}


def _private(page: Page) -> Response:
    return Response(page.body, media_type=page.media_type, headers={"Cache-Control": "no-store"})


def _render_week(site: Site, kind: str, raw_week: str | None, session: Session) -> Page:
    week = data_of(site).pick_week(raw_week)
    matrix = data_of(site).documents(week).matrix if week else None
    stations = {cell.run_id: code for m in matrix.models for code, cell in m.cells.items() if cell.run_id} \
        if matrix else {}
    public = f"/{kind}?week={week}" if week else f"/{kind}"
    return render_week(site, kind, week, desk_context(session, public, stations))


async def _week(request: Request, session: Session, kind: str) -> Response:
    site: Site = request.app.state.site
    return _private(await site.call(_render_week, site, kind, request.query_params.get("week"), session))


@staff_page
async def ranking(request: Request, session: Session) -> Response:
    return await _week(request, session, "ranking")


@staff_page
async def matrix(request: Request, session: Session) -> Response:
    return await _week(request, session, "matrix")


@staff_page
async def recording(request: Request, session: Session) -> Response:
    site: Site = request.app.state.site
    found = await recording_of(site, request.path_params["run_id"])
    context = desk_context(session, f"/runs/{found.run.id}")
    return _private(await site.call(render_recording, site, found, "/runs/", context))


routes = [
    Route("/ranking", ranking),
    Route("/matrix", matrix),
    Route("/runs/{run_id:str}", recording),
]
