"""The leaderboard submissions page in real Chromium, checked by axe-core, with a row in each of its tables."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from uuid import UUID

import httpx
import pytest
from playwright.sync_api import expect

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "integration" / "web"))

from leaderboard_site import a_run  # noqa: E402

from domain.leaderboards.verification import judge_reruns  # noqa: E402

pytestmark = pytest.mark.chromium
SERIOUS = ("serious", "critical")


def test_the_leaderboard_page_has_no_serious_accessibility_violation(live_site, browser, axe_source: str) -> None:
    record = live_site.runtime.record
    ids = []
    for notes in ("axe verified", "axe rejected", "axe unverified"):
        response = httpx.post(f"{live_site.url}/api/leaderboard/submit", content=json.dumps(a_run(notes)).encode(),
                              headers={"content-type": "application/json"})
        assert response.status_code in (200, 201), response.text
        ids.append(UUID(response.json()["id"]))
    if record.leaderboard_submission(ids[0]).status == "unverified":
        record.start_verification(ids[0], method="rerun", seed="axe", sample=["arc100-v1-001"], by="test")
        record.record_verification(ids[0], judge_reruns({"arc100-v1-001": "added_to_cart"}, ["arc100-v1-001"],
                                                         {"arc100-v1-001": "added_to_cart"}), by="test")
    if record.leaderboard_submission(ids[1]).status == "unverified":
        record.reject_submission(ids[1], reason="spam", by="test")
    context = browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
    page = context.new_page()
    response = page.goto(live_site.url + "/leaderboard")
    assert response is not None and response.status == 200
    expect(page.locator("h1")).to_have_text("Leaderboard submissions")
    deadline = time.monotonic() + 10  # the site follows the log every half second
    while "spam" not in page.locator("tr#sub-" + str(ids[1])).inner_text() and time.monotonic() < deadline:
        time.sleep(0.3)
        page.reload()
    expect(page.locator("tr#sub-" + str(ids[1]))).to_contain_text("spam")
    expect(page.locator("tr#sub-" + str(ids[0]))).to_contain_text("verified")
    page.add_script_tag(content=axe_source)
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    context.close()
    problems = [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']}" for v in result["violations"]
                if v["impact"] in SERIOUS]
    assert problems == []
