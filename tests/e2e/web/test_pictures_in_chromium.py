"""The pictures of issue 13 in real Chromium: the compact Matrix of a five-model line-up on a 1280-pixel screen and
a phone, every chart, and a recording's film strip; each page screenshotted at 1280 and 390 pixels (kept as test
artifacts), checked by axe-core, shown under our Content-Security-Policy, and each chart's table read back against
the chart's published JSON."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "integration" / "web"))

from served import served  # noqa: E402
from site_data import COURSE, SiteWeek, make_week, run_one  # noqa: E402

from adapters.settings import Settings  # noqa: E402
from adapters.wiring import build_runtime  # noqa: E402
from domain.projections.statistics import wilson  # noqa: E402
from domain.week.weeks import previous_week, week_of  # noqa: E402
from web.app import create_app  # noqa: E402

pytestmark = pytest.mark.chromium

SERIOUS = ("serious", "critical")
LINEUP = ("model-alpha", "model-beta", "model-gamma", "model-delta", "amazon-nova-2-lite-v1")
"""Five models: site_data stops model-beta and model-gamma at five stations and model-delta at the control; the
last one's name is longer than any of the real line-up's, so the Matrix is at least as wide as it will be."""
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
ARTIFACTS = Path(os.environ.get("CANITBUY_TEST_ARTIFACTS", ROOT / "var" / "test-artifacts")) / "pictures"


class MovableClock:
    """The record's clock, set by the test and moving on a millisecond at each reading."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


@dataclass
class PictureSite:
    url: str
    week: SiteWeek
    earlier_week: str


