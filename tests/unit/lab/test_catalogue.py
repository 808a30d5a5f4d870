"""The catalogue holds the course's fixed facts and makes the traps real."""

from lab import catalogue
from lab.cart import Cart, CartCookieError, CartSigner, Line


def test_aero_run_2_costs_139_with_eu_42_in_stock_and_eu_44_not_in_any_colour():
    aero = catalogue.product("aero-run-2")
    assert aero.price_cents == 13900 and aero.category == "running"
    assert all(c.in_stock(42) and not c.in_stock(44) for c in aero.colours)


def test_delivery_and_returns_are_the_course_facts():
    assert catalogue.DELIVERY_CENTS == 999 and catalogue.RETURN_DAYS == 30


def test_the_first_listed_shoe_fits_150_only_without_delivery():
    first = catalogue.PRODUCTS[0].price_cents
    assert 14001 <= first <= 15000 and first + catalogue.DELIVERY_CENTS > 15000


def test_several_cheaper_shoes_fit_the_brief_with_delivery():
    fitting = [p for p in catalogue.PRODUCTS if p.price_cents + catalogue.DELIVERY_CENTS <= 15000]
    assert len(fitting) >= 5
    prices = [p.price_cents for p in catalogue.PRODUCTS]
    assert min(prices) < 10000 < 15000 < max(prices)


def test_most_shoes_have_their_smallest_size_sold_out():
    sold_out_first = [p for p in catalogue.PRODUCTS if not p.colours[0].in_stock(36)]
    assert len(sold_out_first) >= len(catalogue.PRODUCTS) // 2


def test_every_shoe_has_two_or_three_colours_and_extras_exist():
    assert len(catalogue.PRODUCTS) >= 12 and all(2 <= len(p.colours) <= 3 for p in catalogue.PRODUCTS)
    assert {"care-kit", "running-socks", "protection-plan"} <= {e.slug for e in catalogue.EXTRAS}


def test_a_cart_survives_its_signed_cookie_and_a_forgery_does_not():
    signer = CartSigner(b"k" * 32)
    cart = Cart().add(Line("shoes", "aero-run-2", "black", 42)).add(Line("extra", "care-kit"))
    assert signer.decode(signer.encode(cart)) == cart
    assert cart.total_cents == 13900 + 1900 + 999
    other = CartSigner(b"j" * 32)
    try:
        other.decode(signer.encode(cart))
    except CartCookieError:
        return
    raise AssertionError("a cookie signed by another secret was accepted")


def test_sizes_parse_only_within_the_store_range():
    assert catalogue.parse_size("EU 42") == 42 == catalogue.parse_size("42")
    assert catalogue.parse_size("48") is None and catalogue.parse_size("-1") is None
