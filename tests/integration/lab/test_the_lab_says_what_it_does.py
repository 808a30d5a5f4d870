"""The lab says what it does: product data where schema.org puts it, and s13's limits on its public page."""

from __future__ import annotations

import datetime as dt
import json
import re
from html.parser import HTMLParser

from lab.botauth import directory, verifier

AGENT_UA = "CanItBuyAgent/1.0"
SCHEMA = "https://schema.org"


class _JsonLd(HTMLParser):
    """The JSON-LD blocks of a page, as a structured-data reader takes them: every script of that type."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[object] = []
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open = tag == "script" and dict(attrs).get("type") == "application/ld+json"

    def handle_data(self, data: str) -> None:
        if self._open:
            self.blocks.append(json.loads(data))

    def handle_endtag(self, tag: str) -> None:
        self._open = False


def json_ld(html: str) -> list[object]:
    reader = _JsonLd()
    reader.feed(html)
    return reader.blocks


def _as_list(value: object) -> list:
    return value if isinstance(value, list) else [] if value is None else [value]


def offers_of(node: dict) -> list[dict]:
    """schema.org's reading of a product: the offers of the product (Product or its subtype ProductGroup) and of
    each of its variants (hasVariant). Only properties schema.org defines on a type are read there."""
    assert node.get("@context") in (SCHEMA, f"{SCHEMA}/") and node["@type"] in ("Product", "ProductGroup")
    found = list(_as_list(node.get("offers")))
    for variant in _as_list(node.get("hasVariant")):
        found += _as_list(variant.get("offers"))
    return found


def shipping_rates(offer: dict) -> list[tuple[str, str]]:
    """(value, currency) of each OfferShippingDetails.shippingRate on an Offer (or its subtype AggregateOffer)."""
    assert offer["@type"] in ("Offer", "AggregateOffer")
    return [(d["shippingRate"]["value"], d["shippingRate"]["currency"]) for d in _as_list(offer.get("shippingDetails"))
            if d.get("@type") == "OfferShippingDetails" and d["shippingRate"].get("@type") == "MonetaryAmount"]


def product(client, station: str) -> dict:
    blocks = json_ld(client(station).get("/products/aero-run-2").text)
    assert len(blocks) == 1
    return blocks[0]


def test_s01_gives_its_delivery_terms_on_every_offer_as_schema_org_defines(client):
    group = product(client, "s01")
    offers = offers_of(group)
    assert len(offers) > 10
    assert all(shipping_rates(offer) == [("9.99", "USD")] for offer in offers)
    # a property schema.org does not define on a product: a standard reader would not find it there
    assert "shippingDetails" not in group


def test_s15_leaves_the_delivery_cost_out_of_every_offer(client):
    group = product(client, "s15")
    assert all(shipping_rates(offer) == [] for offer in offers_of(group))
    assert "9.99" not in json.dumps(group) and "shippingDetails" not in json.dumps(group)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_s13s_public_page_states_the_verifiers_limits(client):
    page = client("s13", AGENT_UA).get("/")
    assert page.status_code == 403
    text = _text(page.text)
    assert f"Longest validity window accepted: {verifier.MAX_WINDOW_S} seconds" in text
    assert f"Clock skew allowed: {verifier.SKEW_S} seconds" in text
    required = re.search(r"Components required, each once: ([^.]*)\.", text)
    assert required and set(required.group(1).replace(" ", "").split(",")) == verifier.REQUIRED
    accepted = re.search(r"Components also accepted: the derived ([^,]*(?:, @[^,]*)*),", text)
    assert accepted and set(accepted.group(1).replace(" ", "").split(",")) == set(verifier.DERIVED) - verifier.REQUIRED
    assert f"at most {verifier.MAX_COMPONENTS} components in all" in text
    assert "Components refused: any other derived component" in text
    assert f"Tag {verifier.TAG} , algorithm {verifier.ALGORITHM}" in text
    assert directory.WELL_KNOWN in text and f"{directory.MAX_BYTES // 1024} KB" in text


def test_the_limits_on_the_page_are_the_ones_the_gate_applies(client, agent_keys, sign):
    """A window exactly as long as the page says passes; one second longer meets the gate."""
    agent = client("s13", AGENT_UA)
    created = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    within = sign(agent_keys, agent.host, created=created, lifetime_s=verifier.MAX_WINDOW_S)
    assert agent.get("/", headers=within).status_code == 200
    beyond = sign(agent_keys, agent.host, created=created, lifetime_s=verifier.MAX_WINDOW_S + 1)
    assert agent.get("/", headers=beyond).status_code == 403
    ahead = sign(agent_keys, agent.host, created=dt.datetime.now(dt.UTC) + dt.timedelta(seconds=verifier.SKEW_S - 5))
    assert agent.get("/", headers=ahead).status_code == 200
