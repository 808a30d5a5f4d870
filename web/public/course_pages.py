"""The course, its stations, the obstacle registry and the method: pages made from the course spec alone.

A released course never changes, so these pages are rendered once per course version and kept.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.agent.runs import MAX_SECONDS, MAX_STEPS
from domain.courses.course import CURRENT_VERSION, CourseSpec, UnknownStationError, load_course
from domain.courses.tasks import task_for, task_text
from web.errors import NotFound
from web.public.charts import station_view
from web.public.clarifications import CLARIFICATIONS, S13_VERIFIER
from web.rendering import send
from web.site import Site

WEEKLY_LINEUP = ["GPT-6 Luna", "Claude Haiku 5.5", "Gemini 3.8 Flash", "Qwen 3.8 Flash", "Amazon Nova 2 Lite"]
"""The method's named line-up of course 2.1; the live line-up is managed on the staff desk."""


def stages_of(course: CourseSpec) -> list[dict[str, Any]]:
    """The stations grouped by stage, control first, in the course's stage order."""
    keys = ["control"] + [s.key for s in course.stages]
    return [
        {"key": key, "name": course.stage_name(key), "stations": [s for s in course.stations if s.stage == key]}
        for key in keys
        if any(s.stage == key for s in course.stations)
    ]


async def course_page(request: Request) -> Response:
    site: Site = request.app.state.site
    course = load_course(CURRENT_VERSION)
    page = site.cache.get_or_make(
        ("course", course.version),
        lambda: site.renderer.page("course.html", {
            "nav": "course", "course": course, "stages": stages_of(course), "clarifications": CLARIFICATIONS,
        }),
    )
    return send(request, page, max_age=3600)


async def station_page(request: Request) -> Response:
    site: Site = request.app.state.site
    course = load_course(CURRENT_VERSION)
    code = request.path_params["code"].lower()
    try:
        station = course.station(code)
    except UnknownStationError:
        raise NotFound(f"Course {course.version} has no station {code!r}; it has s01 to s18.") from None
    codes = course.codes
    index = codes.index(code)

    def make() -> Any:
        return site.renderer.page("station.html", {
            "nav": "course", "course": course, "station": station, "stage_name": course.stage_name(station.stage),
            "task": task_text(course, task_for(station)),
            "clarification": CLARIFICATIONS.get(code),
            "verifier": S13_VERIFIER if code == "s13" else None,
            "previous": codes[index - 1] if index > 0 else None,
            "following": codes[index + 1] if index + 1 < len(codes) else None,
            "station_chart": station_view(site, code),
        })

    # The page holds the station's results over the weeks: kept per read-model version, made in a worker thread.
    key = ("station", course.version, code, site.version)
    page = site.cache.get(key) or site.cache.put(key, await site.call(make))
    return send(request, page, max_age=60)


async def registry_page(request: Request) -> Response:
    site: Site = request.app.state.site
    course = load_course(CURRENT_VERSION)
    entries = [s for s in course.stations if s.registry_code]
    page = site.cache.get_or_make(
        ("registry", course.version),
        lambda: site.renderer.page("registry.html", {"nav": "course", "course": course, "entries": entries}),
    )
    return send(request, page, max_age=3600)


async def method_page(request: Request) -> Response:
    site: Site = request.app.state.site
    course = load_course(CURRENT_VERSION)

    def make() -> Any:
        return site.renderer.page("method.html", {
            "nav": "method", "course": course, "lineup": WEEKLY_LINEUP,
            "obstacles": [s for s in course.stations if s.registry_code],
            "traps": [s for s in course.stations if s.is_trap],
            "reading": [s.code for s in course.stations if s.is_reading],
            "max_steps": MAX_STEPS, "max_seconds": int(MAX_SECONDS),
        })

    return send(request, site.cache.get_or_make(("method", course.version), make), max_age=3600)


routes = [
    Route("/course", course_page),
    Route("/course/{code:str}", station_page),
    Route("/registry", registry_page),
    Route("/method", method_page),
]
