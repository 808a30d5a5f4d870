"""Who may claim a lab receipt: agent keys registered to submitters, and receipts already spent.

Every receipt we ever issued may be public (published runs keep theirs), so holding one proves nothing. A
receipt proves a run of a submission only when the lab signed it for a request signed with the agent's Web Bot
Auth key (its `agent_keyid`), that key was registered to the submission's agent before the run, and the receipt
has never verified another submission. Both facts are events: `AgentKey.Registered` (its time is the
registration time) and `SpentReceipt.Spent` (one aggregate a receipt id, so a second spend of the same `jti`
cannot be saved, even by a race).
"""

from __future__ import annotations

import re
from datetime import datetime
from uuid import UUID, uuid5

import msgspec
from eventsourcing.domain import Aggregate

from domain.leaderboards.submissions import NAMESPACE

KEYID = re.compile(r"^[A-Za-z0-9_-]{43}$")
"""A Web Bot Auth key id: the RFC 7638 SHA-256 thumbprint of the agent's Ed25519 JWK, base64url (43 characters)."""


class AgentKeyError(ValueError):
    """A key registration that cannot be made; the message says why."""


def agent_key_id(keyid: str) -> UUID:
    """One aggregate a key id: a key is registered once, to one agent."""
    return uuid5(NAMESPACE, f"agent-key:{keyid}")


def spent_receipt_id(jti: str) -> UUID:
    """One aggregate a receipt id: a receipt verifies at most one submission."""
    return uuid5(NAMESPACE, f"receipt-jti:{jti}")


def agent_name_key(name: str) -> str:
    """How agent names are compared: case and surrounding or repeated spaces do not make another agent."""
    return " ".join(name.split()).casefold()


class KeyRegistration(msgspec.Struct, frozen=True, kw_only=True):
    """What verification needs to know of a registered key."""

    keyid: str
    agent: str
    registered_at: datetime


class AgentKey(Aggregate):
    class Registered(Aggregate.Created):
        """Staff registered an agent's Web Bot Auth key, after checking that the agent's builder holds it. Receipts
        naming this key prove runs of this agent only when the run started after this event's timestamp."""

        keyid: str
        """The key id: the RFC 7638 thumbprint of the agent's Ed25519 public key, as receipts name it."""
        agent: str
        """The agent name (as in a submission's agent.name) the key belongs to."""
        evidence: str
        """How staff checked that the builder holds the key, e.g. the key directory URL on the builder's domain."""
        by: str
        """The staff member who registered it."""

    def __init__(self, *, keyid: str, agent: str, evidence: str, by: str) -> None:
        self.keyid, self.agent, self.evidence, self.by = keyid, agent, evidence, by

    @classmethod
    def register(cls, *, keyid: str, agent: str, evidence: str, by: str, at: datetime) -> AgentKey:
        keyid, agent, evidence = keyid.strip(), " ".join(agent.split()), evidence.strip()
        if not KEYID.match(keyid):
            raise AgentKeyError("the key id must be the key's RFC 7638 thumbprint: 43 base64url characters")
        if not agent or len(agent) > 60:
            raise AgentKeyError("name the agent as its submissions do (agent.name, 1 to 60 characters)")
        if not evidence or len(evidence) > 300:
            raise AgentKeyError("say how the builder showed it holds the key (at most 300 characters)")
        return cls._create(cls.Registered, id=agent_key_id(keyid), timestamp=at, keyid=keyid, agent=agent,
                           evidence=evidence, by=by)

    def registration(self) -> KeyRegistration:
        created: datetime = self.created_on
        return KeyRegistration(keyid=self.keyid, agent=self.agent, registered_at=created)


class SpentReceipt(Aggregate):
    class Spent(Aggregate.Created):
        """A lab receipt verified a submission: its `jti` proves no other submission, ever."""

        jti: str
        """The receipt's id, as the lab signed it."""
        submission_id: str
        """The submission it verified."""
        station: str
        """The station the receipt is for."""
        by: str

    def __init__(self, *, jti: str, submission_id: str, station: str, by: str) -> None:
        self.jti, self.submission_id, self.station, self.by = jti, submission_id, station, by

    @classmethod
    def spend(cls, *, jti: str, submission: UUID, station: str, by: str, at: datetime) -> SpentReceipt:
        return cls._create(cls.Spent, id=spent_receipt_id(jti), timestamp=at, jti=jti,
                           submission_id=str(submission), station=station, by=by)
