"""Each publication's audit file is that publication's: two publications of a week can stand at the same log
position (the week's final publication after a provisional one with the same results, or a republication in a new
documents format), and the site kept one file per position, so /weeks/W/audit-2.jsonl served publication 1's
header: its hashes, its format, its "provisional" mark, and `audit verify --published` matched it to publication 1."""

from __future__ import annotations

import json

from site_waits import eventually

from adapters.wiring import build_runtime


def header(site, number: int) -> dict[str, object]:
    response = site.client.get(f"/weeks/{site.week.week}/audit-{number}.jsonl")
    assert response.status_code == 200
    assert f"publication-{number}.jsonl" in response.headers["content-disposition"]
    return json.loads(response.content.split(b"\n")[0])


def test_two_publications_at_one_position_each_serve_their_own_file(site) -> None:
    first = header(site, 1)  # made before the second exists: the file the site keeps for the position
    with build_runtime(site.settings) as runtime:
        runtime.readmodels.catch_up()
        [standing] = runtime.readmodels.publications(site.week.week)
        runtime.record.record_publication(
            week=site.week.week, position=standing.position, ranking_sha256="a" * 64, matrix_sha256="b" * 64,
            course_version=standing.course_version, by="editor@canitbuy.com", documents_format=4)
    eventually(site, f"/weeks/{site.week.week}", "audit-2.jsonl")
    second = header(site, 2)
    assert first["ranking_sha256"] == standing.ranking_sha256
    assert (second["ranking_sha256"], second["matrix_sha256"]) == ("a" * 64, "b" * 64)
    assert second["documents_format"] == 4
    assert header(site, 1) == first
