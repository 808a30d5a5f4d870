"""The list of staff actions (web/staff/action_log.py folds it), for staff and auditors."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from web.site import Site
from web.staff.guard import desk_of, render, staff_page
from web.staff.session import Session

SHOWN = 300


@staff_page
async def staff_actions(request: Request, session: Session) -> Response:
    site: Site = request.app.state.site
    actions = await site.call(desk_of(request).actions.caught_up, site)
    return render(request, "staff/actions.html", session, {
        "nav": "", "actions": actions[:SHOWN], "total": len(actions),
    })


routes = [Route("/actions", staff_actions)]
