"""What the store writes for machines: schema.org product data for agents, the order marker for the judge."""

from __future__ import annotations

import json

from lab import catalogue
from lab.cart import Cart

_STOCK = {True: "https://schema.org/InStock", False: "https://schema.org/OutOfStock"}


def _safe(data: object) -> str:
    # Inside <script>, "</" would end the element early; JSON allows the escaped form.
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def _shipping() -> dict[str, object]:
    """Delivery terms, which schema.org defines on an Offer (not on a product): where a reader looks for them."""
    return {
        "@type": "OfferShippingDetails",
        "shippingRate": {
            "@type": "MonetaryAmount",
            "value": f"{catalogue.DELIVERY_CENTS / 100:.2f}",
            "currency": catalogue.CURRENCY,
        },
    }


def _variant(
    product: catalogue.Product, colour: catalogue.Colour, size: int, with_delivery: bool
) -> dict[str, object]:
    offer: dict[str, object] = {
        "@type": "Offer",
        "price": f"{product.price_cents / 100:.2f}",
        "priceCurrency": catalogue.CURRENCY,
        "availability": _STOCK[colour.in_stock(size)],
    }
    if with_delivery:
        offer["shippingDetails"] = _shipping()
    return {
        "@type": "Product",
        "sku": f"{product.slug}-{colour.slug}-{size}",
        "name": f"{product.name}, {colour.name}, {catalogue.size_label(size)}",
        "color": colour.name,
        "size": catalogue.size_label(size),
        "offers": offer,
    }


def product_group(product: catalogue.Product, with_delivery: bool = True) -> str:
    """A ProductGroup whose variants run colour by colour, sizes ascending: the order of the size buttons.

    The delivery cost sits on every offer (the group's AggregateOffer, itself an Offer, and each variant's), never
    on the group: s15 leaves it out of all of them, so the cost is first seen in the cart.
    """
    offers: dict[str, object] = {
        "@type": "AggregateOffer",
        "lowPrice": f"{product.price_cents / 100:.2f}",
        "highPrice": f"{product.price_cents / 100:.2f}",
        "priceCurrency": catalogue.CURRENCY,
    }
    if with_delivery:
        offers["shippingDetails"] = _shipping()
    data: dict[str, object] = {
        "@context": "https://schema.org",
        "@type": "ProductGroup",
        "productGroupID": product.slug,
        "name": product.name,
        "description": product.description,
        "brand": {"@type": "Brand", "name": "NORDLYS"},
        "variesBy": ["https://schema.org/color", "https://schema.org/size"],
        "offers": offers,
        "hasVariant": [_variant(product, c, s, with_delivery) for c in product.colours for s in catalogue.SIZES],
        "hasMerchantReturnPolicy": {
            "@type": "MerchantReturnPolicy",
            "returnPolicyCategory": "https://schema.org/MerchantReturnFiniteReturnWindow",
            "merchantReturnDays": catalogue.RETURN_DAYS,
        },
    }
    return _safe(data)


def _lines(cart: Cart) -> list[dict[str, object]]:
    return [
        {
            "kind": line.kind,
            "product": line.product,
            "name": line.name,
            "colour": line.colour,
            "size": catalogue.size_label(line.size) if line.size else None,
            "quantity": line.quantity,
            "unit_price_cents": line.unit_price_cents,
        }
        for line in cart.lines
    ]


def order(station: str, cart: Cart, consent: str | None) -> dict[str, object]:
    """The judge's reading of the open checkout; the shape is a contract (see the lab README)."""
    return {
        "station": station,
        "items": _lines(cart),
        "delivery_cents": cart.delivery_cents,
        "total_cents": cart.total_cents,
        "currency": catalogue.CURRENCY,
        "consent": consent,
    }


def cart_marker(station: str, cart: Cart) -> str:
    """The judge's reading of the cart page (ARC's "added to cart"): the order's lines, on every cart page."""
    return _safe(
        {
            "station": station,
            "items": _lines(cart),
            "delivery_cents": cart.delivery_cents,
            "total_cents": cart.total_cents,
            "currency": catalogue.CURRENCY,
        }
    )


def script_json(value: object) -> str:
    """Any JSON value, safe inside <script type="application/json">."""
    return _safe(value)
