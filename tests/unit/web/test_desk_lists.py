"""What the desk lists: a staff action is an event naming a person; a run query narrows by each field it is given."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from domain.eventlog.schema import Envelope
from web.staff.action_log import action_of
from web.staff.find_run import RunQuery

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def envelope(name: str, **payload: object) -> Envelope:
    return Envelope(position=41, originator_id="x", originator_version=1, name=name,
                    payload=SimpleNamespace(timestamp=AT, **payload))


def test_an_event_by_a_person_is_a_staff_action_with_who_when_what_and_position() -> None:
    found = action_of(envelope("Correction.Issued", by="editor@canitbuy.com", target="run", change="void",
                               week="2026-W49"))
    assert found is not None
    assert (found.who, found.at, found.what, found.position) == ("editor@canitbuy.com", AT, "issued a correction", 41)
    assert found.detail == "week 2026-W49, target run, change void"


def test_a_run_scheduled_from_the_desk_counts_and_one_by_the_scheduler_does_not() -> None:
    assert action_of(envelope("Run.Scheduled", requested_by="editor@canitbuy.com")) is not None
    assert action_of(envelope("Run.Scheduled", requested_by="scheduler")) is None
    assert action_of(envelope("Run.StepRecorded")) is None


RUN = {"model": "claude-haiku-5.5", "station": "s05", "week": "2026-W49", "status": "finished",
       "outcome": "stopped", "cut_short_cause": None}
CUT = {**RUN, "status": "cut_short", "outcome": None, "cut_short_cause": "model_connection"}


def test_a_query_narrows_by_part_of_the_model_name_and_the_station_in_any_case() -> None:
    assert RunQuery(model="Haiku", station="S05").matches(RUN)
    assert not RunQuery(model="gpt").matches(RUN)
    assert not RunQuery(station="s06").matches(RUN)


def test_a_query_narrows_by_outcome_and_by_cause_or_any_cause() -> None:
    assert RunQuery(outcome="stopped").matches(RUN) and not RunQuery(outcome="passed").matches(RUN)
    assert RunQuery(cause="any").matches(CUT) and not RunQuery(cause="any").matches(RUN)
    assert RunQuery(cause="model_connection").matches(CUT) and not RunQuery(cause="our_error").matches(CUT)
