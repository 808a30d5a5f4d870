"""Verifying leaderboard submissions: list them, draw the sample to re-run, record the re-runs' outcomes (which
decide verified or rejected), check a course run's lab receipts first (failing, they reject it; holding, they draw
the sample: receipts verify no run alone), or reject a submission with the reason; and
register agents' Web Bot Auth keys, without which no receipt proves a run (see domain.leaderboards.receipt_ledger).
Our own agent's key and our own runs' receipts are public, so neither proves an outside agent's run
(web/staff/own_agent.py).

The draw's seed is made here, recorded with the sample, and anyone can redo the draw from it. The re-runs
themselves are made with `canitbuy arc run --test-set FILE --ids ...`; this desk records what they found.
"""

from __future__ import annotations

import secrets
from typing import Any, Protocol
from urllib.parse import urlencode
from uuid import UUID

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from adapters.receipts import HttpxReceiptVerifier, ReceiptKeysError
from domain.eventlog.record import UnknownSubmissionError
from domain.leaderboards.arc import ARC_TEST_SET, Submission, test_set_named
from domain.leaderboards.receipt_ledger import AgentKeyError, KeyRegistration
from domain.leaderboards.receipts import ReceiptCheck, ReceiptVerified
from domain.leaderboards.submissions import LeaderboardSubmission, SubmissionError
from domain.leaderboards.verification import (
    RERUN_OUTCOMES,
    can_check_receipts,
    draw_sample,
    judge_receipts,
    judge_reruns,
    receipts_leave_out,
    reported_outcomes,
    sample_pool,
    unsigned_note,
    unsigned_receipts,
)
from web.errors import NotFound
from web.public.leaderboard import board_of
from web.site import Site
from web.staff.guard import render, staff_action, staff_page
from web.staff.own_agent import OwnReceipts
from web.staff.session import Session


class ReceiptVerifier(Protocol):
    """Checks one lab receipt against the lab's published keys (adapters.receipts.HttpxReceiptVerifier)."""

    async def verify(self, compact: str, station: str | None = None) -> ReceiptCheck: ...


def start(site: Site) -> None:
    origin = site.settings.lab_url or f"https://s01.{site.settings.lab_domain}"
    site.receipt_verifier = HttpxReceiptVerifier(origin)
    site.own_receipts = OwnReceipts(site.runtime.record, site.directory)
    site.listeners.append(site.own_receipts.listener)


def _id(request: Request) -> UUID:
    try:
        return UUID(request.path_params["sid"])
    except ValueError:
        raise NotFound("There is no submission at this address.") from None


async def _entry(site: Site, sid: UUID) -> LeaderboardSubmission:
    try:
        return await site.call(site.runtime.record.leaderboard_submission, sid)
    except UnknownSubmissionError:
        raise NotFound("There is no such submission.") from None


@staff_page
async def submissions(request: Request, session: Session) -> Response:
    site: Site = request.app.state.site
    entries = list(reversed(board_of(site).book.listed()))
    return render(request, "staff/leaderboard.html", session, {"nav": "", "entries": entries})


async def _detail(request: Request, session: Session, error: str | None = None, status: int = 200) -> Response:
    site: Site = request.app.state.site
    sid = _id(request)
    entry = await _entry(site, sid)
    submission = entry.parsed()
    items = test_set_named(submission.test_set).by_id()
    reported = reported_outcomes(submission)
    sample = [{"id": i, "reported": reported.get(i, ""), "url": items[i].product_url if i in items else ""}
              for i in entry.sample or []]
    set_file = "arc-100-v1.csv" if submission.test_set == ARC_TEST_SET else "canitbuy-course-2.1.csv"
    context: dict[str, Any] = {
        "nav": "", "sid": str(sid), "entry": entry, "submission": submission, "sample": sample,
        "outcomes": RERUN_OUTCOMES, "receipts": can_check_receipts(submission), "error": error,
        "receipts_leave_out": receipts_leave_out(submission),
        "unsigned": unsigned_note(unsigned_receipts(submission)),
        "done": request.query_params.get("done"),
        "command": f"canitbuy arc run --test-set {set_file} --ids {','.join(entry.sample or [])} --model NAME",
    }
    return render(request, "staff/submission.html", session, context, status)


@staff_page
async def detail(request: Request, session: Session) -> Response:
    return await _detail(request, session)


def _done(sid: UUID, what: str) -> Response:
    return RedirectResponse(f"/staff/leaderboard/{sid}?done={what.replace(' ', '+')}", status_code=303)


def _drawn(submission: Submission) -> tuple[str, list[str]]:
    """A fresh seed and the sample it draws of the submission's stores (error rows in the pool), for the re-runs of
    either path: after the receipts held, or straight away."""
    seed = secrets.token_hex(16)
    return seed, draw_sample(sample_pool(submission), seed)


