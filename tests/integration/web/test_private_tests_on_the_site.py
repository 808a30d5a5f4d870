"""Private tests on the site: an organisation's run shows nowhere public (every public GET route of the app is
enumerated, so a new route is covered without editing this file), only its members and staff see it, and a
written consent makes it public, labelled, without touching the ranking or the Matrix. Both backends."""

from __future__ import annotations

import re
from typing import Any

from desk_client import AUDITOR, STAFF, csrf_of, sign_in, sign_out
from site_data import PRIVATE_MODEL, PRIVATE_NOTE
from starlette.routing import Mount, Route

from web.public.runs import routes as run_routes

PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
PRIVATE_ONLY = ("/staff", "/org", "/static")
NOBODY = "00000000-0000-0000-0000-000000000000"


def public_get_routes(app: Any) -> list[str]:
    """Every GET path template of the app outside the staff desk and the members' area."""
    found = []
    for route in app.routes:
        if isinstance(route, Route) and "GET" in (route.methods or ()) and not route.path.startswith(PRIVATE_ONLY):
            found.append(route.path)
        elif isinstance(route, Mount) and not route.path.startswith(PRIVATE_ONLY):
            found += [route.path + r.path for r in route.routes if isinstance(r, Route)
                      and "GET" in (r.methods or ())]
    return found


def fill(template: str, site: Any) -> list[str]:
    """Concrete paths for a template: run ids are the private run, digests its blob, the rest a known value."""
    values = {"run_id": str(site.week.private_run), "digest": site.week.private_blob, "week": site.week.week,
              "code": "s02", "name": "run", "id": str(site.week.private_run), "sid": str(site.week.private_run)}
    names = re.findall(r"{(\w+)(?::\w+)?}", template)
    path = template
    for name in names:
        path = re.sub("{" + name + r"(?::\w+)?}", values.get(name, "x"), path)
    paths = [path]
    if "?" not in path and not names:
        paths.append(f"{path}?week={site.week.week}")
    return paths


def secrets_of(site: Any) -> tuple[str, ...]:
    return (PRIVATE_MODEL, PRIVATE_NOTE, str(site.week.private_run), site.week.private_blob, "acme")


def assert_nowhere_public(site: Any) -> None:
    templates = public_get_routes(site.client.app)
    assert "/runs/{run_id:str}" in templates and "/api/runs/{run_id:str}.json" in templates
    for template in templates:
        for path in fill(template, site):
            response = site.client.get(path)
            private = str(site.week.private_run)
            if private in path:  # the answer names what was asked: it must be a stranger's answer exactly
                stranger = site.client.get(path.replace(private, NOBODY))
                assert response.status_code == stranger.status_code, path
                assert response.text.replace(private, NOBODY) == stranger.text, path
                continue
            for secret in secrets_of(site):
                assert secret not in response.text, (path, secret)


def desk_post(site: Any, page: str, action: str, data: dict[str, str], files: Any = None) -> Any:
    token = csrf_of(site.client.get(page).text)
    return site.client.post(action, data={"csrf": token, **data}, files=files, follow_redirects=False)


def member_password(html: str) -> str:
    match = re.search(r"One-time password, shown only now: <code>([^<]+)</code>", html)
    assert match, html
    return match.group(1)


def org_sign_in(site: Any, email: str, password: str) -> Any:
    token = csrf_of(site.client.get("/org/sign-in").text)
    return site.client.post("/org/sign-in", data={"csrf": token, "email": email, "password": password},
                            follow_redirects=False)


def test_the_run_routes_are_the_ones_enumerated():
    assert {r.path for r in run_routes} <= {"/runs/{run_id:str}", "/runs/{run_id:str}/blobs/{digest:str}",
                                            "/runs/{run_id:str}/video.webm"}


def test_without_consent_a_private_run_shows_on_no_public_route_of_the_app(site) -> None:
    assert_nowhere_public(site)


def test_staff_register_the_organisation_and_a_member_who_sees_only_its_runs(site) -> None:
    sign_in(site.client, *STAFF)
    page = "/staff/organisations"
    assert desk_post(site, page, page, {"slug": "acme", "name": "Acme Shoes"}).status_code == 303
    assert desk_post(site, page, page, {"slug": "globex", "name": "Globex"}).status_code == 303
    added = desk_post(site, f"{page}/acme", f"{page}/acme/members", {"email": "ann@acme.test"})
    other = desk_post(site, f"{page}/globex", f"{page}/globex/members", {"email": "gus@globex.test"})
    ann, gus = member_password(added.text), member_password(other.text)
    site.ann, site.gus = ann, gus
    assert "ann@acme.test" in site.client.get(f"{page}/acme").text
    sign_out(site.client)

    assert org_sign_in(site, "ann@acme.test", ann).status_code == 303
    private = str(site.week.private_run)
    assert private[:8] in site.client.get("/org").text
    run = site.client.get(f"/org/runs/{private}")
    assert run.status_code == 200 and PRIVATE_NOTE in run.text and "Private test" in run.text
    assert "no-store" in run.headers["cache-control"]
    assert site.client.get(f"/org/runs/{private}/blobs/{site.week.private_blob}").status_code == 200
    public_run = site.week.runs[("model-alpha", "s01")]
    assert site.client.get(f"/org/runs/{public_run}").status_code == 404
    assert site.client.get("/staff/").status_code in (303, 307) or "sign-in" in site.client.get("/staff/").url.path
    sign_out(site.client)
    assert_nowhere_public(site)  # still nothing public after registering


