"""Opaque names for things a station hides: s05's size images and s04's tiles.

Tokens are HMACs under the per-process secret, so their text says nothing about what they stand for and they
change when the lab restarts; the server keeps the one table that resolves them.
"""

from __future__ import annotations

import hashlib
import hmac

from lab import catalogue


def _token(secret: bytes, text: str) -> str:
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()[:16]


class OpaqueTokens:
    def __init__(self, secret: bytes) -> None:
        self._sizes: dict[str, tuple[str, str, int]] = {}
        self._size_token: dict[tuple[str, str, int], str] = {}
        self._tiles: dict[str, str] = {}
        self.tile_token: dict[str, str] = {}
        for product in catalogue.PRODUCTS:
            tile = _token(secret, f"tile|{product.slug}")
            self._tiles[tile] = product.slug
            self.tile_token[product.slug] = tile
            for colour in product.colours:
                for size in catalogue.SIZES:
                    key = (product.slug, colour.slug, size)
                    token = _token(secret, "size|" + "|".join(map(str, key)))
                    self._sizes[token] = key
                    self._size_token[key] = token

    def size_token(self, product: str, colour: str, size: int) -> str:
        return self._size_token[(product, colour, size)]

    def size_of(self, token: str, product: str | None = None, colour: str | None = None) -> int | None:
        """The size a token names; when product and colour are given, the token must belong to them."""
        key = self._sizes.get(token)
        if key is None or (product is not None and key[:2] != (product, colour)):
            return None
        return key[2]

    def tile(self, token: str) -> str | None:
        return self._tiles.get(token)
