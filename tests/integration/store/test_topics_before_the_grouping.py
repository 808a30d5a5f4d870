"""Events stored under the topics of the flat domain/ (before it was grouped into sub-packages) still read.

The events are written as the old code wrote them: the topic column and each aggregate's `originator_topic` hold
the old module paths, spelled out below as literal strings. Then the record of today opens the store, loads the
aggregates, reads the log, filters it by topic and appends to an old aggregate, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from adapters.eventstore import open_record
from domain.agent.runs import Run
from domain.agent.verdicts import Verdict
from domain.eventlog.record import Record
from domain.eventlog.schema import EVENT_CLASSES, public_name
from domain.eventlog.topics import topics_of
from domain.leaderboards.receipt_ledger import AgentKey
from domain.orgs.organisations import Organisation

# domain-move: keep (the topics as the code before the grouping stored them)
STORED_AS = {
    "Run": "domain.runs:Run",
    "Run.Scheduled": "domain.runs:Run.Scheduled",
    "Run.Started": "domain.runs:Run.Started",
    "AgentKey": "domain.receipt_ledger:AgentKey",
    "AgentKey.Registered": "domain.receipt_ledger:AgentKey.Registered",
    "Organisation": "domain.organisations:Organisation",
    "Organisation.Registered": "domain.organisations:Organisation.Registered",
    "Organisation.MemberAdded": "domain.organisations:Organisation.MemberAdded",
}
# domain-move: end keep

KEY_ID = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"  # an RFC 7638 thumbprint's shape


def store_as_before(record: Record, *aggregates: object) -> None:
    """Insert the aggregates' new events with the old topics, as the old code's mapper stored them."""
    stored = []
    for aggregate in aggregates:
        for event in aggregate.collect_events():  # type: ignore[attr-defined]
            mapped = record.mapper.to_stored_event(event)
            name = type(event).__qualname__
            state = json.loads(mapped.state)
            if "originator_topic" in state:
                state["originator_topic"] = STORED_AS[name.split(".")[0]]
            stored.append(StoredEvent(
                originator_id=mapped.originator_id, originator_version=mapped.originator_version,
                topic=STORED_AS[name], state=json.dumps(state, separators=(",", ":")).encode(),
            ))
    record.recorder.insert_events(stored)


def old_history(record: Record) -> tuple[UUID, UUID]:
    now = record.clock()
    run = Run.schedule(station="s01", model="baseline-scripted", course_version="2.1", week="2026-W48",
                       kind="browser", requested_by="test", at=now)
    run.start(worker="w", browser_version="b", agent_version="a", at=now)
    key = AgentKey.register(keyid=KEY_ID, agent="Old Agent", evidence="a note", by="lead", at=now)
    org = Organisation.register(slug="old-org", name="Old Org", by="lead", at=now)
    org.add_member("someone@example.org", by="lead", at=now)
    store_as_before(record, run, key, org)
    return run.id, org.id


def stored_topics(record: Record) -> set[str]:
    return {n.topic for n in record.recorder.select_notifications(0, 1000)}


def test_a_log_stored_under_the_old_topics_reads_and_grows_with_todays_classes(settings):
    writer = open_record(settings)
    try:
        run_id, org_id = old_history(writer)
        event_topics = {topic for name, topic in STORED_AS.items() if "." in name}
        assert event_topics <= stored_topics(writer)  # the log holds the old topics, literally
    finally:
        writer.close()

    record = open_record(settings)
    try:
        run = record.get_run(run_id)
        assert (type(run), run.status, run.model) == (Run, "running", "baseline-scripted")
        assert [k.agent for k in record.agent_keys()] == ["Old Agent"]
        assert record.organisation("old-org").id == org_id

        verdict = Verdict(passed=True, outcome="passed", stage="entry", step=2)
        record.finish_run(run_id, verdict, steps=2, seconds=3.0)
        assert record.get_run(run_id).status == "finished"
        assert topics_of(Run.Finished)[0] in stored_topics(record)  # the new event is stored under today's topic

        names = [e.name for e in record.read_log(after=0, limit=1000) if e.originator_id == str(run_id)]
        assert names == ["Run.Scheduled", "Run.Started", "Run.Finished"]
        assert names[-1] == public_name(Run.Finished)
    finally:
        record.close()


BORN_AFTER_THE_GROUPING = {"Run.TraceCleaned"}
"""Event types added after domain/ was grouped (December 2026): never stored under a flat topic."""


def test_a_filter_of_the_log_by_topic_asks_for_every_topic_an_event_class_was_stored_under():
    for cls in EVENT_CLASSES:
        topics = topics_of(cls)
        assert topics[0] == f"{cls.__module__}:{cls.__qualname__}"  # its own first, as new events are stored
        flat = [t for t in topics if t.partition(":")[0].count(".") == 1]  # domain.<module>: the flat domain/
        assert len(flat) == (0 if public_name(cls) in BORN_AFTER_THE_GROUPING else 1), topics
    for name in ("Run.Scheduled", "AgentKey.Registered", "Organisation.MemberAdded"):
        cls = next(c for c in EVENT_CLASSES if public_name(c) == name)
        assert STORED_AS[name] in topics_of(cls)