def test_another_organisations_member_and_strangers_get_404(site) -> None:
    private = str(site.week.private_run)
    assert org_sign_in(site, "gus@globex.test", site.gus).status_code == 303
    assert PRIVATE_MODEL not in site.client.get("/org").text
    for path in (f"/org/runs/{private}", f"/org/runs/{private}/blobs/{site.week.private_blob}"):
        assert site.client.get(path).status_code == 404
    sign_out(site.client)
    for path in (f"/org/runs/{private}", f"/org/runs/{private}/blobs/{site.week.private_blob}"):
        assert site.client.get(path).status_code == 404
    # the same answer as for a run that does not exist
    assert site.client.get(f"/org/runs/{private}").text == site.client.get(f"/org/runs/{NOBODY}").text


def test_a_removed_member_sees_nothing_more(site) -> None:
    sign_in(site.client, *STAFF)
    page = "/staff/organisations/globex"
    assert desk_post(site, page, f"{page}/members/remove", {"email": "gus@globex.test"}).status_code == 303
    sign_out(site.client)
    org_sign_in(site, "gus@globex.test", site.gus)
    assert site.client.get("/org", follow_redirects=False).status_code == 303
    sign_out(site.client)


def test_staff_and_auditors_see_every_organisations_runs_at_org(site) -> None:
    for email, password in (STAFF, AUDITOR):
        assert org_sign_in(site, email, password).status_code == 303
        assert site.client.get(f"/org/runs/{site.week.private_run}").status_code == 200
        sign_out(site.client)


def test_the_desk_validates_private_runs_and_letters_and_guards_its_forms(site) -> None:
    page = "/staff/organisations/acme"
    sign_in(site.client, *AUDITOR)
    token = csrf_of(site.client.get(page).text)
    refused = site.client.post(f"{page}/runs", data={"csrf": token, "station": "s01", "model": "a", "week": "x"})
    assert refused.status_code == 403
    sign_out(site.client)
    sign_in(site.client, *STAFF)
    assert site.client.post(f"{page}/runs", data={"station": "s01", "model": "m"}).status_code == 403  # no CSRF
    plain = desk_post(site, page, f"{page}/runs", {"station": "s01", "model": "acme-agent-2",
                                                   "week": site.week.week, "target_url": "http://shop.acme.test/"})
    assert plain.status_code == 400 and "https" in plain.text
    fake = desk_post(site, page, f"{page}/consents", {"reference": "r", "until": "2030-01-01"},
                     files={"letter": ("letter.pdf", b"not a pdf", "application/pdf")})
    assert fake.status_code == 400 and "PDF" in fake.text
    scheduled = desk_post(site, page, f"{page}/runs", {"station": "s01", "model": "acme-agent-2",
                                                       "week": site.week.week,
                                                       "target_url": "https://shop.acme.test/"})
    assert scheduled.status_code == 303
    assert "acme-agent-2" in site.client.get(page).text
    sign_out(site.client)
    assert "acme-agent-2" not in site.client.get(f"/api/ranking.json?week={site.week.week}").text


def test_after_consent_the_run_is_public_and_labelled_and_the_ranking_bytes_do_not_move(site) -> None:
    week = site.week.week
    before = {p: site.client.get(p).content for p in (
        f"/api/ranking.json?week={week}", f"/api/matrix.json?week={week}", "/api/corrections.json")}
    ranking_page = site.client.get(f"/ranking?week={week}").text
    private = str(site.week.private_run)
    sign_in(site.client, *STAFF)
    page = "/staff/organisations/acme"
    done = desk_post(site, page, f"{page}/consents", {"run_ids": private, "reference": "Letter of 2026-11-28, A. Acme"},
                     files={"letter": ("letter.pdf", PDF, "application/pdf")})
    assert done.status_code == 303, done.text
    assert "Letter of 2026-11-28" in site.client.get(page).text
    sign_out(site.client)

    run = site.client.get(f"/runs/{private}")
    assert run.status_code == 200 and "made public with consent" in run.text and "never counts" in run.text
    body = site.client.get(f"/api/runs/{private}.json").json()
    assert body["private_test"] == {"org": "acme", "name": "Acme Shoes", "target_url": None, "counts": False}
    assert site.client.get(f"/runs/{private}/blobs/{site.week.private_blob}").status_code == 200
    for path, content in before.items():
        assert site.client.get(path).content == content, path
    assert PRIVATE_MODEL not in site.client.get(f"/ranking?week={week}").text
    assert PRIVATE_MODEL not in site.client.get(f"/matrix?week={week}").text
    assert ranking_page.count("<tr") == site.client.get(f"/ranking?week={week}").text.count("<tr")
