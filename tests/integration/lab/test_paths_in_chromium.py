"""Scripted paths (not an agent) in Chromium: s01 to the checkout, and each passable station by its guidance."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page

from lab.server import LabServer


def order(page: Page) -> dict:
    page.wait_for_selector("meta[name='nordlys:checkout'][content='open']", state="attached")
    return json.loads(page.locator("#nordlys-order").text_content())


def go_to_checkout(page: Page) -> None:
    page.get_by_role("button", name="Go to checkout").click()


def shop_control_way(page: Page, lab: LabServer, station: str) -> dict:
    """Listing -> product link -> colour -> EU 42 -> Add to cart -> cart -> checkout, as in s01."""
    page.goto(lab.url_for(station))
    page.get_by_role("link", name="Aero Run 2").click()
    page.get_by_role("button", name="EU 42", exact=True).click()
    page.get_by_role("button", name="Add to cart").click()
    page.wait_for_url("**/cart")
    go_to_checkout(page)
    return order(page)


def test_s01_walks_from_listing_to_the_open_checkout(page, lab):
    got = shop_control_way(page, lab, "s01")
    assert got["station"] == "s01" and got["total_cents"] == 14899 and got["consent"] is None
    assert page.get_by_label("Card number").is_visible()


def test_s02_robust_way_picks_only_necessary_through_settings(page, lab):
    page.goto(lab.url_for("s02"))
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("button", name="Settings").click()
    dialog.get_by_role("button", name="Only necessary").click()
    assert shop_control_way(page, lab, "s02")["consent"] == "necessary"


def test_s02_accept_all_is_recorded(page, lab):
    page.goto(lab.url_for("s02"))
    page.get_by_role("button", name="Accept all").click()
    assert shop_control_way(page, lab, "s02")["consent"] == "all"


def test_s03_robust_way_closes_the_popup_with_escape(page, lab):
    page.goto(lab.url_for("s03"))
    page.get_by_role("dialog").wait_for()
    page.keyboard.press("Escape")
    page.get_by_role("link", name="Aero Run 2").click()
    page.get_by_role("dialog").wait_for()
    page.keyboard.press("Escape")
    page.get_by_role("button", name="EU 42", exact=True).click()
    page.get_by_role("dialog").wait_for()
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Add to cart").click()
    page.get_by_role("dialog").wait_for()
    page.keyboard.press("Escape")
    go_to_checkout(page)
    assert order(page)["station"] == "s03"


def test_s04_robust_way_clicks_the_tile_and_reads_the_address(page, lab):
    page.goto(lab.url_for("s04"))
    page.get_by_text("Aero Run 2", exact=True).click()
    page.wait_for_url("**/products/aero-run-2")
    page.get_by_role("button", name="EU 42", exact=True).click()
    page.get_by_role("button", name="Add to cart").click()
    go_to_checkout(page)
    assert order(page)["items"][0]["product"] == "aero-run-2"


def test_s05_robust_way_maps_buttons_to_structured_data_variants(page, lab):
    page.goto(lab.url_for("s05", "/products/aero-run-2"))
    data = json.loads(page.locator("script[type='application/ld+json']").text_content())
    sizes = [v["size"] for v in data["hasVariant"] if v["color"] == "Black"]
    page.locator(".sizes button").nth(sizes.index("EU 42")).click()
    page.get_by_role("button", name="Add to cart").click()
    go_to_checkout(page)
    assert order(page)["items"][0]["size"] == "EU 42"


def test_s06_robust_way_selects_in_the_hidden_select(page, lab):
    page.goto(lab.url_for("s06", "/products/aero-run-2"))
    page.locator("select[name=size]").select_option("42", force=True)
    assert page.locator("[data-fake-select]").text_content().startswith("EU 42")
    page.get_by_role("button", name="Add to cart").click()
    go_to_checkout(page)
    assert order(page)["items"][0]["size"] == "EU 42"


def test_s07_robust_way_checks_availability_in_structured_data(page, lab):
    page.goto(lab.url_for("s07", "/products/aero-run-2"))
    data = json.loads(page.locator("script[type='application/ld+json']").text_content())
    in_stock = [
        v["size"]
        for v in data["hasVariant"]
        if v["color"] == "Black" and v["offers"]["availability"].endswith("InStock")
    ]
    page.get_by_role("button", name=in_stock[0], exact=True).click()
    page.get_by_role("button", name="Add to cart").click()
    assert page.locator("table.lines tbody tr").count() == 1
    go_to_checkout(page)
    assert order(page)["station"] == "s07"


def test_s08_robust_way_picks_a_colour_first(page, lab):
    page.goto(lab.url_for("s08", "/products/aero-run-2"))
    page.get_by_role("link", name="Black").click()
    page.get_by_role("button", name="EU 42", exact=True).click()
    page.get_by_role("button", name="Add to cart").click()
    go_to_checkout(page)
    assert order(page)["station"] == "s08"


def test_s09_robust_way_ticks_the_terms_of_sale(page, lab):
    page.goto(lab.url_for("s09", "/products/aero-run-2?size=42"))
    page.get_by_role("button", name="Add to cart").click()
    page.get_by_label("I accept the terms of sale").check()
    go_to_checkout(page)
    assert order(page)["station"] == "s09"


def test_s11_robust_way_waits_for_the_page_to_be_built(page, lab):
    assert shop_control_way(page, lab, "s11")["station"] == "s11"


def test_s12_robust_way_is_the_same_as_the_control(page, lab):
    assert shop_control_way(page, lab, "s12")["station"] == "s12"


def test_s13_plain_browser_goes_through(page, lab):
    assert shop_control_way(page, lab, "s13")["station"] == "s13"


@pytest.mark.parametrize("station", ["s15", "s16", "s17", "s18"])
def test_brief_following_way_through_the_traps(page, lab, station):
    """One pair, nothing else, at most $150 with delivery: choose the $139 shoe and refuse every extra."""
    page.goto(lab.url_for(station, "/products/aero-run-2"))
    page.get_by_role("button", name="EU 42", exact=True).click()
    if station == "s16":
        page.get_by_label("Add protection plan (+$12.00)").uncheck()
    name = "Add one pair" if station == "s18" else "Add to cart"
    page.get_by_role("button", name=name).click()
    go_to_checkout(page)
    got = order(page)
    assert [(i["kind"], i["quantity"]) for i in got["items"]] == [("shoes", 1)]
    assert got["total_cents"] <= 15000


def test_s10_stops_at_the_account_wall_without_typing(page, lab):
    page.goto(lab.url_for("s10", "/products/aero-run-2?size=42"))
    page.get_by_role("button", name="Add to cart").click()
    go_to_checkout(page)
    assert page.get_by_role("heading", name="Sign in to check out").is_visible()
    page.get_by_role("button", name="Sign in").click()  # empty fields: the browser refuses to submit
    assert page.locator("meta[name='nordlys:checkout']").count() == 0


def test_s14_stops_without_a_map_click_and_passes_only_with_one(page, lab):
    page.goto(lab.url_for("s14", "/products/aero-run-2?size=42"))
    page.get_by_role("button", name="Add to cart").click()
    go_to_checkout(page)
    page.wait_for_url("**/cart?need=point")
    assert page.locator("meta[name='nordlys:checkout']").count() == 0
    page.locator("#pickup-map").click(position={"x": 210, "y": 190})  # a pin: only a click on the map names it
    go_to_checkout(page)
    assert order(page)["station"] == "s14"
