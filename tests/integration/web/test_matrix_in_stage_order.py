"""The Matrix page shows its columns in the stage order its document carries (documents format 3 on), and a week
whose Matrix the read models kept from an earlier format is made again in the current one and shown in that order."""

from __future__ import annotations

import re
import warnings

from adapters.readmodels import ReadModels
from adapters.wiring import build_runtime
from domain.projections.documents import MATRIX_FORMAT, week_documents
from web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


def columns(html: str) -> list[str]:
    return re.findall(r'<th scope="col" id="col-(s\d\d)"', html)


def groups(html: str) -> list[str]:
    return re.findall(r'<th scope="colgroup" colspan="\d+">([^<]+)</th>', html)


def test_the_matrix_page_shows_the_columns_and_their_stages_in_the_order_of_the_document(site) -> None:
    document = site.client.get(f"/api/matrix.json?week={site.week.week}&as=corrected").json()
    order = [s["code"] for s in document["stations"]]
    assert document["format"] == MATRIX_FORMAT
    assert order[0] == "s01" and order != sorted(order), "control first, then stage by stage"
    html = site.client.get(f"/matrix?week={site.week.week}").text
    assert columns(html) == order
    assert groups(html) == [g["name"] for g in document["stages"] if g["stations"]]


def test_a_matrix_made_before_format_3_is_made_again_and_shown_in_the_stage_order(site) -> None:
    """The read models keep a week's Matrix until the week changes: one written in an earlier format (here format 2,
    the stations in the course's order) is made again in the current format when read, so the page shows the
    stage order and a new publication hashes the current bytes."""
    week = site.week.week
    now = site.client.get(f"/matrix?week={week}").text
    with build_runtime(site.settings) as runtime:
        readmodels: ReadModels = runtime.readmodels
        format_two = week_documents(readmodels.week_facts(week), 2).matrix
        with readmodels.db.transaction() as tx:
            (kept,) = tx.fetchone("SELECT matrix FROM rm_weeks WHERE week = ?", (week,))
            tx.execute("UPDATE rm_weeks SET matrix = ? WHERE week = ?", (format_two.decode(), week))
        try:
            with TestClient(create_app(site.settings), base_url="https://testserver") as client:
                document = client.get(f"/api/matrix.json?week={week}&as=corrected").json()
                assert document["format"] == MATRIX_FORMAT and document["stages"]
                html = client.get(f"/matrix?week={week}").text
            with readmodels.db.transaction() as tx:
                assert tx.fetchone("SELECT matrix FROM rm_weeks WHERE week = ?", (week,))[0] == kept
        finally:
            with readmodels.db.transaction() as tx:
                tx.execute("UPDATE rm_weeks SET matrix = ? WHERE week = ?", (kept, week))
    assert columns(html) == columns(now) and groups(html) == groups(now)
