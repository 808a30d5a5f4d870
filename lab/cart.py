"""The cart: a few lines kept in a host-only cookie, signed so a forged cookie is refused.

The lab stores nothing on the server: the cart lives only in the shopper's cookie, signed with an HMAC of a
secret made when the process starts (a restart empties every cart, which is fine for a test store).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import asdict, dataclass, replace

from lab import catalogue

MAX_LINES = 12
MAX_QUANTITY = 10
COOKIE = "cart"


class CartCookieError(ValueError):
    """The cart cookie was not signed by this process or does not hold a cart."""


@dataclass(frozen=True)
class Line:
    kind: str  # "shoes" or "extra"
    product: str
    colour: str | None = None
    size: int | None = None
    quantity: int = 1
    offer: bool = False  # added through s18's "second pair free" button

    @property
    def unit_price_cents(self) -> int:
        item = catalogue.product(self.product) if self.kind == "shoes" else catalogue.find_extra(self.product)
        assert item is not None  # lines are validated when they are decoded
        return item.price_cents

    @property
    def name(self) -> str:
        item = catalogue.product(self.product) if self.kind == "shoes" else catalogue.find_extra(self.product)
        assert item is not None
        return item.name

    @property
    def total_cents(self) -> int:
        return self.unit_price_cents * self.quantity

    @property
    def colour_name(self) -> str | None:
        shoe = catalogue.product(self.product) if self.kind == "shoes" else None
        colour = shoe.colour(self.colour) if shoe and self.colour else None
        return colour.name if colour else None


@dataclass(frozen=True)
class Cart:
    lines: tuple[Line, ...] = ()

    def add(self, line: Line) -> Cart:
        for index, old in enumerate(self.lines):
            if (old.kind, old.product, old.colour, old.size) == (line.kind, line.product, line.colour, line.size):
                quantity = min(old.quantity + line.quantity, MAX_QUANTITY)
                merged = replace(old, quantity=quantity, offer=old.offer or line.offer)
                return Cart(self.lines[:index] + (merged,) + self.lines[index + 1 :])
        if len(self.lines) >= MAX_LINES:
            return self
        return Cart(self.lines + (line,))

    def set_quantity(self, index: int, quantity: int) -> Cart:
        lines = list(self.lines)
        lines[index] = replace(lines[index], quantity=quantity)
        return Cart(tuple(lines))

    def remove(self, index: int) -> Cart:
        return Cart(self.lines[:index] + self.lines[index + 1 :])

    @property
    def subtotal_cents(self) -> int:
        return sum(line.total_cents for line in self.lines)

    @property
    def delivery_cents(self) -> int:
        return catalogue.DELIVERY_CENTS if self.lines else 0

    @property
    def total_cents(self) -> int:
        return self.subtotal_cents + self.delivery_cents


class CartSigner:
    """Encodes a cart as `payload.mac`; decoding checks the MAC before it reads anything."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _mac(self, payload: bytes) -> str:
        digest = hmac.new(self._secret, payload, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def encode(self, cart: Cart) -> str:
        data = json.dumps([asdict(line) for line in cart.lines], separators=(",", ":")).encode()
        payload = base64.urlsafe_b64encode(data).rstrip(b"=")
        return f"{payload.decode()}.{self._mac(payload)}"

    def decode(self, value: str | None) -> Cart:
        if not value:
            return Cart()
        payload, _, mac = value.partition(".")
        if not hmac.compare_digest(mac.encode(), self._mac(payload.encode()).encode()):
            raise CartCookieError("the cart cookie is not signed by this store")
        try:
            raw = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            return Cart(tuple(_line(item) for item in raw[:MAX_LINES]))
        except (ValueError, TypeError, KeyError) as error:
            raise CartCookieError("the cart cookie does not hold a cart") from error


def _line(item: dict[str, object]) -> Line:
    line = Line(**item)  # type: ignore[arg-type]
    known = catalogue.product(line.product) if line.kind == "shoes" else catalogue.find_extra(line.product)
    if known is None or not isinstance(line.quantity, int) or not 1 <= line.quantity <= MAX_QUANTITY:
        raise ValueError("unknown product or bad quantity in cart")
    return line
