"""Point 1 of issue #10, in real Chromium on the real lab: the agent sees what the method says and nothing more.

The element list holds what the page code declares as a button, link or field; blocks that only look clickable
(s04's tiles, s06's decorative size list) are not in it, and the model's prompt carries no page text.
"""

from __future__ import annotations

import pytest

from adapters.browser.playwright_browser import PlaywrightBrowser
from adapters.models.prompt import messages
from domain.agent.agent_ports import station_task
from domain.agent.observation import Observation
from domain.courses.course import load_course
from lab.server import LabServer

pytestmark = [pytest.mark.anyio, pytest.mark.chromium]

# Elements the observation marked (data-cib-id) inside the blocks that only look clickable.
MARKED_TILES = "document.querySelectorAll('.tile[data-cib-id], .tile [data-cib-id]').length"
MARKED_FAKES = ("document.querySelectorAll('[data-fake-select][data-cib-id], .fake-options [data-cib-id], "
                ".fake-options[data-cib-id]').length")


async def observe(browser: PlaywrightBrowser, lab: LabServer, code: str, path: str = "/",
                  before: str | None = None, count: str | None = None) -> tuple[Observation, int]:
    session = await browser.session(lab.url_for(code))
    try:
        await session.open(lab.url_for(code, path))
        if before:
            await session.evaluate(before)
        seen = await session.observe()
        marked = int(await session.evaluate(count)) if count else 0
    finally:
        await session.close()
    return seen, marked


async def test_s04_tiles_are_not_in_the_list(browser: PlaywrightBrowser, lab: LabServer) -> None:
    seen, marked = await observe(browser, lab, "s04", count=MARKED_TILES)
    assert marked == 0
    assert not [e for e in seen.elements if e.role == "generic" or "$" in e.name]
    assert not [e for e in seen.elements if e.href and "/products/" in e.href]  # no way to a product but the sitemap
    assert any(e.name == "Sitemap" for e in seen.elements)


async def test_s06_fake_options_are_not_in_the_list_even_when_shown(browser: PlaywrightBrowser,
                                                                   lab: LabServer) -> None:
    shown = "document.querySelector('.fake-options').hidden = false"
    seen, marked = await observe(browser, lab, "s06", "/products/aero-run-2", before=shown, count=MARKED_FAKES)
    assert marked == 0
    assert not [e for e in seen.elements if e.tag in ("li", "div")]
    assert [e.role for e in seen.elements if e.field_name == "size"] == ["combobox"]  # the real, hidden select


async def test_s01_lists_the_product_links_and_the_size_buttons(browser: PlaywrightBrowser, lab: LabServer) -> None:
    listing, _ = await observe(browser, lab, "s01")
    products = [e for e in listing.elements if e.role == "link" and e.href and "/products/" in e.href]
    assert len(products) >= 3 and "Aero Run 2" in [e.name for e in products]
    product, _ = await observe(browser, lab, "s01", "/products/aero-run-2")
    sizes = [e for e in product.elements if e.role == "button" and e.name.startswith("EU ")]
    assert "EU 42" in [e.name for e in sizes] and all(e.field_name == "size" for e in sizes)


async def test_the_model_is_given_no_page_text(browser: PlaywrightBrowser, lab: LabServer) -> None:
    seen, _ = await observe(browser, lab, "s01")
    assert "made to last" in seen.text  # the harness reads it (for its guards) ...
    task = station_task(load_course(), "s01", lab.url_for("s01"))
    sent = messages(seen.for_agent(), task, [])
    prompt = sent[1]["content"][0]["text"]
    assert "made to last" not in prompt and "$" not in prompt  # ... the model never gets it
    assert "ELEMENTS:" in prompt and "Aero Run 2" in prompt and sent[1]["content"][1]["type"] == "image_url"
    assert seen.for_agent().text == ""
