"""The pages a shopper reads: listing, categories, product pages, help pages, sitemap and robots.txt."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from lab import catalogue, render, structured
from lab.shop import station_of

SHAKE_COOKIE = "shake"


@dataclass(frozen=True)
class SizeOption:
    size: int
    in_stock: bool
    token: str  # what the size button sends: the number, or s05's opaque token


def _shoe(product: catalogue.Product) -> Markup:
    colour = product.colours[0]
    return render.shoe_svg(product.name, colour.name, colour.hex)


def _listing(request: Request, category: str | None) -> Response:
    heading = catalogue.CATEGORIES[category] + " shoes" if category else "All shoes"
    return render.render(
        request,
        "listing.html",
        title=heading,
        heading=heading,
        products=catalogue.in_category(category),
        shoe=_shoe,
        tile_tokens=request.app.state.tokens.tile_token,
    )


async def listing(request: Request) -> Response:
    return _listing(request, None)


async def category(request: Request) -> Response:
    slug = request.path_params["slug"]
    if slug not in catalogue.CATEGORIES:
        raise HTTPException(404, "There is no such category in this store.")
    return _listing(request, slug)


def _chosen_size(request: Request, product: catalogue.Product, colour: catalogue.Colour) -> int | None:
    text = request.query_params.get("size")
    if text is None:
        return None
    if station_of(request).has("sizes_as_images"):
        size: int | None = request.app.state.tokens.size_of(text, product.slug, colour.slug)
    else:
        size = catalogue.parse_size(text)
    if size is None:
        raise HTTPException(404, "This shoe does not come in that size.")
    return size


def _size_options(request: Request, product: catalogue.Product, colour: catalogue.Colour) -> list[SizeOption]:
    images = station_of(request).has("sizes_as_images")
    tokens = request.app.state.tokens
    return [
        SizeOption(
            size, colour.in_stock(size), tokens.size_token(product.slug, colour.slug, size) if images else str(size)
        )
        for size in catalogue.SIZES
    ]


async def product_page(request: Request) -> Response:
    station = station_of(request)
    product = catalogue.product(request.path_params["slug"])
    if product is None:
        raise HTTPException(404, "There is no such product in this store.")
    colour_param = request.query_params.get("colour")
    colour = product.colour(colour_param)
    if colour is None:
        raise HTTPException(404, "This shoe does not come in that colour.")
    chosen = _chosen_size(request, product, colour)
    sizes = _size_options(request, product, colour)
    chosen_option = next((s for s in sizes if s.size == chosen), None)
    # s07 lets a sold-out size look addable; adding it then fails on the server.
    can_add = chosen_option is not None and (chosen_option.in_stock or station.has("stock_by_colour"))
    shake = station.has("stock_by_colour") and request.cookies.get(SHAKE_COOKIE) == "1"
    jsonld = None
    if not station.has("no_structured_data"):
        # JSON with "</" escaped (structured._safe): safe inside its <script>.
        data = structured.product_group(product, with_delivery=not station.has("delivery_in_cart"))
        jsonld = Markup(data)  # noqa: S704
    response = render.render(
        request,
        "product.html",
        title=product.name,
        product=product,
        colour=colour,
        colour_chosen=colour_param is not None,
        colour_shown=colour_param is not None or not station.has("sizes_after_colour"),
        sizes=sizes,
        chosen_size=chosen,
        chosen_token=chosen_option.token if chosen_option else None,
        can_add=can_add,
        shake=shake,
        jsonld=jsonld,
        picture=render.shoe_svg(product.name, colour.name, colour.hex),
        delivery_cents=catalogue.DELIVERY_CENTS,
        return_days=catalogue.RETURN_DAYS,
        plan_cents=catalogue.find_extra("protection-plan").price_cents,  # type: ignore[union-attr]
    )
    if shake:
        response.delete_cookie(SHAKE_COOKIE)
    return response


async def help_delivery(request: Request) -> Response:
    return render.render(request, "help_delivery.html", title="Delivery", delivery_cents=catalogue.DELIVERY_CENTS)


async def help_returns(request: Request) -> Response:
    return render.render(request, "help_returns.html", title="Returns", return_days=catalogue.RETURN_DAYS)


def _base(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


async def sitemap(request: Request) -> Response:
    station_of(request)
    urls = [f"{_base(request)}/"] + [f"{_base(request)}/products/{p.slug}" for p in catalogue.PRODUCTS]
    body = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>\n'
    )
    return Response(xml, media_type="application/xml")


async def robots(request: Request) -> Response:
    station_of(request)
    return PlainTextResponse(f"User-agent: *\nAllow: /\nSitemap: {_base(request)}/sitemap.xml\n")


async def size_image(request: Request) -> Response:
    """s05's pictures of numbers, addressed only by an opaque token."""
    size = request.app.state.tokens.size_of(request.path_params["token"])
    if size is None or not station_of(request).has("sizes_as_images"):
        raise HTTPException(404, "No such image.")
    return Response(render.size_image_svg(size), media_type="image/svg+xml")


async def tile_target(request: Request) -> Response:
    """s04's tiles resolve their opaque token to a product address only when clicked."""
    slug = request.app.state.tokens.tile(request.path_params["token"])
    if slug is None or not station_of(request).has("tiles_without_links"):
        raise HTTPException(404, "No such tile.")
    return JSONResponse({"url": f"/products/{slug}"})
