"""The way to the checkout: cart changes, the cart page, the checkout and what a station puts in between.

Nothing typed into the checkout or account forms is ever read: those handlers never parse the body.
"""

from __future__ import annotations

from urllib.parse import quote

from markupsafe import Markup
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from lab import catalogue, render, structured
from lab.botauth.verifier import Verifier, verified_keyid
from lab.cart import MAX_QUANTITY, Line
from lab.pages import SHAKE_COOKIE
from lab.receipts import RECEIPT_HEADER
from lab.shop import cart_of, consent_of, see_other, station_of

PICKUP_POINTS = ("pp-7c1d", "pp-2a9f", "pp-e43b", "pp-51f0")  # must match the pins drawn in lab.js
SHOP_EXTRAS = ("care-kit", "running-socks")  # the protection plan is sold only through s16's box


async def _form(request: Request) -> FormData:
    return await request.form(max_files=0, max_fields=20, max_part_size=4096)


def _int(form: FormData, name: str, low: int, high: int) -> int:
    text = str(form.get(name, "")).strip()
    digits = text.removeprefix("-")  # one minus sign at most: int() refuses "--1"
    if not (digits.isascii() and digits.isdigit()) or len(text) > 6 or not low <= int(text) <= high:
        raise HTTPException(400, f"The {name} must be a whole number from {low} to {high}.")
    return int(text)


def _size(request: Request, form: FormData, product: str, colour: str) -> int:
    text = str(form.get("size", ""))
    if station_of(request).has("sizes_as_images"):
        size: int | None = request.app.state.tokens.size_of(text, product, colour)
    else:
        size = catalogue.parse_size(text)
    if size is None:
        raise HTTPException(400, "Choose one of the sizes shown before adding to the cart.")
    return size


async def add(request: Request) -> Response:
    station, cart, form = station_of(request), cart_of(request), await _form(request)
    product = catalogue.product(str(form.get("product", "")))
    colour = product.colour(str(form.get("colour", ""))) if product else None
    if product is None or colour is None:
        raise HTTPException(400, "There is no such product or colour in this store.")
    size = _size(request, form, product.slug, colour.slug)
    pairs = _int(form, "pairs", 1, 2 if station.has("second_pair_free") else 1)
    if not colour.in_stock(size):
        if station.has("stock_by_colour"):  # s07: no text, only a shake on the product page
            response = see_other(f"/products/{product.slug}?colour={colour.slug}&size={size}")
            response.set_cookie(SHAKE_COOKIE, "1", max_age=10, httponly=True, samesite="lax")
            return response
        raise HTTPException(409, f"{catalogue.size_label(size)} is sold out in {colour.name}.")
    cart = cart.add(Line("shoes", product.slug, colour.slug, size, pairs, offer=pairs == 2))
    if station.has("preticked_extra") and form.get("protection") == "1":
        cart = cart.add(Line("extra", "protection-plan"))
    return see_other("/cart", cart, request)


async def add_extra(request: Request) -> Response:
    cart, form = cart_of(request), await _form(request)
    slug = str(form.get("extra", ""))
    if slug not in SHOP_EXTRAS:
        raise HTTPException(400, "There is no such extra in this store.")
    return see_other("/cart", cart.add(Line("extra", slug)), request)


async def update(request: Request) -> Response:
    cart, form = cart_of(request), await _form(request)
    if not cart.lines:
        raise HTTPException(400, "Your cart is empty.")
    index = _int(form, "line", 0, len(cart.lines) - 1)
    quantity = _int(form, "quantity", 1, MAX_QUANTITY)
    return see_other("/cart", cart.set_quantity(index, quantity), request)


async def remove(request: Request) -> Response:
    cart, form = cart_of(request), await _form(request)
    if not cart.lines:
        raise HTTPException(400, "Your cart is empty.")
    return see_other("/cart", cart.remove(_int(form, "line", 0, len(cart.lines) - 1)), request)


async def cart_page(request: Request) -> Response:
    notice = None
    if request.query_params.get("need") == "terms":
        notice = "Accept the terms of sale to go on to the checkout."
    elif request.query_params.get("need") == "point":
        notice = "Choose a pickup point to go on to the checkout."
    extras = [catalogue.find_extra(slug) for slug in SHOP_EXTRAS]
    cart = cart_of(request)
    # JSON with "</" escaped (structured._safe), so it cannot close its <script>.
    marker = Markup(structured.cart_marker(station_of(request).code, cart))  # noqa: S704
    return render.render(
        request, "cart.html", title="Your cart", cart=cart, extras=extras, notice=notice, marker=marker
    )


def _way_blocked(request: Request) -> str | None:
    """Where a station sends the shopper instead of the checkout, if it does."""
    station, query = station_of(request), request.query_params
    if station.has("account_wall"):
        return "/account/sign-in"
    if station.has("terms_box") and query.get("terms") != "accepted":
        return "/cart?need=terms"
    if station.has("map_pickup") and query.get("point") not in PICKUP_POINTS:
        return "/cart?need=point"
    return None


async def checkout(request: Request) -> Response:
    cart = cart_of(request)
    blocked = _way_blocked(request)
    if blocked:
        return see_other(blocked)
    if not cart.lines:
        return render.render(request, "checkout.html", title="Checkout", cart=cart, marker=None, receipt=None)
    station = station_of(request)
    order = structured.order(station.code, cart, consent_of(request))
    receipt = request.app.state.receipt_key.receipt(
        station.code, request.headers.get("host", "").strip().lower(), order, await agent_keyid_of(request)
    )
    # Both are JSON with "</" escaped (structured._safe), so they cannot close their <script>.
    marker = Markup(structured.script_json(order))  # noqa: S704
    response = render.render(
        request,
        "checkout.html",
        title="Checkout",
        cart=cart,
        marker=marker,
        receipt=Markup(structured.script_json(receipt)),  # noqa: S704
    )
    response.headers[RECEIPT_HEADER] = receipt
    return response


async def agent_keyid_of(request: Request) -> str | None:
    """The Web Bot Auth keyid of a request that carries a valid signature (on any station), else None."""
    verifier: Verifier = request.app.state.verifier
    return await verified_keyid(request.scope, verifier)


async def submit(request: Request) -> Response:
    # The body is deliberately never read: this store takes no orders and keeps nothing typed.
    station_of(request)
    return see_other("/checkout/received")


async def received(request: Request) -> Response:
    return render.render(request, "received.html", title="No order taken")


async def account(request: Request) -> Response:
    if not station_of(request).has("account_wall"):
        raise HTTPException(404, "There is no such page in this store.")
    error = None
    if request.method == "POST":  # the body is never read: accounts do not exist here
        error = "Accounts are not available in this test store."
    return render.render(request, "account.html", title="Sign in", error=error)


async def consent(request: Request) -> Response:
    if not station_of(request).has("cookie_wall"):
        raise HTTPException(404, "There is no such page in this store.")
    form = await _form(request)
    choice = str(form.get("choice", ""))
    if choice == "save":
        # Anything beyond the necessary cookies counts as "all" in the marker: more than the minimum was accepted.
        choice = "all" if form.get("statistics") or form.get("marketing") else "necessary"
    if choice not in ("all", "necessary"):
        raise HTTPException(400, "Choose one of the cookie options.")
    target = str(form.get("next", "/"))
    if not target.startswith("/") or target.startswith("//"):
        target = "/"
    response = see_other(quote(target, safe="/-_."))
    response.set_cookie("consent", choice, max_age=86400, httponly=True, samesite="lax")
    return response
