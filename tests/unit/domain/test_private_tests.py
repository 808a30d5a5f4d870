"""Private tests: an organisation's runs never count, and show publicly only once its written consent covers them."""

from __future__ import annotations

from datetime import date, timedelta
from uuid import UUID

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_builders import COURSE, MONDAY, WEEK, envelope, kind_of, release_event

from domain.agent.verdicts import Verdict
from domain.courses.course import CURRENT_VERSION
from domain.eventlog.commands import ScheduleRun
from domain.eventlog.handlers import schedule_runs
from domain.eventlog.record import Record, check_target_url
from domain.eventlog.schema import Envelope, payload_type
from domain.orgs.organisations import Organisation, OrganisationError, organisation_id
from domain.projections import logs
from domain.projections.documents import week_documents
from domain.projections.fold import LogState
from domain.projections.repeats import repeats_bytes

ORGS = ("acme", "globex")


def rid(n: int) -> str:
    return f"00000000-0000-0000-0000-{n:012d}"


def run_log(position: int, model: str, station: str, passed: bool, org: str | None) -> list:
    verdict = Verdict(passed=passed, outcome="passed" if passed else "stopped", stage="entry", step=3)
    return [
        envelope(position, "Run.Scheduled", rid(position), station=station, model=model,
                 course_version=CURRENT_VERSION, week=WEEK, kind=kind_of(station), attempt=1, requested_by="t",
                 org=org),
        envelope(position + 1, "Run.Started", rid(position), 2, worker="w", browser_version="b", agent_version="a"),
        envelope(position + 2, "Run.Finished", rid(position), 3, verdict=verdict, steps=3, seconds=1.5),
    ]


def registered(position: int, org: str) -> object:
    fields = {"slug": org, "name": org.title(), "by": "staff", "timestamp": MONDAY + timedelta(seconds=position),
              "originator_topic": "x"}
    return Envelope(position, str(organisation_id(org)), 1, "Organisation.Registered",
                    payload_type("Organisation.Registered")(**fields))


def consent(position: int, org: str, run_ids: list[str], until: date | None) -> object:
    return envelope(position, "Organisation.ConsentRecorded", str(organisation_id(org)), 2, org=org,
                    run_ids=run_ids, until=until, document_sha256="a" * 64, reference="letter", by="staff")


# One step of a generated history: a run (model, station, passed, org or None), or a consent of an organisation
# naming some earlier runs by index and/or every run up to a day offset from Monday.
steps = st.lists(st.one_of(
    st.tuples(st.just("run"), st.sampled_from(["m1", "m2", "acme-agent"]), st.sampled_from(COURSE.codes),
              st.booleans(), st.sampled_from([None, None, "acme", "globex"])),
    st.tuples(st.just("consent"), st.sampled_from(ORGS), st.lists(st.integers(0, 40), max_size=4),
              st.one_of(st.none(), st.integers(-1, 1))),
), max_size=40)


def build(history: list) -> tuple[list, dict[str, bool]]:
    """The events, and the oracle: each private run id to whether a consent before it covers it."""
    events, position, runs, shown = [release_event(), registered(2, "acme"), registered(3, "globex")], 10, [], {}
    for item in history:
        if item[0] == "run":
            _, model, station, passed, org = item
            events += run_log(position, model, station, passed, org)
            runs.append((rid(position), org))
            if org is not None:
                shown[rid(position)] = False
            position += 3
        else:
            _, org, picks, offset = item
            named = sorted({runs[i][0] for i in picks if i < len(runs) and runs[i][1] == org})
            until = (MONDAY + timedelta(days=offset)).date() if offset is not None else None
            if not named and until is None:
                continue
            events.append(consent(position, org, named, until))
            for run_id, run_org in runs:  # every run so far was scheduled on Monday, before this consent
                if run_org == org and (run_id in named or (until is not None and MONDAY.date() <= until)):
                    shown[run_id] = True
            position += 1
    return events, shown


def folded(events: list) -> LogState:
    state = LogState()
    state.fold(events)
    return state


@settings(deadline=None, max_examples=60)
@given(steps)
def test_private_runs_and_consents_never_change_the_ranking_matrix_or_repeats(history):
    with_all, shown = build(history)
    private = {str(organisation_id(o)) for o in ORGS} | set(shown)
    public_only = [e for e in with_all if e.originator_id not in private]  # the same positions, no private event
    a, b = folded(with_all).week_facts(WEEK), folded(public_only).week_facts(WEEK)
    docs_a, docs_b = week_documents(a), week_documents(b)
    assert (docs_a.ranking, docs_a.matrix) == (docs_b.ranking, docs_b.matrix)
    assert repeats_bytes(a) == repeats_bytes(b)


@settings(deadline=None, max_examples=60)
@given(steps)
def test_a_private_run_is_in_the_run_index_exactly_when_an_earlier_consent_covers_it(history):
    events, shown = build(history)
    index = msgspec.json.decode(logs.runs_index(folded(events).runs.values()))["runs"]
    listed = {e["run_id"]: e for e in index}
    for run_id, expected in shown.items():
        assert (run_id in listed) is expected
        if expected:
            assert listed[run_id]["private_test"]["counts"] is False
    assert all(("private_test" in e) == (e["run_id"] in shown) for e in index)


