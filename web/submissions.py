"""`POST /api/leaderboard/submit`: ARC's submission service, answering as ARC does.

- 201 with the id: stored, listed as unverified.
- 200 with the first id: the same run (the same fingerprint) was sent before. ARC says only that it "returns the
  first id"; nothing new is made, so we answer 200 rather than 201, with `"duplicate": true`. A repeat uses none of
  the day's quota.
- 400 with the first problem found, in ARC's words, naming the field (`domain.leaderboards.arc_validation`).
- 413 for a body over 200 KB, as ARC's API description says (abab7575/arc-open, docs/openapi.json).
- 429 with the reason and Retry-After: 5 submissions a network a day, 200 a day overall (UTC days), or a flood of
  requests from one network (`web.submission_caps`, checked before the body is read).

Only `Content-Type: application/json` is taken (anything else is a 400): a browser sends that type to another
site only after a CORS preflight we never grant, so no page elsewhere can make its visitors submit. A body nested
too deep to parse is a 400 too, never a 500.

The body is read from the stream up to 200 KB + 1 byte and no further. The sender's network (/24, /48) is kept
only as a salted hash, to count its submissions.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import msgspec
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from domain.leaderboards.arc import MAX_BYTES, Submission, SubmissionProblem
from domain.leaderboards.arc_validation import BodyTooLarge, check_submission, parse_submission
from domain.leaderboards.submissions import QuotaExceeded, network_key
from web.errors import TITLES
from web.public.leaderboard import board_of
from web.site import Site
from web.staff.session import load_or_create_secret
from web.submission_caps import flood_guard


class Answer(msgspec.Struct, frozen=True):
    """What the service says to a submission, over HTTP or inside an MCP tool result."""

    status: int
    body: dict[str, object]


async def start(site: Site) -> None:
    secret = await site.call(load_or_create_secret, site.settings.site_secret, site.settings.data_dir)
    # A key of its own: the network hashes cannot be tied to the session cookies' key.
    site.network_salt = hmac.new(secret, b"canitbuy leaderboard network v1", hashlib.sha256).digest()
    site.submission_flood = flood_guard(site.settings.redis_url, site.runtime.readmodels.db, site.call)


def _problem(status: int, detail: str, retry_after: int | None = None) -> Answer:
    error: dict[str, object] = {"status": status, "title": TITLES.get(status, "Error"), "detail": detail}
    if retry_after is not None:
        error["retry_after"] = retry_after
    return Answer(status, {"error": error})


def _until_tomorrow(now: datetime) -> int:
    """Seconds to the next UTC midnight, when the day's caps open again."""
    tomorrow = datetime.combine(now.astimezone(UTC).date() + timedelta(days=1), datetime.min.time(), UTC)
    return max(1, int((tomorrow - now).total_seconds()) + 1)


async def flooded(site: Site, request: Request) -> Response | None:
    """429 with Retry-After when the sender's network has sent too many requests this minute; None otherwise."""
    key = network_key(client_address(request), site.network_salt)
    wait = await site.submission_flood.retry_after(key)
    if not wait:
        return None
    detail = f"too many requests from this network; try again in {wait} seconds."
    return answer_response(_problem(429, detail, wait))


async def take(site: Site, body: bytes, address: str) -> Answer:
    """Check a submission and store it once; the answer says the id or the first problem found."""
    return await _take(site, address, lambda now: parse_submission(body, now))


async def take_read(site: Site, data: object, size: int, address: str) -> Answer:
    """The same for a submission already read by `read_json` (an MCP tool's arguments, `size` bytes of the request):
    over 200 KB is 413, then the checks `take` makes after reading its body, on the same values."""
    def check(now: datetime) -> Submission:
        if size > MAX_BYTES:
            raise BodyTooLarge(f"The submission is larger than 200 KB ({MAX_BYTES} bytes).")
        return check_submission(data, now)

    return await _take(site, address, check)


async def _take(site: Site, address: str, read: Callable[[datetime], Submission]) -> Answer:
    now = site.runtime.record.clock()
    try:
        submission = read(now)
    except BodyTooLarge as problem:
        return _problem(413, str(problem))
    except SubmissionProblem as problem:
        return _problem(400, str(problem))
    except RecursionError:  # the parser refuses JSON nested deeper than the interpreter's recursion limit
        return _problem(400, "not JSON we can read: nested too deep")
    key = network_key(address, site.network_salt)
    try:
        accepted = await site.call(site.runtime.record.submit_leaderboard_run, submission, network_key=key)
    except QuotaExceeded as limit:
        return _problem(429, str(limit), _until_tomorrow(now))
    await site.refresh()
    sid = str(accepted.id)
    # ARC's 201 says ok, id, status, n, cart_successes (docs/openapi.json); we add where it is listed.
    answer: dict[str, object] = {"ok": True, "id": sid, "status": "unverified", "n": len(submission.counted()),
                                 "cart_successes": submission.successes(), "url": f"/leaderboard#sub-{sid}"}
    if not accepted.created:
        first = board_of(site).book.entries.get(sid)
        answer.update(status=first.status if first else "unverified", duplicate=True,
                      note="The same run was submitted before: this is its first id.")
    return Answer(201 if accepted.created else 200, answer)


async def bounded_body(request: Request, limit: int = MAX_BYTES) -> bytes:
    """At most limit + 1 bytes of the body: enough to tell that it is too large, never the whole of it."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return bytes(body[: limit + 1])
    return bytes(body)


def answer_response(answer: Answer) -> Response:
    body = msgspec.json.encode(answer.body)
    headers = {"Cache-Control": "no-store", "ETag": '"' + hashlib.sha256(body).hexdigest()[:32] + '"'}
    if answer.status in (200, 201):
        headers["Location"] = str(answer.body["url"])
    error = answer.body.get("error")
    if answer.status == 429 and isinstance(error, dict) and "retry_after" in error:
        headers["Retry-After"] = str(error["retry_after"])
    return Response(body, status_code=answer.status, media_type="application/json", headers=headers)


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def is_json(request: Request) -> bool:
    """Whether the body is declared as JSON (parameters such as charset aside)."""
    return request.headers.get("content-type", "").partition(";")[0].strip().lower() == "application/json"


async def submit(request: Request) -> Response:
    site: Site = request.app.state.site
    if (refused := await flooded(site, request)) is not None:
        return refused
    length = request.headers.get("content-length", "")
    if not is_json(request):
        answer = _problem(400, "Send the submission as Content-Type: application/json.")
    elif length.isascii() and length.isdigit() and int(length) > MAX_BYTES:
        answer = _problem(413, f"The submission is larger than 200 KB ({MAX_BYTES} bytes).")
    else:
        try:
            body = await bounded_body(request)
        except ClientDisconnect:  # the sender left mid-body: nothing to take, nobody to answer, nothing to log
            return Response(status_code=400)
        answer = await take(site, body, client_address(request))
    return answer_response(answer)


routes = [Route("/api/leaderboard/submit", submit, methods=["POST"])]
