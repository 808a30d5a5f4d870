"""Real-agent and manual tests in the Matrix: labelled rows apart from the models, course scoring, with the video.

Also the course pages as released: the released text, with our clarifications marked apart.
"""

from __future__ import annotations

import re
from datetime import timedelta

from desk_client import STAFF, csrf_of, sign_in, sign_out

from domain.courses.course import load_course
from domain.week.weeks import week_start
from lab.botauth import verifier
from web.public.clarifications import S13_VERIFIER

VIDEO_WEBM = b"\x1a\x45\xdf\xa3" + b"\x01" * 80
COURSE = load_course()


def _form(site, **extra) -> dict[str, str]:
    day = (week_start(site.week.week) + timedelta(days=1)).date().isoformat()
    return {"agent_name": "Rover", "kind": "real_agent", "agent_version": "3.1", "tested_on": day, **extra}


def _post(client, form, video=True):
    token = csrf_of(client.get("/staff/manual").text)
    files = {"video": ("rover.webm", VIDEO_WEBM, "video/webm")} if video else None
    return client.post("/staff/manual", data={"csrf": token, **form}, files=files, follow_redirects=False)


def _row(matrix: str, agent: str) -> str:
    body = re.search(r'<tbody id="tested-by-hand".*?</tbody>', matrix, re.S)
    assert body, "no rows of tests checked by hand in the Matrix"
    row = re.search(rf'<tr id="test-[^"]+">\s*<th scope="row">{agent}.*?</tr>', body.group(0), re.S)
    assert row, f"no row for {agent}"
    return row.group(0)


def test_a_real_agent_test_is_a_labelled_matrix_row_scored_by_the_course(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    outcomes = {"outcome_s01": "passed"} | {
        f"outcome_{c}": "passed" if i < 9 else "stopped" for i, c in enumerate(COURSE.obstacle_codes)
    }
    outcomes["outcome_s16"] = "broke_brief"  # a trap: it passes only with an order that follows the brief
    assert _post(client, _form(site, **outcomes)).status_code == 303
    matrix = client.get(f"/matrix?week={site.week.week}").text
    row = _row(matrix, "Rover")
    assert "Rover 3.1" in row and "(real-agent test," in row
    assert "9 of 17 passed (53%)" in row
    assert len(re.findall(r"<td[ >]", row)) == len(COURSE.codes) and "Broke the brief" in row
    video = re.search(r'href="(/manual-tests/[^"]+/video)"', row).group(1)
    assert client.get(video).content == VIDEO_WEBM
    # never in the model ranking, nor in the Matrix's model rows or its JSON
    assert "Rover" not in client.get(f"/ranking?week={site.week.week}").text
    assert "Rover" not in client.get(f"/api/matrix.json?week={site.week.week}").text
    models = re.search(r"<tbody>.*?</tbody>", matrix, re.S).group(0)
    assert "Rover" not in models
    sign_out(client)


def test_without_the_control_a_manual_test_has_no_score(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    form = _form(site, agent_name="Comet", kind="manual", agent_version="", outcome_s01="stopped",
                 outcome_s02="passed", outcome_s03="passed")
    assert _post(client, form).status_code == 303
    row = _row(client.get(f"/matrix?week={site.week.week}").text, "Comet")
    assert "(manual test," in row and "no score: did not reach the checkout in the control store S01" in row
    sign_out(client)


def test_a_test_without_its_video_or_with_a_brief_outside_the_traps_is_refused(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    no_video = _post(client, _form(site, agent_name="Nova", outcome_s01="passed"), video=False)
    assert no_video.status_code == 400 and "video" in no_video.text
    brief = _post(client, _form(site, agent_name="Nova", outcome_s01="passed", outcome_s05="broke_brief"))
    assert brief.status_code == 400 and "only the trap stations" in brief.text
    no_version = _post(client, _form(site, agent_name="Nova", agent_version="", outcome_s01="passed"))
    assert no_version.status_code == 400 and "version" in no_version.text
    assert "Nova" not in client.get(f"/matrix?week={site.week.week}").text
    sign_out(client)


def test_course_submissions_in_arcs_format_are_labelled_as_arcs_scoring(site) -> None:
    page = site.client.get("/leaderboard").text
    assert "That is ARC’s scoring" in page.replace("'", "’") and "not comparable with the" in page


def test_the_course_pages_keep_the_released_text_and_mark_our_clarification(site) -> None:
    s06 = COURSE.station("s06")
    page = site.client.get("/course/s06").text
    assert s06.obstacle in page and "Choose size" not in s06.obstacle
    clarification = re.search(r'<section class="clarification".*?</section>', page, re.S)
    assert clarification and "Choose size ▾" in clarification.group(0) and "Our clarification" in page
    assert "Our clarification" in site.client.get("/course").text


def test_the_s13_station_page_states_the_verifiers_limits(site) -> None:
    assert S13_VERIFIER["max_window_s"] == verifier.MAX_WINDOW_S and S13_VERIFIER["skew_s"] == verifier.SKEW_S
    assert set(S13_VERIFIER["required"]) == verifier.REQUIRED and S13_VERIFIER["tag"] == verifier.TAG
    assert set(S13_VERIFIER["allowed_derived"]) == set(verifier.DERIVED) - verifier.REQUIRED
    assert S13_VERIFIER["max_components"] == verifier.MAX_COMPONENTS
    text = re.sub(r"<[^>]+>", "", site.client.get("/course/s13").text)
    assert f"Longest validity window accepted: {verifier.MAX_WINDOW_S} seconds" in text
    assert f"Clock skew allowed: {verifier.SKEW_S} seconds" in text
    assert "Components required, each once: @authority, signature-agent" in text
