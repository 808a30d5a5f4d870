"""Every staff action as a list: who, when, what, and the event's log position. A staff action is an event that
names a person (an e-mail) as its `by` or `requested_by`; the scheduler and the command line are not people.

The list is folded from the log on from where it stopped, under a lock, when the page is asked for.
"""

from __future__ import annotations

import threading
from datetime import datetime

import msgspec

from domain.eventlog.schema import Envelope
from domain.projections.fold import SKIMMED
from web.site import Site

PAGE = 5000

WHAT = {
    "Correction.Issued": "issued a correction",
    "Correction.Withdrawn": "withdrew a correction",
    "Run.Scheduled": "scheduled a run",
    "Week.Published": "published a week",
    "LineUp.EntrantSet": "changed the line-up",
    "ManualTest.Recorded": "recorded a test checked by hand",
}


class StaffAction(msgspec.Struct, frozen=True):
    position: int
    at: datetime
    who: str
    what: str
    detail: str


class StaffActions:
    def __init__(self) -> None:
        self.actions: list[StaffAction] = []
        self.position = 0
        self._lock = threading.Lock()

    def caught_up(self, site: Site) -> list[StaffAction]:
        """The actions so far, newest first (synchronous: call it in a worker thread)."""
        with self._lock:
            while page := site.runtime.record.read_log(after=self.position, limit=PAGE, skim=SKIMMED):
                self.actions += [a for e in page if (a := action_of(e)) is not None]
                self.position = page[-1].position
            return list(reversed(self.actions))


def action_of(envelope: Envelope) -> StaffAction | None:
    payload = envelope.payload
    who = getattr(payload, "by", None) or getattr(payload, "requested_by", None)
    if not isinstance(who, str) or "@" not in who:
        return None
    what = WHAT.get(envelope.name, envelope.name)
    return StaffAction(envelope.position, envelope.at, who, what, _detail(payload))


def _detail(payload: object) -> str:
    parts = [f"{name} {value}" for name in ("week", "model", "station", "target", "change")
             if isinstance(value := getattr(payload, name, None), str) and value]
    return ", ".join(parts)
