"""The staff desk: signing in, CSRF, roles, and every action becoming an event that the public log shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from desk_client import AUDITOR, STAFF, csrf_of, sign_in, sign_out
from site_data import SCREENSHOT

from domain.week.weeks import week_start
from web.staff.preview import _line as ranking_line

VIDEO_WEBM = b"\x1a\x45\xdf\xa3" + b"\x00" * 64
STAFF_PAGES = ["/staff/", "/staff/corrections", "/staff/operations", "/staff/manual"]
STAFF_FORMS = ["/staff/corrections/preview", "/staff/corrections", "/staff/operations/schedule",
               "/staff/operations/publish", "/staff/operations/lineup", "/staff/manual"]


def test_signed_out_the_desk_refuses_every_page_and_form(site) -> None:
    sign_out(site.client)
    for path in STAFF_PAGES:
        response = site.client.get(path, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith("/staff/sign-in")
    for path in STAFF_FORMS:
        assert site.client.post(path, data={"csrf": "x"}).status_code == 403, path


def test_a_form_without_its_csrf_token_is_refused(site) -> None:
    sign_in(site.client, *STAFF)
    form = {"target": "model_week", "change": "note", "week": site.week.week, "model": "model-alpha",
            "reason": "r", "public_text": "t"}
    assert site.client.post("/staff/corrections", data=form).status_code == 403
    assert site.client.post("/staff/corrections", data={**form, "csrf": "another session's"}).status_code == 403
    sign_out(site.client)


def test_a_wrong_password_fails_and_repeated_attempts_are_limited(site) -> None:
    client = site.client
    sign_out(client)
    token = csrf_of(client.get("/staff/sign-in").text)
    answers = [client.post("/staff/sign-in", data={"csrf": token, "email": "nobody@canitbuy.com",
                                                    "password": "guess number one"}).status_code for _ in range(6)]
    assert answers[:5] == [401] * 5 and answers[5] == 429
    assert "guess number one" not in client.get("/staff/sign-in").text


def test_an_auditor_reads_the_desk_but_cannot_change_the_record(site) -> None:
    sign_in(site.client, *AUDITOR)
    page = site.client.get("/staff/corrections")
    assert page.status_code == 200 and "auditor" in page.text
    form = {"csrf": csrf_of(page.text), "target": "model_week", "change": "note", "week": site.week.week,
            "model": "model-alpha", "reason": "r", "public_text": "t"}
    assert site.client.post("/staff/corrections", data=form).status_code == 403
    sign_out(site.client)


def test_a_correction_is_previewed_issued_and_shown_escaped_on_the_public_log(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    run = site.week.runs[("model-beta", "s05")]
    form = {"csrf": csrf_of(client.get("/staff/corrections").text), "target": "run", "change": "set_outcome",
            "run_id": str(run), "outcome": "passed", "reason": "the judge misread the size list",
            "public_text": "<script>alert('x')</script> S05 counted as passed"}
    preview = client.post("/staff/corrections/preview", data=form)
    assert preview.status_code == 200
    assert "13 of 17</strong> (changed)" in preview.text
    issued = client.post("/staff/corrections", data=form, follow_redirects=False)
    assert issued.status_code == 303
    public = client.get("/corrections").text
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; S05 counted as passed" in public
    assert "<script>alert" not in public
    ranking = client.get("/ranking").text
    # the site's week is the week in progress, published provisionally: runs, not only corrections, still change
    # it, so the page shows it as it stands and no "as published" comparison until its final publication
    assert "published provisionally" in ranking and "As published" not in ranking
    entry = client.get("/api/corrections.json").json()["corrections"][-1]
    assert entry["before"]["passed"] is False and entry["after"]["passed"] is True
    withdraw = client.post(f"/staff/corrections/{entry['id']}/withdraw",
                           data={"csrf": form["csrf"], "reason": "issued by mistake"}, follow_redirects=False)
    assert withdraw.status_code == 303
    assert client.get("/api/corrections.json").json()["corrections"][-1]["withdrawn"]["reason"] == "issued by mistake"
    sign_out(client)


def test_the_preview_runs_the_correction_on_a_copy_and_shows_what_issuing_it_publishes(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    form = {"csrf": csrf_of(client.get("/staff/corrections").text), "target": "station_week", "change": "exclude",
            "week": site.week.week, "station": "S05", "run_id": "ignored: a station is left out by week and code",
            "reason": "the lab's size list was broken", "public_text": "S05 is left out of the week."}
    issued_before = len(client.get("/api/corrections.json").json()["corrections"])
    preview = client.post("/staff/corrections/preview", data=form)
    assert preview.status_code == 200
    assert len(client.get("/api/corrections.json").json()["corrections"]) == issued_before, "a preview saves nothing"
    shown = {label: re.sub(r"</?strong>| \(changed\)", "", after) for label, _, after in re.findall(
        r'<tr><th scope="row">(.*?)</th><td>(.*?)</td><td>(.*?)</td></tr>', preview.text)}
    assert client.post("/staff/corrections", data=form, follow_redirects=False).status_code == 303
    published = client.get(f"/api/ranking.json?week={site.week.week}&as=corrected").json()["entries"]
    assert shown == {e["label"]: ranking_line(e) for e in published}
    assert any("16" in line for line in shown.values()), "S05 left out: 16 obstacle stations"
    sign_out(client)


def test_staff_publish_schedule_and_manage_the_line_up(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    token = csrf_of(client.get("/staff/operations").text)
    scheduled = client.post("/staff/operations/schedule", data={
        "csrf": token, "what": "runs", "model": "baseline-robust", "week": site.week.week, "repeats": "2",
        "station": ["s01", "s02"]}, follow_redirects=False)
    assert scheduled.headers["location"].endswith("scheduled+4+runs")
    past = client.post("/staff/operations/schedule", data={
        "csrf": token, "what": "runs", "model": "baseline-robust", "week": "2026-W01", "station": ["s01"]})
    assert past.status_code == 400 and "2026-W01 is over" in past.text, "a run counts for the week it starts in"
    assert client.get("/live/rows").text.count("waiting</td>") == 4
    for far in ("9999-W52", "0001-W01"):  # 9999-W52 ends in the year 10000: it was a 500 (OverflowError)
        refused = client.post("/staff/operations/publish", data={"csrf": token, "week": far})
        assert refused.status_code == 400 and "outside the years" in refused.text, far
    lineup = client.post("/staff/operations/lineup", data={
        "csrf": token, "model": "gpt-6-luna", "label": "GPT-6 Luna", "route": "openai/gpt-6-luna",
        "since": "2026-11-02", "weekly": "on", "repeats": "1"}, follow_redirects=False)
    assert lineup.status_code == 303 and "GPT-6 Luna" in client.get("/staff/operations").text
    sign_out(client)


def test_a_manual_test_takes_only_a_real_video_within_the_limit(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    token = csrf_of(client.get("/staff/manual").text)
    day = (week_start(site.week.week) + timedelta(days=2)).date().isoformat()
    form = {"csrf": token, "agent_name": "Comet", "tested_on": day, "outcome_s01": "passed",
            "outcome_s02": "stopped"}
    fake = client.post("/staff/manual", data=form, files={"video": ("v.mp4", SCREENSHOT, "video/mp4")})
    assert fake.status_code == 400 and "not the video type" in fake.text
    wrong_type = client.post("/staff/manual", data=form, files={"video": ("v.jpg", SCREENSHOT, "image/jpeg")})
    assert wrong_type.status_code == 400
    too_big = client.post("/staff/manual", content=b"x", headers={
        "content-type": "multipart/form-data; boundary=x", "content-length": str(300 * 1024 * 1024)})
    assert too_big.status_code == 413
    done = client.post("/staff/manual", data=form, files={"video": ("v.webm", VIDEO_WEBM, "video/webm")},
                       follow_redirects=False)
    assert done.headers["location"].endswith("2+stations+recorded")
    matrix = client.get("/matrix").text
    assert f"Comet <span class=\"small muted\">(manual test, {day})</span>" in matrix
    video = re.search(r'href="(/manual-tests/[^"]+/video)"', matrix).group(1)
    assert client.get(video).content == VIDEO_WEBM
    sign_out(client)


def test_staff_add_makes_an_account_without_echoing_the_password(site, tmp_path: Path) -> None:
    env = {**os.environ, "CANITBUY_DATA_DIR": str(tmp_path / "var")}
    if site.settings.database_url:
        env["CANITBUY_DATABASE_URL"] = site.settings.database_url
    made = subprocess.run([sys.executable, "-m", "ops.cli", "staff", "add", "new@canitbuy.com", "--role", "auditor",
                           "--password-stdin"], input="a fresh long password\n", capture_output=True, text=True,
                          env=env, timeout=60)
    assert made.returncode == 0, made.stderr
    assert "a fresh long password" not in made.stdout + made.stderr
    short = subprocess.run([sys.executable, "-m", "ops.cli", "staff", "add", "x@canitbuy.com", "--password-stdin"],
                           input="short\n", capture_output=True, text=True, env=env, timeout=60)
    assert short.returncode == 1 and "at least 12" in short.stderr
    if site.settings.database_url:  # the same database as the site: the new account signs in
        sign_in(site.client, "new@canitbuy.com", "a fresh long password")
        sign_out(site.client)
