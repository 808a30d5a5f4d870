"""What CanItBuy's own agent has made public, kept by the site for the leaderboard desk (`OwnAgent`): the key our
directory serves, and the jti and agent key of the receipt of every run in our record, read from the Run.Finished
notifications as the log moves (the record filters them by topic). A receipt of ours is public with its run, and
our key in our directory: neither may prove an outside agent's run, nor our key be registered to one.
"""

from __future__ import annotations

import threading

import msgspec

from domain.eventlog.record import Record
from domain.eventlog.schema import NAME_TO_CLASS, name_for_topic, payload_decoder
from domain.eventlog.topics import topics_of
from domain.leaderboards.receipts import ReceiptRefused, jwk_thumbprint, parse
from domain.leaderboards.verification import OwnAgent

FINISHED = "Run.Finished"
TOPICS = topics_of(NAME_TO_CLASS[FINISHED])
PAGE = 1000
DIRECTORY = "our key directory"


class _Jwks(msgspec.Struct):
    keys: list[dict[str, str]]


def directory_keyids(directory: bytes) -> dict[str, str]:
    """The key ids of the keys our directory (a JWKS) lists, each to where it shows it is ours."""
    return {jwk_thumbprint(key["x"]): DIRECTORY for key in msgspec.json.decode(directory, type=_Jwks).keys}


class OwnReceipts:
    """Our agent's keys and our runs' receipts, up to the log position last read."""

    def __init__(self, record: Record, directory: bytes) -> None:
        self.record = record
        self._keys = directory_keyids(directory)
        self._receipts: dict[str, str] = {}
        self._after = 0
        self._lock = threading.Lock()

    def listener(self, head: int = 0) -> None:
        """Read the Run.Finished notifications after the last one read (`head` is unused: the record says)."""
        decoder = payload_decoder(FINISHED)
        with self._lock:
            while batch := self.record.recorder.select_notifications(
                self._after, PAGE, topics=TOPICS, inclusive_of_start=False
            ):
                for notification in batch:
                    if name_for_topic(notification.topic) != FINISHED:
                        continue
                    receipt = decoder.decode(notification.state).verdict.receipt
                    parsed = parse(receipt) if receipt else None
                    if parsed is None or isinstance(parsed, ReceiptRefused):
                        continue
                    run = str(notification.originator_id)
                    self._receipts[parsed.payload.jti] = run
                    if parsed.payload.agent_keyid:
                        self._keys.setdefault(parsed.payload.agent_keyid, f"the receipt of our run {run}")
                self._after = batch[-1].id

    def now(self) -> OwnAgent:
        """Caught up with the log first: a run that finished a moment ago counts already."""
        self.listener()
        with self._lock:
            return OwnAgent(keys=dict(self._keys), receipts=dict(self._receipts))
