"""`POST /api/leaderboard/submit`: ARC's submission service, answering as ARC does.

- 201 with the id: stored, listed as unverified.
- 200 with the first id: the same run (the same fingerprint) was sent before. ARC says only that it "returns the
  first id"; nothing new is made, so we answer 200 rather than 201, with `"duplicate": true`. A repeat uses none of
  the day's quota.
- 400 with the first problem found, naming the field (also for a body over 200 KB: ARC answers every refusal with
  the first problem, so we do too, rather than 413).
- 429 with the reason: 5 submissions a network a day, 200 a day overall (UTC days).

Only `Content-Type: application/json` is taken (anything else is a 400): a browser sends that type to another
site only after a CORS preflight we never grant, so no page elsewhere can make its visitors submit. A body nested
too deep to parse is a 400 too, never a 500.

The body is read from the stream up to 200 KB + 1 byte and no further. The sender's network (/24, /48) is kept
only as a salted hash, to count its submissions.
"""

from __future__ import annotations

import hashlib
import hmac

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from domain.arc import MAX_BYTES, SubmissionProblem
from domain.arc_validation import parse_submission
from domain.submissions import QuotaExceeded, network_key
from web.errors import TITLES
from web.public.leaderboard import board_of
from web.site import Site
from web.staff.session import load_or_create_secret


class Answer(msgspec.Struct, frozen=True):
    """What the service says to a submission, over HTTP or inside an MCP tool result."""

    status: int
    body: dict[str, object]


async def start(site: Site) -> None:
    secret = await site.call(load_or_create_secret, site.settings.site_secret, site.settings.data_dir)
    # A key of its own: the network hashes cannot be tied to the session cookies' key.
    site.services["network_salt"] = hmac.new(secret, b"canitbuy leaderboard network v1", hashlib.sha256).digest()


def _problem(status: int, detail: str) -> Answer:
    return Answer(status, {"error": {"status": status, "title": TITLES.get(status, "Error"), "detail": detail}})


async def take(site: Site, body: bytes, address: str) -> Answer:
    """Check a submission and store it once; the answer says the id or the first problem found."""
    try:
        submission = parse_submission(body)
    except SubmissionProblem as problem:
        return _problem(400, str(problem))
    except RecursionError:  # the parser refuses JSON nested deeper than the interpreter's recursion limit
        return _problem(400, "not JSON we can read: nested too deep")
    key = network_key(address, site.services["network_salt"])
    try:
        accepted = await site.call(site.runtime.record.submit_leaderboard_run, submission, network_key=key)
    except QuotaExceeded as limit:
        return _problem(429, str(limit))
    await site.refresh()
    sid = str(accepted.id)
    answer: dict[str, object] = {"id": sid, "status": "unverified", "url": f"/leaderboard#sub-{sid}"}
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
    return Response(body, status_code=answer.status, media_type="application/json", headers=headers)


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def is_json(request: Request) -> bool:
    """Whether the body is declared as JSON (parameters such as charset aside)."""
    return request.headers.get("content-type", "").partition(";")[0].strip().lower() == "application/json"


async def submit(request: Request) -> Response:
    site: Site = request.app.state.site
    length = request.headers.get("content-length", "")
    if not is_json(request):
        answer = _problem(400, "Content-Type: must be application/json")
    elif length.isdigit() and int(length) > MAX_BYTES:
        answer = _problem(400, f"the submission is {length} bytes; at most {MAX_BYTES} (200 KB)")
    else:
        answer = await take(site, await bounded_body(request), client_address(request))
    return answer_response(answer)


routes = [Route("/api/leaderboard/submit", submit, methods=["POST"])]
