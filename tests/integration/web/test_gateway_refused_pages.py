"""A model the gateway refused our request for at the week's check (our key, credits or route) is shown as not run
because of our configuration, never as unavailable or unreached, beside a model whose connection did fail; the
desk asks for the configuration to be fixed."""

from __future__ import annotations

import re
from datetime import date

from desk_client import STAFF, sign_in, sign_out
from site_waits import eventually

from adapters.wiring import build_runtime
from domain.agent.lineup import Entrant, ModelCheckResult


def _callout(page: str, heading_id: str) -> str:
    return re.sub(rf'(?s).*<h2 id="{heading_id}">', "", page).split("</section>")[0]


def test_a_model_the_gateway_refused_us_for_is_not_run_because_of_us_not_unavailable(site) -> None:
    week = site.week.week
    with build_runtime(site.settings) as runtime:
        runtime.record.set_entrants([
            Entrant(model="model-rho", label="Rho 1", route="rho/rho-1", since=date(2026, 1, 1)),
            Entrant(model="model-omega", label="Omega 1", route="omega/omega-1", since=date(2026, 1, 1)),
        ], by="editor@canitbuy.com")
        runtime.record.record_models_checked(week, [
            ModelCheckResult(model="model-rho", available=False, gateway_refused=True,
                             problem="the gateway refused our request: HTTP 401"),
            ModelCheckResult(model="model-omega", available=False, problem="the gateway answered 503"),
            ModelCheckResult(model="model-alpha", available=True)])
    site.client.get("/staff/sign-in")  # any request; the site follows the log
    for path in (f"/ranking?week={week}", f"/matrix?week={week}", f"/weeks/{week}"):
        page = eventually(site, path, "Not run because of our configuration")
        ours = _callout(page, "refused-title")
        assert "Rho 1" in ours and "our configuration’s error, not" in ours and "Omega 1" not in ours, path
        unavailable = _callout(page, "unavailable-title")
        assert "Omega 1" in unavailable and "Rho 1" not in unavailable, path
        assert "HTTP 401" not in page and "answered 503" not in page, path
    matrix = site.client.get(f"/matrix?week={week}").text
    row = re.search(r'<tr class="unavailable">\s*<th scope="row">Rho 1</th>\s*<td[^>]*>([^<]*)', matrix)
    assert row is not None and row.group(1).startswith("Not run: the gateway refused our requests for it")
    assert "could not reach" not in row.group(1)

    sign_in(site.client, *STAFF)
    overview = site.client.get("/staff/").text
    assert re.search(r"The gateway refused our request</strong> at this week’s model check</a> \(an HTTP 4xx: our "
                     r"key, credits or route\) for Rho 1, not scheduled", overview)
    assert "Not reached at this week’s model check</a>: Omega 1, not scheduled" in overview
    operations = site.client.get("/staff/operations").text
    assert "so not scheduled: model-rho. Fix the configuration" in operations
    assert "so not scheduled: model-omega (a model" in operations
    sign_out(site.client)
