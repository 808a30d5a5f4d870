"""The public site and the staff desk: one Starlette app, made by `create_app(settings)`.

Nothing is opened at import: the record, the blob store, the read models and the staff accounts are built in the
lifespan, and a background task follows the log so cached pages are replaced when a new event touches them.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from adapters.botauth import DIRECTORY_PATH, DIRECTORY_TYPE, directory_document, load_or_create_key
from adapters.settings import Settings
from adapters.wiring import build_runtime
from web import api, errors, mcp, org, submissions
from web.front_pages import AnswerRemembered, FrontPages
from web.proxy import ForwardedClient
from web.public import (
    agent_page,
    charts,
    course_pages,
    data_page,
    front,
    leaderboard,
    live,
    manual_tests,
    results,
    runs,
    spend,
)
from web.rendering import Page, Renderer, make_environment, send
from web.site import Site
from web.staff import desk, leaderboard_desk
from web.staff.guard import start_staff
from web.static_files import StaticFiles
from web.videos import VIDEO_NOTES, RunVideos

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"

SECURITY_HEADERS = [
    # Our own scripts and styles only; htmx is configured not to inject styles or evaluate code.
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; media-src 'self'; "
                                 b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
HSTS = (b"strict-transport-security", b"max-age=31536000; includeSubDomains")
"""Only on https (as the trusted proxy says, web/proxy.py): browsers ignore it over http, and a year of it
on a plain-http test server would only mislead."""


class SecurityHeaders:
    """Adds the same headers to every response (a raw ASGI middleware: cheaper than BaseHTTPMiddleware)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + SECURITY_HEADERS
                if scope.get("scheme") == "https":
                    message["headers"].append(HSTS)
            await send(message)

        await self.app(scope, receive, with_headers)


async def plain(request: Request) -> Response:
    """A plain route: the baseline the benchmark compares the cached pages with."""
    return PlainTextResponse("ok\n")


async def key_directory(request: Request) -> Response:
    site: Site = request.app.state.site
    page = site.cache.get_or_make(("directory",), lambda: Page(site.directory, DIRECTORY_TYPE))
    return send(request, page, max_age=86400)


def create_app(settings: Settings) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        runtime = await anyio.to_thread.run_sync(build_runtime, settings)
        try:
            key = await anyio.to_thread.run_sync(load_or_create_key, settings.agent_signing_key, settings.data_dir)
            site = Site(
                settings=settings, runtime=runtime, renderer=Renderer(make_environment(), {}),
                directory=directory_document(key), front=remembered,
            )
            app.state.site = site
            site.videos = RunVideos(runtime.blobs, settings.data_dir / VIDEO_NOTES, settings.video_encoder)
            if settings.video_encoder is None:
                log.warning("runs' videos cannot be made here: no ffmpeg on the PATH (Debian's: apt-get install "
                            "ffmpeg); their screenshots are shown without them")
            site.listeners = await results.start(site)
            await start_staff(site)
            await leaderboard.start(site)
            await agent_page.start(site)
            data_page.start(site)
            await submissions.start(site)
            leaderboard_desk.start(site)
            await site.refresh()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(site.follow)
                yield
                tasks.cancel_scope.cancel()
        finally:
            await anyio.to_thread.run_sync(runtime.close)

    remembered = FrontPages()
    routes = [  # the busiest first: the router tries them in order
        Route("/healthz", plain),
        *results.routes,
        Route(DIRECTORY_PATH, key_directory),
        *StaticFiles(STATIC).routes("/static"),
        *front.routes, *charts.routes, *course_pages.routes, *agent_page.routes, *runs.routes, *live.routes,
        *manual_tests.routes,
        *api.routes, *leaderboard.routes, *submissions.routes, *mcp.routes,
        *org.routes, *spend.routes, *data_page.routes,
        Mount("/staff", routes=desk.routes),
    ]
    return Starlette(
        routes=routes, lifespan=lifespan, exception_handlers=errors.handlers,
        # The proxy's word on the client and the scheme first, so the headers and the limits see them; the pages
        # remembered for this log position last, inside the security headers, before the router.
        middleware=[Middleware(ForwardedClient, trusted=settings.trusted_proxies), Middleware(SecurityHeaders),
                    Middleware(AnswerRemembered, pages=remembered)],
    )
