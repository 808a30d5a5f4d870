"""Every public page in real Chromium, checked by axe-core; the htmx week picker and live updates; the staff desk
through its forms."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs

pytestmark = pytest.mark.chromium

SERIOUS = ("serious", "critical")


def public_pages(site) -> list[str]:
    week = site.week.week
    return ["/", "/ranking", "/matrix", f"/runs/{site.week.runs[('model-beta', 's16')]}", "/course",
            "/course/s05", "/registry", "/method", "/agent", "/corrections", "/weeks", f"/weeks/{week}", "/live",
            "/data", f"/data/{week}"]


def axe_violations(page: Page, axe_source: str) -> list[str]:
    page.add_script_tag(content=axe_source)
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']}" for v in result["violations"]
            if v["impact"] in SERIOUS]


def test_every_public_page_loads_and_has_no_serious_accessibility_violation(live_site, browser,
                                                                              axe_source: str) -> None:
    # Our Content-Security-Policy forbids inline scripts; axe is injected past it, for this test only.
    context = browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
    page = context.new_page()
    problems = {}
    for path in public_pages(live_site):
        response = page.goto(live_site.url + path)
        assert response is not None and response.status == 200, path
        expect(page.locator("h1")).to_be_visible()
        found = axe_violations(page, axe_source)
        if found:
            problems[path] = found
    context.close()
    assert problems == {}


def test_the_week_picker_swaps_the_results_in_place(live_site, page: Page) -> None:
    page.goto(live_site.url + "/ranking")
    page.evaluate("window.__marker = 'same page'")
    page.select_option("#week", live_site.earlier_week)
    expect(page.locator("#results")).to_contain_text(f"Week {live_site.earlier_week}")
    expect(page).to_have_url(re.compile(rf"week={live_site.earlier_week}"))
    assert page.evaluate("window.__marker") == "same page"  # htmx swapped a fragment: no page load


def test_the_live_page_shows_a_new_run_without_a_reload(live_site, page: Page) -> None:
    page.goto(live_site.url + "/live")
    page.evaluate("window.__marker = 'same page'")
    schedule_runs(live_site.runtime.record, [ScheduleRun.on_course(
        station="s07", model="model-live-check", requested_by="test", week=live_site.week.week)])
    expect(page.locator("#live")).to_contain_text("model-live-check", timeout=10_000)
    assert page.evaluate("window.__marker") == "same page"


def test_a_run_recording_shows_its_screenshots_and_the_stopping_step(live_site, page: Page) -> None:
    page.goto(f"{live_site.url}/runs/{live_site.week.runs[('model-beta', 's05')]}")
    image = page.locator("img").first
    expect(image).to_be_visible()
    assert page.evaluate("img => img.naturalWidth", image.element_handle()) > 0
    expect(page.locator(".step.stopped")).to_contain_text("The run stopped here")


def test_staff_correct_the_record_through_the_desk_and_the_log_shows_it_escaped(live_site, page: Page) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(live_site.url + "/staff/")
    expect(page).to_have_url(re.compile("/staff/sign-in"))
    page.fill("#email", "editor@canitbuy.com")
    page.fill("#password", "a long staff password")
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Staff desk")
    page.goto(live_site.url + "/staff/corrections")
    page.select_option("#mw-week", live_site.week.week)
    page.fill("#mw-model", "model-gamma")
    page.click("text=Correct the model’s week")
    expect(page.locator("h1")).to_have_text(f"Correct model-gamma in {live_site.week.week}")
    page.fill("#reason", "ran on a misconfigured gateway")
    page.fill("#public_text", "<script>alert('x')</script> Gamma is left out this week")
    page.click("text=Preview")
    expect(page.locator("h1")).to_have_text("What this correction changes")
    expect(page.locator("table")).to_contain_text("not ranked (excluded)")
    page.click("text=Issue the correction")
    page.goto(live_site.url + "/corrections")
    expect(page.locator("article").first).to_contain_text("<script>alert('x')</script> Gamma is left out")
    assert dialogs == []
