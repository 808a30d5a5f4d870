"""The store over plain HTTP: routing by host, cart and checkout rules, bad input, and nothing typed kept."""

from __future__ import annotations

import json
import logging
import re

import pytest

MARKER = '<meta name="nordlys:checkout" content="open">'


def marker(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="nordlys-order">(.*?)</script>', html, re.S)
    assert found, "no order marker"
    return json.loads(found.group(1))


def test_the_bare_domain_lists_every_station_and_an_unknown_station_is_a_404(client):
    index = client(None).get("/")
    assert index.status_code == 200 and all(f"s{n:02d}" in index.text for n in range(1, 19))
    assert client("s19").get("/").status_code == 404


def test_sitemap_and_robots_point_to_every_product(client):
    s04 = client("s04")
    assert "/products/aero-run-2" in s04.get("/sitemap.xml").text
    assert "Sitemap: " in s04.get("/robots.txt").text


def test_the_checkout_marker_describes_the_order_and_appears_nowhere_else(client):
    s01 = client("s01")
    assert s01.add_to_cart().status_code == 303
    for path in ("/", "/products/aero-run-2", "/cart", "/help/delivery"):
        html = s01.get(path).text
        assert "nordlys:checkout" not in html and "nordlys-order" not in html, path
    checkout = s01.get("/checkout").text
    assert MARKER in checkout
    assert marker(checkout) == {
        "station": "s01",
        "currency": "USD",
        "consent": None,
        "delivery_cents": 999,
        "total_cents": 14899,
        "items": [
            {
                "kind": "shoes",
                "product": "aero-run-2",
                "name": "Aero Run 2",
                "colour": "black",
                "size": "EU 42",
                "quantity": 1,
                "unit_price_cents": 13900,
            }
        ],
    }


def test_an_empty_cart_opens_no_order_form(client):
    assert MARKER not in client("s01").get("/checkout").text


def test_cart_cookies_are_host_only(client):
    s01 = client("s01")
    assert all("domain=" not in c.lower() for c in s01.add_to_cart().headers.get_list("set-cookie"))


def test_posting_the_checkout_form_keeps_nothing_typed(client, lab, caplog):
    s01 = client("s01")
    s01.add_to_cart()
    cookies_before = dict(s01.client.cookies)
    typed = {"email": "typed-secret@example.org", "name": "Typed Person", "card": "4111111111111111"}
    with caplog.at_level(logging.DEBUG):
        response = s01.post("/checkout/submit", data=typed)
    assert response.status_code == 303
    assert "set-cookie" not in response.headers
    assert dict(s01.client.cookies) == cookies_before
    page = s01.get(response.headers["location"]).text
    assert "takes no orders" in page
    state = repr(vars(lab.app.state)) + caplog.text + page
    assert not any(value in state for value in typed.values())


@pytest.mark.parametrize(
    "data",
    [
        {"product": "no-such-shoe", "colour": "black", "size": "42", "pairs": "1"},
        {"product": "aero-run-2", "colour": "purple", "size": "42", "pairs": "1"},
        {"product": "aero-run-2", "colour": "black", "size": "99", "pairs": "1"},
        {"product": "aero-run-2", "colour": "black", "size": "forty", "pairs": "1"},
        {"product": "aero-run-2", "colour": "black", "size": "42", "pairs": "-1"},
        {"product": "aero-run-2", "colour": "black", "size": "42", "pairs": "999999999999"},
        {"product": "aero-run-2", "colour": "black", "size": "42", "pairs": "two"},
        {"product": "aero-run-2", "colour": "black", "size": "44", "pairs": "1"},
    ],
)
def test_bad_add_to_cart_input_is_a_clear_4xx(client, data):
    response = client("s01").post("/cart/add", data=data)
    assert 400 <= response.status_code < 500, response.status_code


@pytest.mark.parametrize("quantity", ["0", "-3", "11", "1e9", "abc", ""])
def test_bad_quantities_are_refused(client, quantity):
    s01 = client("s01")
    s01.add_to_cart()
    assert s01.post("/cart/update", data={"line": "0", "quantity": quantity}).status_code == 400
    assert s01.post("/cart/update", data={"line": "5", "quantity": "2"}).status_code == 400


@pytest.mark.parametrize(
    "path",
    [
        "/products/no-such-shoe",
        "/products/aero-run-2?colour=purple",
        "/products/aero-run-2?size=99",
        "/products/aero-run-2?size=abc",
        "/category/boots",
        "/img/sizes/zzz.svg",
        "/api/tiles/zzz",
    ],
)
def test_unknown_things_are_404(client, path):
    assert client("s01").get(path).status_code == 404


def test_an_oversized_body_is_413(client):
    assert (
        client("s01")
        .post("/cart/add", content=b"x" * 100_000, headers={"Content-Type": "application/x-www-form-urlencoded"})
        .status_code
        == 413
    )


def test_a_forged_cart_cookie_is_refused_and_cleared(client):
    s01 = client("s01")
    s01.add_to_cart()
    payload, _, mac = s01.client.cookies["cart"].partition(".")
    for forged in (payload + ".AAAA", "garbage", "e30." + mac):
        s01.client.cookies.set("cart", forged)
        response = s01.get("/cart")
        assert response.status_code == 400
        assert "cart=" in response.headers["set-cookie"]


def test_a_malformed_multipart_body_is_not_a_500(client):
    response = client("s01").post(
        "/cart/add", content=b"--x\r\nbroken", headers={"Content-Type": "multipart/form-data; boundary=x"}
    )
    assert 400 <= response.status_code < 500
