"""The judge's cart marker, and the signed receipt at the checkout, over plain HTTP on every station."""

from __future__ import annotations

import base64
import json
import re
import secrets

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from lab.botauth.directory import thumbprint
from lab.stations import STATIONS

KEYS = "/.well-known/nordlys-receipt-keys"
LINE = {
    "kind": "shoes",
    "product": "aero-run-2",
    "name": "Aero Run 2",
    "colour": "black",
    "size": "EU 42",
    "quantity": 1,
    "unit_price_cents": 13900,
}


def script(html: str, element_id: str):
    found = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>', html, re.S)
    return json.loads(found.group(1)) if found else None


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_an_empty_cart_page_holds_an_empty_cart_marker(client):
    assert script(client("s01").get("/cart").text, "nordlys-cart") == {
        "station": "s01",
        "items": [],
        "delivery_cents": 0,
        "total_cents": 0,
        "currency": "USD",
    }


def test_the_cart_marker_holds_the_same_lines_as_the_order_marker(client):
    s09 = client("s09")
    s09.add_to_cart()
    cart = script(s09.get("/cart").text, "nordlys-cart")
    assert cart == {"station": "s09", "items": [LINE], "delivery_cents": 999, "total_cents": 14899, "currency": "USD"}
    order = script(s09.get("/checkout?terms=accepted").text, "nordlys-order")
    assert order["items"] == cart["items"]


def test_the_cart_marker_is_only_on_the_cart_page(client):
    s01 = client("s01")
    s01.add_to_cart()
    for path in ("/", "/products/aero-run-2", "/checkout", "/help/returns"):
        assert "nordlys-cart" not in s01.get(path).text, path


@pytest.mark.parametrize("station", [None, *[s.code for s in STATIONS]], ids=lambda s: s or "index")
def test_every_station_and_the_index_publish_the_same_receipt_keys(client, station):
    response = client(station, user_agent="CanItBuyAgent/1.0").get(KEYS)  # s13's gate does not guard them
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/jwk-set+json")
    (key,) = response.json()["keys"]
    assert key["kty"] == "OKP" and key["crv"] == "Ed25519" and key["kid"] == thumbprint(key["x"])


def test_the_checkout_receipt_is_in_the_page_and_the_header_and_verifies(client):
    s01 = client("s01")
    s01.add_to_cart()
    response = s01.get("/checkout")
    compact = response.headers["Nordlys-Receipt"]
    assert script(response.text, "nordlys-receipt") == compact
    head, body, sig = compact.split(".")
    header, payload = json.loads(unb64(head)), json.loads(unb64(body))
    (key,) = s01.get(KEYS).json()["keys"]
    assert header == {"alg": "EdDSA", "kid": key["kid"], "typ": "nordlys-receipt+jws"}
    Ed25519PublicKey.from_public_bytes(unb64(key["x"])).verify(unb64(sig), f"{head}.{body}".encode())
    assert set(payload) == {
        "iss", "station", "course", "host", "iat", "jti", "order", "order_sha256", "agent_keyid",
    }  # fmt: skip
    assert (payload["iss"], payload["station"], payload["course"]) == ("nordlys-lab", "s01", "2.1")
    assert payload["host"] == s01.host and payload["agent_keyid"] is None
    assert payload["order"] == script(response.text, "nordlys-order")


def test_no_receipt_without_an_open_order_form(client):
    empty = client("s01").get("/checkout")
    assert "Nordlys-Receipt" not in empty.headers and "nordlys-receipt" not in empty.text
    s10 = client("s10")
    s10.add_to_cart()
    wall = s10.get("/checkout", follow_redirects=True)
    assert "Nordlys-Receipt" not in wall.headers and "nordlys-receipt" not in wall.text


def test_a_signed_checkout_request_names_the_agent_on_any_station(client, agent_keys, sign):
    s04 = client("s04")
    s04.add_to_cart()
    compact = s04.get("/checkout", headers=sign(agent_keys, s04.host)).headers["Nordlys-Receipt"]
    assert json.loads(unb64(compact.split(".")[1]))["agent_keyid"] == thumbprint(agent_keys.x)


def test_a_bad_signature_leaves_the_agent_unnamed(client, agent_keys, sign):
    s04 = client("s04")
    s04.add_to_cart()
    headers = sign(agent_keys, s04.host.replace("s04.", "s05."))  # signed for another station
    compact = s04.get("/checkout", headers=headers).headers["Nordlys-Receipt"]
    assert json.loads(unb64(compact.split(".")[1]))["agent_keyid"] is None


def test_a_signed_agent_through_s13s_gate_is_named_once_even_with_a_nonce(client, agent_keys, sign):
    s13 = client("s13", "CanItBuyAgent/1.0")
    form = {"product": "aero-run-2", "colour": "black", "size": "42", "pairs": "1"}
    assert s13.post("/cart/add", data=form, headers=sign(agent_keys, s13.host)).status_code == 303
    headers = sign(agent_keys, s13.host, nonce=secrets.token_urlsafe(12))  # the gate uses it up; checkout reuses
    response = s13.get("/checkout", headers=headers)
    assert response.status_code == 200
    assert json.loads(unb64(response.headers["Nordlys-Receipt"].split(".")[1]))["agent_keyid"] == thumbprint(
        agent_keys.x
    )