@settings(deadline=None, max_examples=40)
@given(steps)
def test_without_consents_the_run_index_bytes_are_those_of_the_public_runs_alone(history):
    events, shown = build([h for h in history if h[0] == "run"])
    public_only = [e for e in events if e.originator_id not in shown]
    assert logs.runs_index(folded(events).runs.values()) == logs.runs_index(folded(public_only).runs.values())


def test_a_consent_reaches_no_run_scheduled_after_it():
    events = [release_event(), registered(2, "acme"), consent(3, "acme", [], date(2026, 12, 31)),
              *run_log(10, "acme-agent", "s01", True, "acme")]
    assert msgspec.json.decode(logs.runs_index(folded(events).runs.values()))["runs"] == []


def test_a_consent_of_one_organisation_never_reaches_another():
    events = [release_event(), registered(2, "acme"), registered(3, "globex"),
              *run_log(10, "g-agent", "s01", True, "globex"), consent(20, "acme", [rid(10)], date(2026, 12, 31))]
    assert msgspec.json.decode(logs.runs_index(folded(events).runs.values()))["runs"] == []


def test_a_consented_run_is_labelled_in_the_index_and_validates():
    events = [release_event(), registered(2, "acme"), *run_log(10, "acme-agent", "s02", False, "acme"),
              consent(20, "acme", [rid(10)], None)]
    from test_projections import validate

    (entry,) = validate("runs", logs.runs_index(folded(events).runs.values()))["runs"]
    assert entry["private_test"] == {"org": "acme", "consented_at": entry["private_test"]["consented_at"],
                                     "counts": False}


# --- the aggregate and the use cases -------------------------------------------------------------------------

def test_an_organisation_takes_a_plain_slug_and_a_name():
    with pytest.raises(OrganisationError, match="slug"):
        Organisation.register(slug="Acme Shoes", name="Acme", by="s", at=MONDAY)
    with pytest.raises(OrganisationError, match="name"):
        Organisation.register(slug="acme", name=" ", by="s", at=MONDAY)


def test_the_same_slug_cannot_be_registered_twice():
    record = Record()
    record.register_organisation(slug="acme", name="Acme", by="s")
    with pytest.raises(OrganisationError, match="already"):
        record.register_organisation(slug="acme", name="Acme again", by="s")


def test_members_are_added_and_removed_as_events():
    record = Record()
    record.register_organisation(slug="acme", name="Acme", by="s")
    record.add_member("acme", "ann@acme.test", by="s")
    with pytest.raises(OrganisationError, match="already"):
        record.add_member("acme", "ann@acme.test", by="s")
    record.remove_member("acme", "ann@acme.test", by="s")
    assert record.organisation("acme").members == set()
    names = [e.name for e in record.read_log()]
    assert names[-2:] == ["Organisation.MemberAdded", "Organisation.MemberRemoved"]


def test_a_consent_names_runs_or_a_date_and_carries_the_letter():
    record = Record()
    record.register_organisation(slug="acme", name="Acme", by="s")
    with pytest.raises(OrganisationError, match="names runs"):
        record.record_consent("acme", run_ids=[], until=None, document_sha256="a" * 64, reference="x", by="s")
    with pytest.raises(OrganisationError, match="blob store"):
        record.record_consent("acme", run_ids=[], until=date(2026, 1, 1), document_sha256="nope", reference="x",
                              by="s")


def schedule_one(record: Record, **fields: str) -> UUID:
    return schedule_runs(record, [ScheduleRun.on_course(requested_by="s", week=WEEK, **fields)])[0]


def test_a_consent_reaches_only_the_organisations_own_runs():
    record = Record()
    record.register_organisation(slug="acme", name="Acme", by="s")
    record.register_organisation(slug="globex", name="Globex", by="s")
    theirs = schedule_one(record, org="globex", station="s01", model="g")
    public = schedule_one(record, station="s01", model="m")
    for other in (theirs, public):
        with pytest.raises(OrganisationError, match="not a private test of acme"):
            record.record_consent("acme", run_ids=[str(other)], until=None, document_sha256="a" * 64,
                                  reference="x", by="s")
    ours = schedule_one(record, org="acme", station="s01", model="a")
    record.record_consent("acme", run_ids=[str(ours)], until=None, document_sha256="a" * 64, reference="x", by="s")
    scheduled_at = next(iter(record.repository.event_store.get(ours))).timestamp
    assert record.organisation("acme").is_public(str(ours), scheduled_at)
    assert not record.organisation("globex").is_public(str(theirs), scheduled_at)


def test_a_private_run_needs_a_registered_organisation_and_an_https_store():
    record = Record()
    with pytest.raises(OrganisationError, match="no organisation"):
        schedule_one(record, org="nobody", station="s01", model="a")
    for bad in ("http://shop.example.com/", "https://user:pw@shop.example.com/", "ftp://x", "https://", "shop"):
        with pytest.raises(OrganisationError, match="https"):
            check_target_url(bad)
    assert check_target_url(" https://shop.example.com/p ") == "https://shop.example.com/p"
    assert check_target_url("") is None
