"""What was released stays as released: the course spec we serve is the released one, field by field.

The seed (tests/fixtures/course-spec-2.1.truncated.json, a copy of shared/seeds/) breaks off inside s06's `fix`, so
every complete field it has is compared exactly and the cut one as a prefix.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import msgspec
import pytest
from partial_json import PartialArray, PartialObject, Prefix, assert_released_as, read_partial
from scoring_builders import MONDAY, WEEK, correction, full_week, week_facts

from domain.courses.course import course_bytes
from domain.projections.documents import week_documents

ROOT = Path(__file__).parents[3]
SEED = ROOT / "tests" / "fixtures" / "course-spec-2.1.truncated.json"
SHARED_SEED = ROOT.parent / "shared" / "seeds" / "course-spec-2.1.truncated.json"
METHOD_CITATION = re.compile(r"CanItBuy AI agent ranking, canitbuy\.com/ranking, (\d{4}-W\d\d), (\d{4}-\d\d-\d\d)")


def seed() -> object:
    return read_partial(SEED.read_text(encoding="utf-8"))


def test_the_fixture_is_the_shared_seed_when_the_shared_folder_is_there():
    if SHARED_SEED.exists():  # CI has a read-only copy of shared/ beside the clone; the fixture must not drift
        assert SEED.read_bytes() == SHARED_SEED.read_bytes()
    assert SEED.read_bytes().rstrip().endswith(b'"fix": "Keep a visible native')


def test_the_partial_reader_keeps_every_complete_field_and_the_cut_prefix():
    spec = seed()
    assert isinstance(spec, PartialObject) and isinstance(spec["stations"], PartialArray)
    s06 = spec["stations"][5]
    assert isinstance(s06, PartialObject) and s06["code"] == "s06" and s06["fix"] == Prefix("Keep a visible native")
    assert isinstance(s06["fix"], Prefix) and not isinstance(s06["obstacle"], Prefix)
    assert len(spec["rules"]) == 5 and spec["task"]["answer"].endswith("30 days to return.")


def test_a_word_added_to_a_released_field_is_caught():
    released = json.loads(course_bytes())
    released["stations"][5]["obstacle"] = released["stations"][5]["obstacle"].replace(" list.", " list (clarified).")
    with pytest.raises(AssertionError, match=r"stations\[5\]\.obstacle"):
        assert_released_as(seed(), released)
    released = json.loads(course_bytes())
    released["stations"][5]["fix"] = "Keep a native select"
    with pytest.raises(AssertionError, match=r"stations\[5\]\.fix"):
        assert_released_as(seed(), released)


def test_the_course_we_serve_has_every_released_field_exactly_as_released():
    compared = assert_released_as(seed(), json.loads(course_bytes()))
    assert compared > 60  # every task, rule, scoring line, stage and the stations s01..s06 as far as the seed goes


def test_the_week_documents_cite_as_the_method_gives_it():
    late = MONDAY + timedelta(days=3)
    docs = week_documents(week_facts(full_week("a", 17) + full_week("b", 3, at=late)))
    for document in (json.loads(docs.ranking), json.loads(docs.matrix)):
        cited = METHOD_CITATION.fullmatch(document["citation"])
        assert cited, document["citation"]
        assert cited.groups() == (WEEK, late.date().isoformat())  # the day of the newest result


def test_a_correction_moves_the_citation_date_on():
    issued = MONDAY + timedelta(days=9)
    fix = msgspec.structs.replace(correction("station_week", "exclude", station="s07"), issued_at=issued)
    facts = week_facts(full_week("a", 17), [fix])
    assert json.loads(week_documents(facts).ranking)["citation"].endswith(f", {WEEK}, {issued.date().isoformat()}")
