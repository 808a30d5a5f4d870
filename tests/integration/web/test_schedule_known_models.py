"""The desk schedules runs only for a model the CLI's --model takes: a built-in agent or a line-up model."""

from __future__ import annotations

from desk_client import STAFF, csrf_of, sign_in, sign_out


def test_a_model_that_does_not_exist_is_refused_and_nothing_is_scheduled(site) -> None:
    client = site.client
    sign_in(client, *STAFF)
    token = csrf_of(client.get("/staff/operations").text)
    waiting = client.get("/live/rows").text.count("waiting</td>")
    for name in ["nope", "baseline-robust\u202e", "x" * 5000]:
        refused = client.post(
            "/staff/operations/schedule",
            data={"csrf": token, "what": "runs", "model": name, "week": site.week.week},
            follow_redirects=False,
        )
        assert refused.status_code == 400, name
        assert "no built-in agent or line-up model named" in refused.text
    assert client.get("/live/rows").text.count("waiting</td>") == waiting
    assert "nope" not in client.get(f"/api/weeks/{site.week.week}/spend.json").text
    taken = client.post(
        "/staff/operations/schedule",
        data={"csrf": token, "what": "runs", "model": "baseline-naive", "week": site.week.week, "station": ["s01"]},
        follow_redirects=False,
    )
    assert taken.status_code == 303 and taken.headers["location"].endswith("scheduled+1+runs")
    sign_out(client)