@staff_action(max_fields=10)
async def start_verification(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    sid = _id(request)
    entry = await _entry(site, sid)
    seed, sample = _drawn(entry.parsed())
    try:
        await site.call(site.runtime.record.start_verification, sid, method="rerun", seed=seed, sample=sample,
                        by=session.email)
    except SubmissionError as error:
        return await _detail(request, session, str(error), 400)
    await site.refresh()
    return _done(sid, f"{len(sample)} stores drawn to re-run")


@staff_action(max_fields=40)
async def record_reruns(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    sid = _id(request)
    entry = await _entry(site, sid)
    sample = entry.sample or []
    reruns = {i: str(form.get(f"rerun_{i}", "")) for i in sample if form.get(f"rerun_{i}")}
    try:
        judgement = judge_reruns(reported_outcomes(entry.parsed()), sample, reruns)
        await site.call(site.runtime.record.record_verification, sid, judgement, by=session.email)
    except (ValueError, SubmissionError) as error:
        return await _detail(request, session, str(error), 400)
    await site.refresh()
    return _done(sid, "verified" if judgement.verified else "rejected: " + judgement.reason[:80])


@staff_action(max_fields=10)
async def check_receipts(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    sid = _id(request)
    entry = await _entry(site, sid)
    submission = entry.parsed()
    if not can_check_receipts(submission):
        return await _detail(request, session, "only a course run whose every success carries a receipt", 400)
    unsigned = unsigned_receipts(submission)
    if unsigned:  # proves nothing: the run stays unverified, for re-runs
        return await _detail(request, session, unsigned_note(unsigned), 400)
    verifier = site.receipt_verifier
    checks: dict[str, ReceiptCheck] = {}
    try:
        for result in submission.results:
            if result.receipt and result.id:
                checks[result.id] = await verifier.verify(result.receipt, result.id)
    except ReceiptKeysError as error:
        return await _detail(request, session, f"the lab's receipt keys could not be fetched: {error}", 502)
    valid = {item: check for item, check in checks.items() if isinstance(check, ReceiptVerified)}
    keys, spent = await _ledger(site, list(valid.values()))
    ours = await site.call(site.own_receipts.now)
    judgement = judge_receipts(submission, checks, keys, spent, ours)
    jtis = {item: valid[item].jti for item in judgement.checks if item in valid}
    seed, sample = _drawn(submission) if judgement.verified else ("", [])
    try:
        await site.call(site.runtime.record.record_receipt_verification, sid, judgement, jtis=jtis, seed=seed,
                        sample=sample, by=session.email)
    except SubmissionError as error:
        return await _detail(request, session, str(error), 400)
    await site.refresh()
    if not judgement.verified:
        return _done(sid, "rejected: " + judgement.reason[:80])
    return _done(sid, f"receipts hold, not verified yet: {len(sample)} stores drawn to re-run")


async def _ledger(site: Site, receipts: list[ReceiptVerified]) -> tuple[dict[str, KeyRegistration], dict[str, str]]:
    """The registrations of the receipts' agent keys, and which of their jtis a submission has spent (and which)."""
    record = site.runtime.record
    keys: dict[str, KeyRegistration] = {}
    spent: dict[str, str] = {}
    for receipt in receipts:
        if receipt.agent_keyid and receipt.agent_keyid not in keys:
            registration = await site.call(record.agent_key, receipt.agent_keyid)
            if registration is not None:
                keys[receipt.agent_keyid] = registration
        by = await site.call(record.receipt_spent_by, receipt.jti)
        if by is not None:
            spent[receipt.jti] = by
    return keys, spent


async def _keys_page(request: Request, session: Session, error: str | None = None, status: int = 200) -> Response:
    site: Site = request.app.state.site
    registered = await site.call(site.runtime.record.agent_keys)
    context = {"nav": "", "keys": list(reversed(registered)), "error": error,
               "done": request.query_params.get("done")}
    return render(request, "staff/agent_keys.html", session, context, status)


@staff_page
async def agent_keys(request: Request, session: Session) -> Response:
    return await _keys_page(request, session)


@staff_action(max_fields=10)
async def register_agent_key(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    keyid = str(form.get("keyid", ""))
    ours = (await site.call(site.own_receipts.now)).key_problem(keyid.strip())
    if ours:
        return await _keys_page(request, session, ours, 400)
    try:
        registration = await site.call(
            site.runtime.record.register_agent_key, keyid=keyid,
            agent=str(form.get("agent", "")), evidence=str(form.get("evidence", "")), by=session.email,
        )
    except AgentKeyError as error:
        return await _keys_page(request, session, str(error), 400)
    done = urlencode({"done": f"key {registration.keyid} registered to {registration.agent}"})
    return RedirectResponse(f"/staff/leaderboard/keys?{done}", status_code=303)


@staff_action(max_fields=10)
async def reject(request: Request, session: Session, form: FormData) -> Response:
    site: Site = request.app.state.site
    sid = _id(request)
    try:
        await site.call(site.runtime.record.reject_submission, sid, reason=str(form.get("reason", "")),
                        by=session.email)
    except UnknownSubmissionError:
        raise NotFound("There is no such submission.") from None
    except SubmissionError as error:
        return await _detail(request, session, str(error), 400)
    await site.refresh()
    return _done(sid, "rejected")


routes = [
    Route("/leaderboard", submissions),
    Route("/leaderboard/keys", agent_keys),
    Route("/leaderboard/keys", register_agent_key, methods=["POST"]),
    Route("/leaderboard/{sid:str}", detail),
    Route("/leaderboard/{sid:str}/start", start_verification, methods=["POST"]),
    Route("/leaderboard/{sid:str}/reruns", record_reruns, methods=["POST"]),
    Route("/leaderboard/{sid:str}/receipts", check_receipts, methods=["POST"]),
    Route("/leaderboard/{sid:str}/reject", reject, methods=["POST"]),
]
