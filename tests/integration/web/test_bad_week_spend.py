"""/api/weeks/{week}/spend.json answers a week that is not an ISO week 400, as every other endpoint does."""

from __future__ import annotations


def test_a_malformed_week_is_a_400_with_the_problem(site) -> None:
    for week in ["garbage", "2026-W99", "2026-W5"]:
        answer = site.client.get(f"/api/weeks/{week}/spend.json", headers={"accept": "application/json"})
        assert answer.status_code == 400, week
        assert "week" in answer.text
    assert site.client.get(f"/api/weeks/{site.week.week}/spend.json").status_code == 200
