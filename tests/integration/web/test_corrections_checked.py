"""A correction is a public, permanent event: the desk issues one only with an outcome the domain knows."""

from __future__ import annotations

from desk_client import STAFF, csrf_of, sign_in, sign_out


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
