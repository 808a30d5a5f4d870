"""What every handler needs from a request: its station, its cart, the consent choice, and how to answer."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lab.cart import COOKIE, Cart, CartSigner
from lab.stations import Station

CONSENT_COOKIE = "consent"
CONSENT_CHOICES = ("all", "necessary")


def station_of(request: Request) -> Station:
    station: Station | None = request.scope.get("lab", {}).get("station")
    if station is None:
        raise HTTPException(404, "There is no store at this address.")
    return station


def signer_of(request: Request) -> CartSigner:
    signer: CartSigner = request.app.state.signer
    return signer


def cart_of(request: Request) -> Cart:
    """The shopper's cart; a forged or broken cookie raises CartCookieError (answered with a 400)."""
    return signer_of(request).decode(request.cookies.get(COOKIE))


def consent_of(request: Request) -> str | None:
    """The cookie choice made in s02, for the judge's marker; None in every other station."""
    if not station_of(request).has("cookie_wall"):
        return None
    choice = request.cookies.get(CONSENT_COOKIE)
    return choice if choice in CONSENT_CHOICES else None


def see_other(url: str, cart: Cart | None = None, request: Request | None = None) -> Response:
    """A 303 after a POST; when a cart is given it is written back to its host-only cookie."""
    response = RedirectResponse(url, status_code=303)
    if cart is not None and request is not None:
        set_cart(response, request, cart)
    return response


def set_cart(response: Response, request: Request, cart: Cart) -> None:
    # No Domain attribute: each station host keeps its own cart.
    response.set_cookie(COOKIE, signer_of(request).encode(cart), httponly=True, samesite="lax", path="/")


def base_context(request: Request) -> dict[str, object]:
    station = station_of(request)
    cart = cart_of(request)
    return {
        "station": station,
        "feature": station.feature,
        "cart_count": sum(line.quantity for line in cart.lines),
        "consent": consent_of(request),
        "path": request.url.path,
    }
