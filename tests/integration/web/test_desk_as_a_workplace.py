"""The staff desk as a place to work: what needs a person now, corrections started where the error is seen, finding
a run, the staff actions list, auditors reading everything and changing nothing, and a model the checks
found unavailable shown as such on the public pages."""

from __future__ import annotations

import re
from datetime import date, timedelta

from desk_client import AUDITOR, STAFF, csrf_of, sign_in, sign_out
from site_waits import eventually

from adapters.wiring import build_runtime
from domain.agent.lineup import Entrant, ModelCheckResult
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.week.weeks import previous_week, week_start

CHANGING_FORM = re.compile(r'<form[^>]*method="post"(?![^>]*action="/staff/sign-out")', re.I)


def public_pages(site) -> list[str]:
    run = site.week.runs[("model-beta", "s05")]
    return ["/matrix", "/ranking", f"/runs/{run}", "/corrections", f"/weeks/{site.week.week}"]


def test_signed_out_every_new_desk_page_sends_to_sign_in(site) -> None:
    sign_out(site.client)
    run = site.week.runs[("model-beta", "s05")]
    for path in ("/staff/matrix", "/staff/ranking", f"/staff/runs/{run}", "/staff/runs", "/staff/actions",
                 f"/staff/corrections/new?target=run&run_id={run}"):
        response = site.client.get(path, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith("/staff/sign-in"), path


def test_public_pages_are_the_same_bytes_signed_in_or_not_and_carry_nothing_of_the_desk(site) -> None:
    sign_out(site.client)
    anonymous = {path: site.client.get(path).content for path in public_pages(site)}
    sign_in(site.client, *STAFF)
    for path, body in anonymous.items():
        assert site.client.get(path).content == body, path
        assert b"/staff/" not in body and b"csrf" not in body and b"Correct this" not in body, path
    sign_out(site.client)


def test_staff_see_correct_this_run_on_each_matrix_cell_and_recording_in_the_desk_view(site) -> None:
    sign_in(site.client, *STAFF)
    run = site.week.runs[("model-beta", "s05")]
    matrix = site.client.get(f"/staff/matrix?week={site.week.week}")
    assert matrix.status_code == 200 and matrix.headers["cache-control"] == "no-store"
    assert f'href="/staff/runs/{run}"' in matrix.text
    assert f'href="/staff/corrections/new?target=run&amp;run_id={run}"' in matrix.text
    assert "target=station_week&amp;week=" in matrix.text
    assert 'action="/staff/matrix"' in matrix.text and "Back to the desk" in matrix.text
    recording = site.client.get(f"/staff/runs/{run}")
    assert recording.headers["cache-control"] == "no-store"
    assert f'href="/staff/corrections/new?target=run&amp;run_id={run}">Correct this run</a>' in recording.text
    ranking = site.client.get(f"/staff/ranking?week={site.week.week}").text
    assert "target=model_week&amp;week=" in ranking and "Correct this week" in ranking
    sign_out(site.client)


def test_the_form_shows_only_the_chosen_kinds_fields_filled_in_from_where_it_was_opened(site) -> None:
    sign_in(site.client, *STAFF)
    run = site.week.runs[("model-beta", "s05")]
    void = site.client.get(f"/staff/corrections/new?target=run&run_id={run}").text
    assert f'<input type="hidden" name="run_id" value="{run}">' in void
    assert 'name="change" value="void"' in void and 'name="outcome"' not in void and 'name="week"' not in void
    assert "model-beta on S05" in void
    outcome = site.client.get(f"/staff/corrections/new?target=run&run_id={run}&change=set_outcome").text
    assert '<select id="outcome" name="outcome" required>' in outcome
    week = site.client.get(f"/staff/corrections/new?target=model_week&week={site.week.week}&model=model-gamma").text
    assert 'name="change" value="exclude"' in week and 'name="run_id"' not in week and "model-gamma in" in week
    assert site.client.get("/staff/corrections/new?target=run&run_id=not-a-run").status_code == 404
    sign_out(site.client)


def test_the_form_opens_only_for_a_model_or_station_that_ran_that_week(site) -> None:
    sign_in(site.client, *STAFF)
    week = site.week.week
    nobody = site.client.get(f"/staff/corrections/new?target=model_week&week={week}&model=model-zeta")
    assert nobody.status_code == 404
    assert f"model model-zeta has no run in {week}" in nobody.text and 'name="change"' not in nobody.text
    no_station = site.client.get(f"/staff/corrections/new?target=station_week&week={week}&station=s99")
    assert no_station.status_code == 404 and f"station s99 has no run in {week}" in no_station.text
    upper = site.client.get(f"/staff/corrections/new?target=station_week&week={week}&station=S09")
    assert upper.status_code == 200 and "S09 in" in upper.text
    sign_out(site.client)


def test_a_correction_from_a_cell_is_previewed_then_lands_on_its_public_log_entry(site) -> None:
    sign_in(site.client, *STAFF)
    run = site.week.runs[("model-alpha", "s07")]
    form_page = site.client.get(f"/staff/corrections/new?target=run&run_id={run}&change=set_outcome").text
    form = {"csrf": csrf_of(form_page), "from": "here", "target": "run", "change": "set_outcome",
            "run_id": str(run), "outcome": "stopped", "reason": "the judge misread the page",
            "public_text": "model-alpha stopped at S07"}
    missing = site.client.post("/staff/corrections/preview", data={**form, "outcome": ""})
    assert missing.status_code == 400 and "Correct the run of model-alpha on S07" in missing.text
    preview = site.client.post("/staff/corrections/preview", data=form)
    assert preview.status_code == 200 and "(changed)" in preview.text
    issued = site.client.post("/staff/corrections", data=form, follow_redirects=False)
    assert issued.status_code == 303
    entry = site.client.get("/api/corrections.json").json()["corrections"][-1]
    assert issued.headers["location"] == f"/corrections?issued={entry['id']}#c-{entry['id']}"
    assert f'id="c-{entry["id"]}"' in site.client.get("/corrections").text
    sign_out(site.client)


def test_an_auditor_reads_every_desk_page_with_no_form_that_changes_anything(site) -> None:
    sign_in(site.client, *AUDITOR)
    run = site.week.runs[("model-beta", "s05")]
    pages = ["/staff/", f"/staff/matrix?week={site.week.week}", f"/staff/ranking?week={site.week.week}",
             f"/staff/runs/{run}", "/staff/runs?station=s05", "/staff/actions", "/staff/corrections",
             f"/staff/corrections/new?target=run&run_id={run}", "/staff/operations"]
    for path in pages:
        page = site.client.get(path)
        assert page.status_code == 200, path
        assert not CHANGING_FORM.search(page.text), path
        assert "Correct this run" not in page.text, path
    token = csrf_of(site.client.get("/staff/").text)
    form = {"csrf": token, "from": "here", "target": "run", "change": "void", "run_id": str(run),
            "reason": "r", "public_text": "t"}
    assert site.client.post("/staff/corrections/preview", data=form).status_code == 403
    assert site.client.post("/staff/corrections", data=form).status_code == 403
    overview = site.client.get("/staff/").text
    assert f'href="/weeks/{site.week.week}/audit-1.jsonl"' in overview
    assert site.client.get(f"/weeks/{site.week.week}/audit-1.jsonl").status_code == 200
    sign_out(site.client)


def test_find_a_run_narrows_by_station_and_outcome_and_links_each_to_its_recording(site) -> None:
    sign_in(site.client, *AUDITOR)
    found = site.client.get("/staff/runs?station=S05&model=beta").text
    run = site.week.runs[("model-beta", "s05")]
    assert "1 run</h2>" in found and f'href="/staff/runs/{run}"' in found
    fragment = site.client.get("/staff/runs?station=s05", headers={"HX-Request": "true"}).text
    assert fragment.lstrip().startswith('<section id="found"') and "<html" not in fragment
    assert "4 runs</h2>" in fragment
    assert "week: " in site.client.get("/staff/runs?week=someday").text
    sign_out(site.client)


def test_every_staff_action_is_listed_with_who_when_what_and_its_log_position(site) -> None:
    sign_in(site.client, *STAFF)
    page = site.client.get(f"/staff/corrections/new?target=station_week&week={site.week.week}&station=s09").text
    form = {"csrf": csrf_of(page), "from": "here", "target": "station_week", "change": "note",
            "week": site.week.week, "station": "s09", "reason": "a flaky size list", "public_text": "S09 noted"}
    assert site.client.post("/staff/corrections", data=form, follow_redirects=False).status_code == 303
    entry = site.client.get("/api/corrections.json").json()["corrections"][-1]
    actions = site.client.get("/staff/actions").text
    assert re.search(rf"<td>{re.escape(STAFF[0])}</td><td>issued a correction \([^)]*station s09[^)]*\)</td>"
                     rf'<td class="num">{entry["position"]}</td>', actions)
    sign_out(site.client)


def test_the_overview_answers_what_needs_me_now(site) -> None:
    sign_in(site.client, *STAFF)
    overview = site.client.get("/staff/").text
    for said in ("What needs you now", "running", "Next on the schedule", "waiting for verification",
                 "model check", "Spend ", "Newest corrections"):
        assert said in overview, said
    assert 'href="/staff/matrix?week=' in overview
    sign_out(site.client)


def test_a_run_cut_short_shows_on_the_overview_and_is_found_among_the_cut_short(site) -> None:
    with build_runtime(site.settings) as runtime:
        command = ScheduleRun.on_course(station="s04", model="model-epsilon", requested_by="scheduler",
                                        week=site.week.week)
        [run] = schedule_runs(runtime.record, [command])
        runtime.record.start_run(run, worker="test", browser_version="chromium-test", agent_version="test")
        runtime.record.cut_short_run(run, "model_connection", "the gateway timed out")
    sign_in(site.client, *STAFF)
    overview = eventually(site, "/staff/", "1 cell cut short")
    assert f'href="/staff/runs/{run}">model-epsilon on S04 (model connection)' in overview
    found = site.client.get("/staff/runs?cause=any").text
    assert "1 run</h2>" in found and f'href="/staff/runs/{run}"' in found
    assert "0 runs</h2>" in site.client.get("/staff/runs?cause=our_error").text
    sign_out(site.client)


def test_a_model_the_checks_could_not_reach_is_shown_as_such_not_as_failures(site) -> None:
    """Unreached at 06:00 UTC, the model is shown as not run yet and checked again at 14:00 UTC; unreached then
    too, as unavailable that week."""
    with build_runtime(site.settings) as runtime:
        runtime.record.set_entrants([Entrant(model="model-omega", label="Omega 1", route="omega/omega-1",
                                             since=date(2026, 1, 1))], by="editor@canitbuy.com")
        runtime.record.record_models_checked(site.week.week, [
            ModelCheckResult(model="model-omega", available=False, problem="the gateway answered 503"),
            ModelCheckResult(model="model-alpha", available=True)])
    week = site.week.week
    site.client.get("/staff/sign-in")  # any request; the site follows the log
    for path in (f"/ranking?week={week}", f"/matrix?week={week}", f"/weeks/{week}"):
        page = eventually(site, path, "Unavailable this morning")
        assert "Omega 1" in page and "answered 503" not in page, path
        assert "from 14:00 UTC the same Monday" in page, path
    matrix = site.client.get(f"/matrix?week={week}").text
    assert re.search(r'<tr class="unavailable">\s*<th scope="row">Omega 1</th>', matrix)
    assert "it is checked again at 14:00 UTC" in matrix
    assert "model-alpha" not in re.sub(r"(?s).*<h2 id=\"unavailable-title\">", "", matrix).split("</section>")[0]

    with build_runtime(site.settings) as runtime:
        runtime.record.record_models_checked(week, [
            ModelCheckResult(model="model-omega", available=False, problem="the gateway answered 503")], attempt=2)
    for path in (f"/ranking?week={week}", f"/matrix?week={week}", f"/weeks/{week}"):
        page = eventually(site, path, "Unavailable that week")
        assert "Omega 1" in page and "Unavailable this morning" not in page, path
        assert "nor when it was checked again at 14:00 UTC" in page, path
    assert "at 06:00 or at 14:00 UTC on Monday, so it was not run" in site.client.get(f"/matrix?week={week}").text


def test_every_kind_the_one_kind_form_offers_is_a_correction_the_record_takes() -> None:
    from domain.eventlog.commands import CORRECTION_KINDS
    from web.staff.correct_here import CHANGES

    offered = {(target, change) for target, changes in CHANGES.items() for change, _ in changes}
    assert offered <= set(CORRECTION_KINDS)
    assert {t for t, c in CORRECTION_KINDS if c != "note"} <= set(CHANGES)


def test_cells_the_schedule_will_not_repeat_are_said_apart_with_what_is_left(site) -> None:
    """A repeat that was itself cut short, and a cell of the week before, are never repeated by the schedule (it
    repeats a cell once, on Monday afternoon): the overview said "repeated by the schedule" next Monday for them."""
    week = site.week.week
    before = week_start(week) - timedelta(days=3)
    with build_runtime(site.settings, clock=lambda: before) as runtime:
        [old] = schedule_runs(runtime.record, [ScheduleRun.on_course(
            station="s06", model="model-delta", requested_by="scheduler", week=previous_week(week))])
        runtime.record.start_run(old, worker="test", browser_version="chromium-test", agent_version="test")
        runtime.record.cut_short_run(old, "our_error", "the browser crashed")
    with build_runtime(site.settings) as runtime:
        [again] = schedule_runs(runtime.record, [ScheduleRun.on_course(
            station="s07", model="model-delta", requested_by="scheduler", week=week, attempt=2)])
        runtime.record.start_run(again, worker="test", browser_version="chromium-test", agent_version="test")
        runtime.record.cut_short_run(again, "model_connection", "the gateway timed out")
    sign_in(site.client, *STAFF)
    overview = eventually(site, "/staff/", f"/staff/runs/{again}")
    # the site is shared by this file's tests: another's cell cut short may be listed beside these two
    awaiting, _, left = overview.partition("cut short that the schedule will not repeat</a>")
    assert f"/staff/runs/{again}" not in awaiting and f"/staff/runs/{old}" not in awaiting
    assert (f'href="/staff/runs/{again}">model-delta on S07 (model connection)</a>, repeat it from '
            '<a href="/staff/operations">') in left
    assert (f'href="/staff/runs/{old}">model-delta on S06 (our error)</a> in {previous_week(week)}, a week that is '
            'over: it stays empty') in left
    sign_out(site.client)
