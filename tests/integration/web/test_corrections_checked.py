"""A correction is a public, permanent event: the desk issues one only with an outcome the domain knows, one of a
model's or a station's week only for a model or a station that ran that week, of a run only for a public one."""

from __future__ import annotations

from datetime import timedelta

from desk_client import STAFF, csrf_of, sign_in, sign_out
from site_data import PRIVATE_MODEL

from domain.week.weeks import week_of, week_start


def test_a_set_outcome_correction_with_an_unknown_outcome_is_refused_and_not_published(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    run = site.week.runs[("model-beta", "s05")]
    for outcome in ["\xff", "%FF", "cut_short", "Passed"]:
        form = {
            "csrf": csrf_of(client.get("/staff/corrections").text),
            "target": "run",
            "change": "set_outcome",
            "run_id": str(run),
            "outcome": outcome,
            "reason": "audit",
            "public_text": "an unknown outcome",
        }
        refused = client.post("/staff/corrections", data=form, follow_redirects=False)
        assert refused.status_code == 400, outcome
        assert "outcome must be one of passed, stopped" in refused.text
    assert "an unknown outcome" not in client.get("/api/corrections.json").text
    sign_out(client)


def test_a_models_or_a_stations_week_is_corrected_only_for_one_that_ran_that_week(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    week = site.week.week
    before = week_of(week_start(week) - timedelta(days=1))  # a week the site holds no run of
    because = {"model": "a model&#39;s week is corrected only for a week it ran in",
               "station": "a station&#39;s week is corrected only for a week it was run in"}
    for what, name, in_week in (("model", "model-zeta", week), ("model", PRIVATE_MODEL, week),
                                ("model", "model-alpha", before), ("station", "s99", week),
                                ("station", "s05", before)):  # s99: a station the course does not have
        said = f"{what} {name} has no run in {in_week}: {because[what]}"
        for change in ("exclude", "note"):
            form = {"csrf": csrf_of(client.get("/staff/corrections").text), "target": f"{what}_week",
                    "change": change, "week": in_week, what: name, "reason": "audit",
                    "public_text": "a week that never ran"}
            for path in ("/staff/corrections/preview", "/staff/corrections"):
                refused = client.post(path, data=form, follow_redirects=False)
                assert refused.status_code == 400, (name, change, path)
                assert said in refused.text, refused.text
    # from the form of one kind, the same form again with the reason, as it was filled in
    for what, name, subject in (("model", "model-zeta", "model-zeta"), ("station", "s99", "S99")):
        form = {"csrf": csrf_of(client.get("/staff/corrections").text), "from": "here", "target": f"{what}_week",
                "change": "exclude", "week": week, what: name, "reason": "audit",
                "public_text": "a week that never ran"}
        refused = client.post("/staff/corrections", data=form, follow_redirects=False)
        assert refused.status_code == 400 and f"Correct {subject} in" in refused.text
        assert f"{what} {name} has no run in" in refused.text and "a week that never ran" in refused.text
    assert "a week that never ran" not in client.get("/api/corrections.json").text
    sign_out(client)


def test_a_run_correction_names_a_public_run_that_is_in_the_record(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    nobody = "00000000-0000-4000-8000-000000000000"
    for run_id, said in ((str(site.week.private_run), f"run {site.week.private_run} is a private test: it counts "
                                                      "for no week, so it takes no correction"),
                         (nobody, f"no run {nobody}")):
        for change in ("void", "note"):
            form = {"csrf": csrf_of(client.get("/staff/corrections").text), "target": "run", "change": change,
                    "run_id": run_id, "reason": "audit", "public_text": "a run nobody may correct"}
            refused = client.post("/staff/corrections", data=form, follow_redirects=False)
            assert refused.status_code == 400, (run_id, change)
            assert said in refused.text
    assert "a run nobody may correct" not in client.get("/api/corrections.json").text
    sign_out(client)
