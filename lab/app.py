"""The lab's composition root: one Starlette app for every station, routed by the Host header.

`s05.lab.localhost` is station s05; the bare domain is the lab index; any other host gets a 404 page. Cookies
are host-only, so each station keeps its own cart and consent. The secret that signs carts and names opaque
tokens is made here, once per process; the receipt key is given (to outlive restarts) or made here too.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from lab import ordering, pages, render
from lab.botauth.directory import KeyDirectory
from lab.botauth.gate import BotGate
from lab.botauth.verifier import Verifier
from lab.cart import COOKIE, CartCookieError, CartSigner
from lab.hosts import BodyLimit, HostRouter
from lab.ratelimit import LabLimits, RateLimit
from lab.receipts import RECEIPT_KEYS_PATH, ReceiptKey
from lab.shell import Shell
from lab.stations import named
from lab.tokens import OpaqueTokens

_TITLES = {400: "That did not work", 404: "Not found", 405: "Not allowed", 409: "Sold out", 413: "Too much data"}


async def _index(request: Request) -> Response:
    if not request.scope["lab"]["index"]:
        return await pages.listing(request)
    port = f":{request.url.port}" if request.url.port else ""
    return render.render(
        request,
        "index.html",
        stations=list(request.app.state.stations.values()),
        domain=request.app.state.domain,
        scheme=request.url.scheme,
        port=port,
    )


async def _receipt_keys(request: Request) -> Response:
    """The public key(s) that receipts verify under, on the bare domain and every station alike."""
    return JSONResponse(
        request.app.state.receipt_key.jwks(),
        media_type="application/jwk-set+json",
        headers={"Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*"},
    )


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    title = _TITLES.get(error.status_code, "Something went wrong")
    return render.render(request, "error.html", status=error.status_code, bare=True, title=title, message=error.detail)


async def _cart_error(request: Request, error: Exception) -> Response:
    response = render.render(
        request,
        "error.html",
        status=400,
        bare=True,
        title="Your cart could not be read",
        message="The cart cookie was not made by this store, so it was cleared. Please add your shoes again.",
    )
    response.delete_cookie(COOKIE)
    return response


ROUTES = [
    Route("/", _index),
    Route("/category/{slug}", pages.category),
    Route("/products/{slug}", pages.product_page),
    Route("/help/delivery", pages.help_delivery),
    Route("/help/returns", pages.help_returns),
    Route("/sitemap.xml", pages.sitemap),
    Route("/robots.txt", pages.robots),
    Route(RECEIPT_KEYS_PATH, _receipt_keys),
    Route("/img/sizes/{token}.svg", pages.size_image),
    Route("/api/tiles/{token}", pages.tile_target),
    Route("/cart", ordering.cart_page),
    Route("/cart/add", ordering.add, methods=["POST"]),
    Route("/cart/add-extra", ordering.add_extra, methods=["POST"]),
    Route("/cart/update", ordering.update, methods=["POST"]),
    Route("/cart/remove", ordering.remove, methods=["POST"]),
    Route("/checkout", ordering.checkout),
    Route("/checkout/submit", ordering.submit, methods=["POST"]),
    Route("/checkout/received", ordering.received),
    Route("/account/sign-in", ordering.account, methods=["GET", "POST"]),
    Route("/account/create", ordering.account, methods=["POST"]),
    Route("/consent", ordering.consent, methods=["POST"]),
    Mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static"),
]


def create_app(
    domain: str = "lab.localhost",
    trust_local_directories: bool = False,
    station_names: dict[str, str] | None = None,
    receipt_key: bytes | None = None,
    limits: LabLimits | None = None,
) -> Starlette:
    """The lab app. `trust_local_directories` lets s13 fetch key directories over http from loopback and from
    private networks (tests). `receipt_key` is the 32-byte Ed25519 seed that signs receipts (None: one made for
    this process, so receipts verify only while it runs). `limits` holds every client to the course's pace
    (lab/ratelimit.py); None serves without limits (tests that drive the lab hard from one address)."""
    stations = named(station_names)
    secret = secrets.token_bytes(32)
    verifier = Verifier(KeyDirectory(trust_local=trust_local_directories))
    limit = [Middleware(RateLimit, limits=limits, verifier=verifier)] if limits is not None else []
    app = Starlette(
        routes=ROUTES,
        middleware=[
            Middleware(HostRouter, domain=domain, stations=stations),
            *limit,
            Middleware(BodyLimit),
            Middleware(BotGate, verifier=verifier),
            Middleware(Shell),
        ],
        exception_handlers={HTTPException: _http_error, CartCookieError: _cart_error},
    )
    app.state.domain = domain
    app.state.stations = stations
    app.state.signer = CartSigner(secret)
    app.state.tokens = OpaqueTokens(secret)
    app.state.verifier = verifier
    app.state.receipt_key = ReceiptKey(receipt_key)
    return app
