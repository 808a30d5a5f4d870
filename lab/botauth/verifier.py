"""Web Bot Auth: verifying an RFC 9421 HTTP message signature made with an agent's Ed25519 key.

A request passes when one of its signatures is tagged "web-bot-auth", covers `@authority` and
`signature-agent`, is inside its created/expires window (at most 300 s long, 30 s clock skew), has not been
seen before if it carries a nonce, and verifies under the key of its keyid in the directory that
Signature-Agent names.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from cryptography.exceptions import InvalidSignature

from lab.botauth import fields
from lab.botauth.directory import DirectoryError, KeyDirectory

TAG = "web-bot-auth"
MAX_WINDOW_S = 300
SKEW_S = 30
REQUIRED = {"@authority", "signature-agent"}


class SignatureRejected(Exception):
    """Why a signature does not let the request through (kept for tests and logs; never shown in detail)."""


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


class Verifier:
    def __init__(self, directory: KeyDirectory, replay: ReplayGuard | None = None) -> None:
        self.directory = directory
        self.replay = replay or ReplayGuard()

    async def verify(self, headers: Mapping[str, str], authority: str) -> None:
        """Returns when one web-bot-auth signature holds; raises SignatureRejected otherwise."""
        try:
            inputs = fields.split_members(headers.get("signature-input", ""))
            signatures = fields.split_members(headers.get("signature", ""))
        except fields.FieldError as error:
            raise SignatureRejected(str(error)) from error
        reasons = []
        for label, raw in inputs.items():
            try:
                await self._verify_one(headers, authority, label, raw, signatures.get(label))
                return
            except (SignatureRejected, fields.FieldError, DirectoryError) as error:
                reasons.append(f"{label}: {error}")
        raise SignatureRejected("; ".join(reasons) or "no signature")

    async def _verify_one(
        self, headers: Mapping[str, str], authority: str, label: str, raw: str, signature: str | None
    ) -> None:
        spec = fields.parse_inner_list(raw)
        params = spec.params
        if params.get("tag") != TAG:
            raise SignatureRejected("not tagged web-bot-auth")
        if params.get("alg", "ed25519") != "ed25519":
            raise SignatureRejected("algorithm is not ed25519")
        names = [name for name, _ in spec.items]
        if not set(names) >= REQUIRED or len(set(names)) != len(names) or not set(names) <= REQUIRED:
            raise SignatureRejected("must cover exactly @authority and signature-agent")
        created, expires = params.get("created"), params.get("expires")
        if not isinstance(created, int) or not isinstance(expires, int):
            raise SignatureRejected("created and expires are required")
        now = int(time.time())
        if created > now + SKEW_S or expires < now - SKEW_S or not 0 < expires - created <= MAX_WINDOW_S:
            raise SignatureRejected("outside its time window")
        keyid, agent_header = params.get("keyid"), headers.get("signature-agent")
        if not isinstance(keyid, str) or agent_header is None or signature is None:
            raise SignatureRejected("keyid, Signature-Agent and Signature are required")
        lines, agent = [], ""
        for name, item_params in spec.items:
            if name == "@authority":
                value = authority
            else:
                agent, value = _agent_value(agent_header, label, item_params)
            component = fields.serialise_string(name) + "".join(
                f";{k}={fields.serialise_string(str(v))}" for k, v in item_params.items()
            )
            lines.append(f"{component}: {value}")
        lines.append(f'"@signature-params": {raw}')
        key = (await self.directory.keys(agent)).get(keyid)
        if key is None:
            raise SignatureRejected("keyid is not in the agent's directory")
        try:
            key.verify(fields.parse_bytes(signature), "\n".join(lines).encode())
        except InvalidSignature as error:
            raise SignatureRejected("signature does not verify") from error
        nonce = params.get("nonce")
        if nonce is not None and not self.replay.first_use(keyid, str(nonce), expires):
            raise SignatureRejected("nonce already used")
