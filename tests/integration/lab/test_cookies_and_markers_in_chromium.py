"""In Chromium: each station keeps its own cookies, and s11's built pages carry the judge's markers and receipt."""

from __future__ import annotations

import json

from playwright.sync_api import Page

from lab.server import LabServer


def cart_marker(page: Page, lab: LabServer, station: str) -> dict:
    page.goto(lab.url_for(station, "/cart"))
    return json.loads(page.locator("#nordlys-cart").text_content())


def add_aero_run(page: Page, lab: LabServer, station: str) -> None:
    page.goto(lab.url_for(station, "/products/aero-run-2"))
    page.get_by_role("button", name="EU 42", exact=True).click()
    page.get_by_role("button", name="Add to cart").click()
    page.wait_for_url("**/cart")


def test_a_cart_in_one_station_is_not_in_another(page, lab):
    add_aero_run(page, lab, "s01")
    assert [i["product"] for i in cart_marker(page, lab, "s01")["items"]] == ["aero-run-2"]
    assert cart_marker(page, lab, "s02")["items"] == []
    assert cart_marker(page, lab, "s12")["items"] == []
    cookies = page.context.cookies()
    assert [(c["name"], c["domain"]) for c in cookies if c["name"] == "cart"] == [
        ("cart", lab.host_for("s01").split(":")[0])
    ]


def test_a_consent_choice_in_s02_stays_in_s02(page, lab):
    page.goto(lab.url_for("s02"))
    page.get_by_role("button", name="Accept all").click()
    page.goto(lab.url_for("s02"))
    assert page.get_by_role("dialog").count() == 0
    page.goto(lab.url_for("s01"))
    assert all(c["name"] != "consent" or c["domain"].startswith("s02.") for c in page.context.cookies())


def test_s11_builds_the_cart_marker_in_the_browser(page, lab):
    add_aero_run(page, lab, "s11")
    page.wait_for_selector("#nordlys-cart", state="attached")
    marker = json.loads(page.locator("#nordlys-cart").text_content())
    assert marker["station"] == "s11" and marker["items"][0]["size"] == "EU 42"


def test_s11_builds_the_receipt_into_the_checkout_and_sends_it_as_a_header(page, lab):
    add_aero_run(page, lab, "s11")
    with page.expect_response(lambda r: "/api/page" in r.url and "checkout" in r.url) as built:
        page.get_by_role("button", name="Go to checkout").click()
    page.wait_for_selector("#nordlys-receipt", state="attached")
    receipt = json.loads(page.locator("#nordlys-receipt").text_content())
    assert receipt == built.value.headers["nordlys-receipt"]
    assert json.loads(page.locator("#nordlys-order").text_content())["station"] == "s11"
