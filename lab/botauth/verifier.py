"""Web Bot Auth: verifying an RFC 9421 HTTP message signature made with an agent's Ed25519 key.

A request passes when one of its signatures is tagged "web-bot-auth", covers at least `@authority` and
`signature-agent` (other components too, as RFC 9421 allows: the derived ones below and plain header fields),
is inside its created/expires window (at most 300 s long, 30 s clock skew), has not been seen before if it
carries a nonce, and verifies under the key of its keyid in the directory that Signature-Agent names. A request
carries at most MAX_SIGNATURES signatures naming at most MAX_ORIGINS directories; a malformed field is a
rejected signature, never an error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from starlette.datastructures import Headers
from starlette.types import Scope

from lab.botauth import fields
from lab.botauth.directory import DirectoryError, KeyDirectory

TAG = "web-bot-auth"
ALGORITHM = "ed25519"
MAX_WINDOW_S = 300
SKEW_S = 30
REQUIRED = {"@authority", "signature-agent"}
MAX_COMPONENTS = 16
DERIVED = ("@method", "@authority", "@scheme", "@path", "@query", "@request-target", "@target-uri")
"""The derived components a signature may cover; any other (e.g. @status, @query-param) is refused."""
MAX_SIGNATURES = 4
"""Signature labels looked at in one request: more is refused whole, never tried one by one."""
MAX_ORIGINS = 2
"""Key directories one request may make the lab fetch: each is a request the lab sends on its behalf."""


class SignatureRejected(Exception):
    """Why a signature does not let the request through (kept for tests and logs; never shown in detail)."""


@dataclass(frozen=True)
class SignedRequest:
    """What a signature can cover of a request, as the client sent it (raw path and query, Host as given)."""

    method: str
    scheme: str
    authority: str
    path: str
    query: str
    headers: Headers = field(default_factory=Headers)

    @classmethod
    def of(cls, scope: Scope) -> SignedRequest:
        # s11 answers /api/page?path=... by replaying an inner request: the signature covers the outer one.
        outer = scope.get("lab_signed_target")
        raw_path, query = outer if outer else (scope.get("raw_path") or scope["path"].encode(), scope["query_string"])
        headers = Headers(scope=scope)
        return cls(
            method=scope["method"].upper(),
            scheme=scope.get("scheme", "http").lower(),
            authority=headers.get("host", "").strip().lower(),
            path=raw_path.decode("latin-1") or "/",
            query=query.decode("latin-1"),
            headers=headers,
        )

    def derived(self, name: str) -> str:
        target = self.path + (f"?{self.query}" if self.query else "")
        values = {
            "@method": self.method,
            "@authority": self.authority,
            "@scheme": self.scheme,
            "@path": self.path,
            "@query": f"?{self.query}",
            "@request-target": target,
            "@target-uri": f"{self.scheme}://{self.authority}{target}",
        }
        if name not in DERIVED:
            raise SignatureRejected(f"component {name} is not supported")
        return values[name]

    def field_value(self, name: str) -> str:
        lines = self.headers.getlist(name)
        if not lines:
            raise SignatureRejected(f"covered field {name} is missing")
        return ", ".join(line.strip() for line in lines)


class ReplayGuard:
    """Remembers (keyid, nonce) pairs until their signature expires, so a nonce works once."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], float] = {}

    def first_use(self, keyid: str, nonce: str, expires: int) -> bool:
        now = time.time()
        if len(self._seen) > 10_000:
            self._seen = {k: v for k, v in self._seen.items() if v > now - SKEW_S}
        if (keyid, nonce) in self._seen:
            return False
        self._seen[(keyid, nonce)] = float(expires)
        return True


def _agent_value(header: str, label: str, item_params: dict[str, object]) -> tuple[str, str]:
    """(the origin named, the component value signed) from the Signature-Agent header."""
    if "key" in item_params:  # the dictionary form covered member by member: "signature-agent";key="sig1"
        member = fields.split_members(header).get(str(item_params["key"]))
        if member is None:
            raise SignatureRejected("signature-agent member missing")
        return fields.parse_string(member)[0], member
    text = header.strip()
    if text.startswith('"'):
        return fields.parse_string(text)[0], text
    members = fields.split_members(text)
    member = members.get(label) or next(iter(members.values()), "")
    return fields.parse_string(member)[0], text


def _field_value(request: SignedRequest, name: str, item_params: dict[str, object]) -> str:
    value = request.field_value(name)
    if not item_params:
        return value
    if set(item_params) != {"key"} or not isinstance(item_params["key"], str):
        raise SignatureRejected(f"parameters {sorted(item_params)} on {name} are not supported")
    member = fields.split_members(value).get(item_params["key"])
    if member is None:
        raise SignatureRejected(f"{name} has no member {item_params['key']}")
    return member


