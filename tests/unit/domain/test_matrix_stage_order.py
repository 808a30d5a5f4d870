"""The Matrix carries the order of its stations by stage (documents format 3), so no page sorts them again; weeks
published in format 2 still get format 2's bytes."""

from __future__ import annotations

import msgspec
from rich_week import rich_facts

from domain.courses.course import load_course
from domain.projections.documents import MATRIX_FORMAT, Matrix, in_stage_order, week_documents
from web.public.week_views import matrix_rows, stage_groups

FACTS = rich_facts()
MATRIX = msgspec.json.decode(week_documents(FACTS).matrix, type=Matrix)
FOUR = msgspec.json.decode(week_documents(FACTS, 4).matrix, type=Matrix)
"""Format 4: format 5 less its control-first station rates (the order and stages are the same)."""
COURSE = load_course(MATRIX.course_version)
STAGE_KEYS = ["control", *(s.key for s in COURSE.stages)]


def test_the_matrix_lists_its_stations_control_first_then_stage_by_stage_in_the_course_order():
    codes = [s.code for s in MATRIX.stations]
    assert MATRIX.format == MATRIX_FORMAT == "canitbuy-matrix/5"  # formats 4 and 5 keep format 3's order
    assert codes[0] == COURSE.control.code == "s01" and codes != COURSE.codes
    assert sorted(codes) == sorted(COURSE.codes)
    stages = [s.stage for s in MATRIX.stations]
    assert stages == sorted(stages, key=STAGE_KEYS.index), "each stage's stations together, stages in course order"
    for stage in STAGE_KEYS:  # within a stage, the course's order
        within = [c for c in codes if COURSE.station(c).stage == stage]
        assert within == [c for c in COURSE.codes if c in within]


def test_its_stages_name_every_stage_in_that_order_with_its_stations():
    assert [g.key for g in MATRIX.stages] == STAGE_KEYS
    assert [g.name for g in MATRIX.stages] == [COURSE.stage_name(k) for k in STAGE_KEYS]
    assert MATRIX.stages[0].name == "Control" and MATRIX.stages[0].stations == ["s01"]
    assert [c for g in MATRIX.stages for c in g.stations] == [s.code for s in MATRIX.stations]


def test_format_2_is_the_same_matrix_in_the_course_order_without_stages():
    two = msgspec.json.decode(week_documents(FACTS, 2).matrix, type=Matrix)
    assert two.format == "canitbuy-matrix/2" and two.stages == []
    assert [s.code for s in two.stations] == COURSE.codes
    assert in_stage_order(two, COURSE) == msgspec.structs.replace(FOUR, format=two.format)


def test_the_ranking_is_not_changed_by_format_3():
    assert week_documents(FACTS, 3).ranking == week_documents(FACTS, 2).ranking


def test_format_3_is_this_matrix_under_its_own_name_when_start_and_end_orders_agree():
    # The rich week's runs start in the order they end, so counting by start (format 4) picks the same runs.
    three = msgspec.json.decode(week_documents(FACTS, 3).matrix, type=Matrix)
    assert three == msgspec.structs.replace(FOUR, format="canitbuy-matrix/3")


def test_the_pages_follow_the_order_the_document_carries_without_sorting_it():
    # A document whose stages come in another order than the course's: the page shows the document's order.
    by_code = {s.code: s for s in MATRIX.stations}
    stages = MATRIX.stages[::-1]
    turned = msgspec.structs.replace(MATRIX, stages=stages, stations=[by_code[c] for g in stages for c in g.stations])
    groups = stage_groups(turned)
    assert [g.key for g in groups] == STAGE_KEYS[::-1]
    assert [s.code for g in groups for s in g.stations] == [s.code for s in turned.stations]
    row = matrix_rows(turned)[0]
    model = turned.models[0]
    assert [c.run_id for c in row.cells] == [model.cells[s.code].run_id for s in turned.stations]
