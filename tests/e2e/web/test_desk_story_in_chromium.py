"""The staff desk's story in Chromium: a staff account opens the Matrix, follows a cell to its recording, corrects the
run from there, previews, confirms, and finds the change on the public corrections log and in the ranking, in four
clicks and no id typed; an auditor sees the same pages with no form that changes anything. Every page is checked by
axe; screenshots are kept as test artifacts (CANITBUY_TEST_ARTIFACTS, else var/test-artifacts/desk)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from adapters.sqldb import SqlDb
from adapters.staff_accounts import StaffAccounts

pytestmark = pytest.mark.chromium

ROOT = Path(__file__).resolve().parents[3]
STAFF = ("editor@canitbuy.com", "a long staff password")
AUDITOR = ("reader@canitbuy.com", "a long auditor password")
SERIOUS = ("serious", "critical")
CHANGING_FORMS = "form[method=post]:not([action='/staff/sign-out'])"


@pytest.fixture(scope="module")
def artifacts() -> Path:
    folder = Path(os.environ.get("CANITBUY_TEST_ARTIFACTS") or ROOT / "var" / "test-artifacts") / "desk"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def desk_page(browser: Browser) -> Iterator[Page]:
    # Our Content-Security-Policy forbids inline scripts; axe is injected past it, for this test only.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    yield context.new_page()
    context.close()


def sign_in(page: Page, url: str, email: str, password: str) -> None:
    page.goto(url + "/staff/")
    page.fill("#email", email)
    page.fill("#password", password)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Staff desk")


def checked(page: Page, axe_source: str, artifacts: Path, name: str) -> None:
    """No serious accessibility violation; a screenshot kept."""
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)
    page.add_script_tag(content=axe_source)
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    found = [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']}" for v in result["violations"]
             if v["impact"] in SERIOUS]
    assert found == [], name


def ranking_row(page: Page, url: str, week: str, model: str) -> str:
    page.goto(f"{url}/ranking?week={week}")
    page.reload()  # the page may be in the browser's cache (public, max-age=30): ask the site again
    # a ranked model's row, or its line among the models not ranked
    return page.locator(f"tr#{model}, li:has(a[href$='#model-{model}'])").first.inner_text()


def test_staff_correct_a_run_from_its_matrix_cell_and_an_auditor_sees_the_same_pages_read_only(
        live_site, desk_page: Page, browser: Browser, axe_source: str, artifacts: Path) -> None:
    url, week = live_site.url, live_site.week.week
    page = desk_page
    before = ranking_row(page, url, week, "model-beta")

    sign_in(page, url, *STAFF)
    expect(page.locator("#now")).to_have_text("What needs you now")
    checked(page, axe_source, artifacts, "01-overview")
    page.click("nav[aria-label='Staff desk'] >> text=Matrix")
    expect(page.locator("h1")).to_have_text("Matrix")
    checked(page, axe_source, artifacts, "02-matrix")

    columns = [c.removeprefix("col-") for c in page.locator("thead th[id^=col-]").evaluate_all(
        "cells => cells.map(c => c.id)")]
    cell = page.locator("tr#model-model-beta td").nth(columns.index("s07")).locator("a.cell")
    run = (cell.get_attribute("href") or "").removeprefix("/staff/runs/")
    clicks = 0
    cell.click()
    clicks += 1
    expect(page.locator("h1")).to_contain_text("model-beta on S07")
    checked(page, axe_source, artifacts, "03-recording")
    page.click("text=Correct this run")
    clicks += 1
    expect(page.locator("h1")).to_have_text(f"Correct the run of model-beta on S07 in {week} (stopped)")
    expect(page.locator("#outcome")).to_have_count(0)  # voiding asks for no outcome
    page.fill("#reason", "the lab served S07 without its obstacle that morning")
    page.fill("#public_text", "The run of model-beta on S07 is void: the station was broken.")
    checked(page, axe_source, artifacts, "04-correct-this-run")
    page.click("button:text('Preview')")
    clicks += 1
    expect(page.locator("h1")).to_have_text("What this correction changes")
    expect(page.locator("table")).to_contain_text("(changed)")
    checked(page, axe_source, artifacts, "05-preview")
    page.click("text=Issue the correction")
    clicks += 1

    expect(page).to_have_url(re.compile(r"/corrections\?issued=[0-9a-f-]{36}#c-[0-9a-f-]{36}$"))
    anchor = page.url.rsplit("#", 1)[1]
    expect(page.locator(f"article#{anchor}")).to_contain_text("model-beta on S07 is void")
    checked(page, axe_source, artifacts, "06-public-log-entry")
    assert clicks <= 4
    after = ranking_row(page, url, week, "model-beta")
    assert after != before, "the ranking shows the correction"
    page.screenshot(path=str(artifacts / "07-public-ranking.png"), full_page=True)

    accounts = StaffAccounts(SqlDb(live_site.runtime.settings))
    accounts.add(*AUDITOR, role="auditor")
    auditor = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True).new_page()
    sign_in(auditor, url, *AUDITOR)
    pages = {"11-auditor-overview": "/staff/", "12-auditor-matrix": f"/staff/matrix?week={week}",
             "13-auditor-recording": f"/staff/runs/{run}", "14-auditor-ranking": f"/staff/ranking?week={week}",
             "15-auditor-correction": f"/staff/corrections/new?target=run&run_id={run}",
             "16-auditor-corrections": "/staff/corrections", "17-auditor-actions": "/staff/actions"}
    for name, path in pages.items():
        auditor.goto(url + path)
        expect(auditor.locator("h1")).to_be_visible()
        assert auditor.locator(CHANGING_FORMS).count() == 0, path
        assert auditor.locator("text=Correct this run").count() == 0, path
        checked(auditor, axe_source, artifacts, name)
    auditor.goto(url + "/staff/actions")
    expect(auditor.locator("table")).to_contain_text(STAFF[0])
    expect(auditor.locator("table")).to_contain_text("issued a correction")

    auditor.goto(url + "/staff/runs")
    auditor.fill("#q-station", "s07")
    expect(auditor.locator("#found h2")).to_contain_text("run")
    expect(auditor.locator(f"#found a[href='/staff/runs/{run}']")).to_be_visible()
    assert "/staff/runs" in auditor.url  # narrowed in place, the address kept for a reload
    checked(auditor, axe_source, artifacts, "18-auditor-find-a-run")
    audit = auditor.locator(f"a[href='/weeks/{week}/audit-1.jsonl']")
    auditor.goto(url + "/staff/")
    with auditor.expect_download() as download:
        audit.first.click()
    assert download.value.suggested_filename == f"canitbuy-{week}-publication-1.jsonl"
    auditor.context.close()