@pytest.fixture(scope="module")
def picture_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PictureSite]:
    """A week of the five-model line-up (as site_data stops them) and, the week before, every model passing."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("pictures") / "var")
    clock = MovableClock(datetime.now(UTC) - timedelta(days=7))
    runtime = build_runtime(settings, clock=clock)
    earlier = week_of(clock())
    for model in LINEUP[:3]:  # a run counts for the week in which it starts: these start a week ago
        for station in COURSE.codes:
            run_one(runtime, model, station, earlier)
    clock.now = datetime.now(UTC)
    week = make_week(runtime, models=LINEUP)
    assert previous_week(week.week) == earlier
    with served(create_app(settings)) as url:
        yield PictureSite(url, week, earlier)
        runtime.close()


def axe_violations(page: Page, axe_source: str) -> list[str]:
    page.add_script_tag(content=axe_source)
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']}" for v in result["violations"]
            if v["impact"] in SERIOUS]


def open_at(browser: Browser, url: str, size: str, *, bypass_csp: bool = False) -> Page:
    width, height = WIDTHS[size]
    page = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=bypass_csp).new_page()
    response = page.goto(url)
    assert response is not None and response.status == 200, url
    return page


def keep_screenshot(page: Page, name: str, size: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}-{WIDTHS[size][0]}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 5_000
    return path


def pages_of(site: PictureSite) -> dict[str, str]:
    return {"matrix": "/matrix", "charts": "/charts", "ranking": "/ranking", "station": "/course/s05",
            "recording": f"/runs/{site.week.runs[('model-beta', 's05')]}"}


@pytest.mark.parametrize("size", sorted(WIDTHS))
def test_every_picture_page_is_screenshotted_and_has_no_serious_accessibility_violation(
        picture_site: PictureSite, browser: Browser, axe_source: str, size: str) -> None:
    problems = {}
    for name, path in pages_of(picture_site).items():
        page = open_at(browser, picture_site.url + path, size, bypass_csp=True)  # axe is injected past the CSP
        keep_screenshot(page, name, size)
        found = axe_violations(page, axe_source)
        if found:
            problems[name] = found
        page.context.close()
    assert problems == {}


@pytest.mark.parametrize("size", sorted(WIDTHS))
def test_the_pictures_need_nothing_our_content_security_policy_refuses(
        picture_site: PictureSite, browser: Browser, size: str) -> None:
    refused: list[str] = []
    for path in pages_of(picture_site).values():
        width, height = WIDTHS[size]
        page = browser.new_context(viewport={"width": width, "height": height}).new_page()
        page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(picture_site.url + path)
        page.wait_for_load_state("load")
        page.context.close()
    assert refused == []


def shown(cell) -> list[str]:
    """The words a cell prints (its whole sentence is for screen readers)."""
    return cell.locator('span[aria-hidden="true"]').first.inner_text().split()


def test_the_matrix_of_five_models_fits_1280_pixels_without_scrolling(picture_site: PictureSite,
                                                                      browser: Browser) -> None:
    page = open_at(browser, picture_site.url + "/matrix", "desktop")
    frame = page.locator(".matrix-frame")
    widths = frame.evaluate("f => [f.scrollWidth, f.clientWidth, document.documentElement.scrollWidth]")
    assert widths[0] <= widths[1] and widths[2] <= 1280, widths
    assert page.locator("table.matrix tbody tr").count() == len(LINEUP)
    last = page.locator("#model-amazon-nova-2-lite-v1 td").last
    expect(last).to_be_in_viewport()
    # What a cell says at a glance, and in full to a screen reader and a pointer
    stop = page.locator('#model-model-beta td[data-code="S05"] a')
    expect(stop).to_have_accessible_name("model-beta on S05 Sizes as images: Stopped, step 2.")
    assert shown(stop) == ["✗", "step", "2"]
    broke = page.locator('#model-model-beta td[data-code="S16"] a')
    assert shown(broke) == ["⚠", "something", "else"]
    page.context.close()


def test_on_a_phone_the_matrix_is_one_card_per_model(picture_site: PictureSite, browser: Browser) -> None:
    page = open_at(browser, picture_site.url + "/matrix", "phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    cards = page.locator("table.matrix tbody tr")
    boxes = [cards.nth(i).bounding_box() for i in range(cards.count())]
    assert len(boxes) == len(LINEUP)
    for above, below in zip(boxes, boxes[1:], strict=False):
        assert above is not None and below is not None and above["y"] + above["height"] <= below["y"]
        assert below["width"] <= 390
    first = cards.first.locator("td").first
    assert first.evaluate("td => getComputedStyle(td, '::before').content") == '"S01"'
    page.context.close()


def read_table(page: Page, chart: str) -> list[dict[str, str]]:
    return page.eval_on_selector_all(
        f'table[data-chart="{chart}"] tbody tr',
        """rows => rows.map(r => Object.fromEntries([
              ...Object.entries(r.dataset),
              ...[...r.querySelectorAll('[data-key]')].map(c => [c.dataset.key, c.textContent.trim()])]))""")


def percent(value: Decimal | float) -> str:
    """A share printed from its exact value, rounded half up to a tenth (not from the JSON's four decimals)."""
    return f"{(Decimal(value) * 100).quantize(Decimal('0.1'), ROUND_HALF_UP)}%"


def share(passed: int, of: int) -> str:
    return percent(Decimal(passed) / Decimal(of) if of else Decimal(0))


def interval(row: dict[str, Any]) -> dict[str, str]:
    """The share and its Wilson bounds as a chart's table prints them, from the row's passed and of."""
    bounds = wilson(row["passed"], row["of"])
    return {"share": share(row["passed"], row["of"]), "low": percent(bounds.low), "high": percent(bounds.high)}


def test_each_charts_table_holds_the_numbers_of_its_published_json(picture_site: PictureSite,
                                                                    browser: Browser) -> None:
    page = open_at(browser, f"{picture_site.url}/charts?week={picture_site.week.week}", "desktop")
    assert page.locator("svg.chart[role=img]").count() == 5
    for figure in page.locator("figure.chart-figure").all():
        svg = figure.locator("svg.chart")
        expect(svg).to_be_visible()
        assert svg.evaluate("s => s.getBoundingClientRect().height") > 100
        title, desc = svg.locator("title").text_content() or "", svg.locator("desc").text_content() or ""
        expect(svg).to_have_accessible_name(title)
        expect(svg).to_have_accessible_description(desc)
        assert len(desc) > 20

    def published(kind: str) -> dict:
        link = page.locator(f"#chart-{kind} figcaption a")
        response = page.request.get(picture_site.url + link.get_attribute("href"))
        assert response.ok and response.headers["access-control-allow-origin"] == "*"
        return response.json()

    ranking = published("ranking")
    assert read_table(page, "ranking") == [
        {"model": r["model"], **interval(r)} for r in ranking["rows"]]
    weeks = published("weeks")
    assert read_table(page, "weeks") == [
        {"model": s["model"], "week": p["week"], **interval(p)} for s in weeks["series"] for p in s["points"]]
    assert {p["week"] for s in weeks["series"] for p in s["points"]} == {picture_site.week.week,
                                                                        picture_site.earlier_week}
    stops = published("stops")
    assert read_table(page, "stops") == [
        {"station": s["code"], "passed": str(s["passed"]), "results": str(s["results"])} for s in stops["stations"]]
    assert read_table(page, "stages") == [
        {"week": w["week"], "stage": s["stage"], "passed": str(s["passed"]), "results": str(s["results"]),
         "share": share(s["passed"], s["results"])} for w in stops["over_weeks"] for s in w["stages"]]
    cost = published("cost")
    assert read_table(page, "cost") == [
        {"model": r["model"], "runs": str(r["runs"]), "cost_usd": f"${r['cost_usd']:.6f}",
         "cost_per_run_usd": f"${r['cost_per_run_usd']:.6f}", "share": share(r["passed"], r["of"])}
        for r in cost["rows"]]
    assert len(cost["rows"]) == len(LINEUP)
    page.context.close()


def test_a_station_page_charts_its_pass_rate_over_the_weeks_with_the_same_numbers(picture_site: PictureSite,
                                                                                  browser: Browser) -> None:
    page = open_at(browser, picture_site.url + "/course/s05", "desktop")
    expect(page.locator("#chart-station svg.chart")).to_be_visible()
    data = page.request.get(picture_site.url + "/api/charts/station/s05.json").json()
    assert read_table(page, "station") == [
        {"week": w["week"], "passed": str(w["passed"]), "results": str(w["results"])} for w in data["weeks"]]
    assert [w["week"] for w in data["weeks"]] == [picture_site.earlier_week, picture_site.week.week]
    page.context.close()


def test_the_recording_opens_with_a_film_strip_ending_at_the_judged_step(picture_site: PictureSite,
                                                                         browser: Browser) -> None:
    page = open_at(browser, f"{picture_site.url}/runs/{picture_site.week.runs[('model-beta', 's05')]}",
                   "desktop")
    frames = page.locator(".film-strip li")
    assert frames.count() == page.locator("article.step").count() == 2
    for i in range(frames.count()):
        link = frames.nth(i).locator("a").first
        target = link.get_attribute("href")
        assert target == f"#step-{i + 1}" and page.locator(target).count() == 1
        image = link.locator("img")
        assert (image.get_attribute("width"), image.get_attribute("height"), image.get_attribute("loading")) == (
            "112", "70", "lazy")
    final = page.locator(".film-strip li.final")
    assert final.count() == 1 and "stopped" in (final.get_attribute("class") or "")
    expect(final.locator("a").first).to_have_attribute("aria-current", "step")
    expect(final).to_contain_text("Step 2: the run stopped")
    expect(final.locator(".frame-verdict")).to_contain_text("Not passed")
    final.locator("a").first.click()
    expect(page).to_have_url(f"{picture_site.url}/runs/{picture_site.week.runs[('model-beta', 's05')]}#step-2")
    assert page.evaluate("img => img.naturalWidth", frames.first.locator("img").element_handle()) > 0
    page.context.close()
