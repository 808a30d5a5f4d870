"""The NORDLYS catalogue: the same shoes, prices and stock in every station.

The catalogue is built to make the traps real. The first shoe in the default listing order costs $145, so an
agent that takes the first product breaks the $150 brief only because of the $9.99 delivery; several cheaper
shoes are in stock; in most shoes the smallest sizes (EU 36-38) are sold out, so the first size button is a
sold-out one. The fixed facts of the course (Aero Run 2 at $139, EU 42 in stock and EU 44 not in every colour,
delivery $9.99, returns within 30 days) are checked by the unit tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DELIVERY_CENTS = 999
RETURN_DAYS = 30
CURRENCY = "USD"
SIZES = tuple(range(36, 48))

CATEGORIES = {"running": "Running", "trail": "Trail", "casual": "Casual", "kids": "Kids"}


@dataclass(frozen=True)
class Colour:
    slug: str
    name: str
    hex: str
    sold_out: frozenset[int] = frozenset()

    def in_stock(self, size: int) -> bool:
        return size in SIZES and size not in self.sold_out


@dataclass(frozen=True)
class Product:
    slug: str
    name: str
    category: str
    price_cents: int
    description: str
    colours: tuple[Colour, ...]
    kind: str = "shoes"

    def colour(self, slug: str | None) -> Colour | None:
        if slug is None:
            return self.colours[0]
        return next((c for c in self.colours if c.slug == slug), None)


@dataclass(frozen=True)
class Extra:
    slug: str
    name: str
    price_cents: int
    description: str
    kind: str = field(default="extra")


def _colours(*specs: tuple[str, str, str, set[int]]) -> tuple[Colour, ...]:
    return tuple(Colour(slug, name, hex_, frozenset(sold)) for slug, name, hex_, sold in specs)


SMALL = {36, 37, 38}  # the small sizes sell out first in this store

PRODUCTS: tuple[Product, ...] = (
    # Listed first on purpose: $145 fits $150 only without delivery.
    Product(
        "fjord-trail-pro",
        "Fjord Trail Pro",
        "trail",
        14500,
        "A grippy trail shoe with a rock plate and a waterproof upper for wet mountain paths.",
        _colours(("moss", "Moss green", "#4f6b3a", SMALL | {45}), ("slate", "Slate grey", "#5b6770", SMALL)),
    ),
    Product(
        "aero-run-2",
        "Aero Run 2",
        "running",
        13900,
        "Our light everyday running shoe: a springy foam midsole and a breathable knit upper.",
        _colours(
            ("black", "Black", "#1d1d1f", SMALL | {44}),
            ("white", "White", "#e9e9e4", SMALL | {44}),
            ("blue", "Ocean blue", "#2a5d9f", SMALL | {44, 46}),
        ),
    ),
    Product(
        "polar-runner",
        "Polar Runner",
        "running",
        14900,
        "A winter running shoe with a studded outsole and a warm lining for icy mornings.",
        _colours(("red", "Signal red", "#b3261e", SMALL), ("black", "Black", "#1d1d1f", SMALL | {43})),
    ),
    Product(
        "tempo-lite",
        "Tempo Lite",
        "running",
        8900,
        "A low, flexible shoe for short, fast runs and the gym.",
        _colours(("lime", "Lime", "#9bbf2a", {36}), ("grey", "Grey", "#8a8f94", set())),
    ),
    Product(
        "aurora-max",
        "Aurora Max",
        "running",
        17900,
        "Maximum cushioning for long distances, with a carbon-free rocker sole.",
        _colours(("violet", "Violet", "#6a4c93", SMALL), ("white", "White", "#e9e9e4", SMALL | {47})),
    ),
    Product(
        "skog-hiker",
        "Skog Hiker",
        "trail",
        12900,
        "A mid-cut hiking shoe with ankle support for forest trails.",
        _colours(("brown", "Earth brown", "#6d4c33", SMALL), ("olive", "Olive", "#6b6b2f", SMALL | {41})),
    ),
    Product(
        "ridge-runner",
        "Ridge Runner",
        "trail",
        15900,
        "A fast trail racer with deep lugs and a snug fit.",
        _colours(("orange", "Ember orange", "#d9622b", SMALL), ("black", "Black", "#1d1d1f", {36, 37})),
    ),
    Product(
        "harbour-sneaker",
        "Harbour Sneaker",
        "casual",
        7900,
        "A canvas sneaker for every day, with a natural rubber sole.",
        _colours(
            ("navy", "Navy", "#22314f", set()), ("white", "White", "#e9e9e4", {36}), ("sand", "Sand", "#cdb78f", SMALL)
        ),
    ),
    Product(
        "city-loafer",
        "City Loafer",
        "casual",
        11900,
        "A soft suede loafer that is smart enough for the office.",
        _colours(("tan", "Tan", "#a8713d", SMALL), ("black", "Black", "#1d1d1f", SMALL | {46})),
    ),
    Product(
        "nordlys-classic",
        "Nordlys Classic",
        "casual",
        9900,
        "Our leather court shoe, unchanged since the first shop in Tromsø.",
        _colours(("white", "White", "#e9e9e4", SMALL), ("green", "Forest green", "#2f5d46", SMALL)),
    ),
    Product(
        "kite-junior",
        "Kite Junior",
        "kids",
        5900,
        "A sturdy shoe for children, with a hook-and-loop strap.",
        _colours(("yellow", "Sun yellow", "#e8b923", {45, 46, 47}), ("blue", "Sky blue", "#5aa0d8", {46, 47})),
    ),
    Product(
        "pebble-kids",
        "Pebble Kids",
        "kids",
        6900,
        "A light trainer for school and play.",
        _colours(("pink", "Pink", "#d9769b", {47}), ("teal", "Teal", "#2a8c8c", {46, 47})),
    ),
    Product(
        "stride-walker",
        "Stride Walker",
        "casual",
        14200,
        "A cushioned walking shoe for long city days.",
        _colours(("grey", "Grey", "#8a8f94", SMALL), ("navy", "Navy", "#22314f", SMALL | {42})),
    ),
)

EXTRAS: tuple[Extra, ...] = (
    Extra("care-kit", "Shoe care kit", 1900, "Brush, cleaner and protective spray."),
    Extra("running-socks", "Running socks (2 pairs)", 1200, "Breathable socks with a padded heel."),
    Extra("protection-plan", "Protection plan", 1200, "Two years of cover against wear and tear."),
)

_BY_SLUG = {p.slug: p for p in PRODUCTS}
_EXTRAS_BY_SLUG = {e.slug: e for e in EXTRAS}


def product(slug: str) -> Product | None:
    return _BY_SLUG.get(slug)


def find_extra(slug: str) -> Extra | None:
    return _EXTRAS_BY_SLUG.get(slug)


def in_category(category: str | None) -> tuple[Product, ...]:
    if category is None:
        return PRODUCTS
    return tuple(p for p in PRODUCTS if p.category == category)


def dollars(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def size_label(size: int) -> str:
    return f"EU {size}"


def parse_size(text: str) -> int | None:
    """Accept "42" or "EU 42"; anything else is not a size of this store."""
    digits = text.strip().upper().removeprefix("EU").strip()
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 2:
        return None
    size = int(digits)
    return size if size in SIZES else None