def _check_params(params: dict[str, object], names: list[str]) -> tuple[int, str]:
    """The expiry and keyid of a signature whose parameters and covered components are acceptable."""
    if params.get("tag") != TAG:
        raise SignatureRejected("not tagged web-bot-auth")
    if params.get("alg", ALGORITHM) != ALGORITHM:
        raise SignatureRejected("algorithm is not ed25519")
    if not set(names) >= REQUIRED or len(set(names)) != len(names) or len(names) > MAX_COMPONENTS:
        raise SignatureRejected("must cover @authority and signature-agent, each once")
    created, expires, keyid = params.get("created"), params.get("expires"), params.get("keyid")
    if not isinstance(created, int) or not isinstance(expires, int):
        raise SignatureRejected("created and expires are required")
    now = int(time.time())
    if created > now + SKEW_S or expires < now - SKEW_S or not 0 < expires - created <= MAX_WINDOW_S:
        raise SignatureRejected("outside its time window")
    if not isinstance(keyid, str):
        raise SignatureRejected("keyid is required")
    return expires, keyid


class Verifier:
    def __init__(self, directory: KeyDirectory, replay: ReplayGuard | None = None) -> None:
        self.directory = directory
        self.replay = replay or ReplayGuard()

    async def verify(self, request: SignedRequest) -> str:
        """The keyid of the first web-bot-auth signature that holds; raises SignatureRejected otherwise."""
        try:
            inputs = fields.split_members(request.headers.get("signature-input", ""))
            signatures = fields.split_members(request.headers.get("signature", ""))
        except fields.FieldError as error:
            raise SignatureRejected(str(error)) from error
        if len(inputs) > MAX_SIGNATURES:
            raise SignatureRejected(f"{len(inputs)} signatures; at most {MAX_SIGNATURES} are looked at")
        reasons, origins = [], set[str]()
        for label, raw in inputs.items():
            try:
                return await self._verify_one(request, label, raw, signatures.get(label), origins)
            except (SignatureRejected, DirectoryError, ValueError) as error:  # FieldError is a ValueError
                reasons.append(f"{label}: {error}")
        raise SignatureRejected("; ".join(reasons) or "no signature")

    async def _verify_one(self, request: SignedRequest, label: str, raw: str, signature: str | None,
                          origins: set[str]) -> str:
        spec = fields.parse_inner_list(raw)
        expires, keyid = _check_params(spec.params, [name for name, _ in spec.items])
        agent_header = request.headers.get("signature-agent")
        if agent_header is None or signature is None:
            raise SignatureRejected("Signature-Agent and Signature are required")
        lines, agent = [], ""
        for name, item_params in spec.items:
            if name == "signature-agent":
                agent, value = _agent_value(agent_header, label, item_params)
            elif name.startswith("@"):
                if item_params:
                    raise SignatureRejected(f"parameters on {name} are not supported")
                value = request.derived(name)
            else:
                value = _field_value(request, name, item_params)
            component = fields.serialise_string(name) + "".join(
                f";{k}={fields.serialise_string(str(v))}" for k, v in item_params.items()
            )
            lines.append(f"{component}: {value}")
        lines.append(f'"@signature-params": {raw}')
        origins.add(agent)
        if len(origins) > MAX_ORIGINS:
            raise SignatureRejected(f"signatures name more than {MAX_ORIGINS} key directories")
        key = (await self.directory.keys(agent)).get(keyid)
        if key is None:
            raise SignatureRejected("keyid is not in the agent's directory")
        try:
            key.verify(fields.parse_bytes(signature), "\n".join(lines).encode("latin-1", "replace"))
        except InvalidSignature as error:
            raise SignatureRejected("signature does not verify") from error
        nonce = spec.params.get("nonce")
        if nonce is not None and not self.replay.first_use(keyid, str(nonce), expires):
            raise SignatureRejected("nonce already used")
        return keyid


async def verified_keyid(scope: Scope, verifier: Verifier) -> str | None:
    """The keyid of a valid Web Bot Auth signature, verified once per request: the verdict stays in scope["lab"]
    (agent_keyid, or signature_rejected) for s13's gate and the checkout, since a nonce works only once."""
    lab = scope["lab"]
    if "agent_keyid" in lab:
        return str(lab["agent_keyid"])
    if lab.get("signature_rejected") or not any(k == b"signature-input" for k, _ in scope["headers"]):
        return None
    try:
        lab["agent_keyid"] = await verifier.verify(SignedRequest.of(scope))
    except SignatureRejected as reason:
        lab["signature_rejected"] = str(reason)
        return None
    return str(lab["agent_keyid"])
