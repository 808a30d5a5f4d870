"""The correction form becomes the IssueCorrection kind its target and change name, with that kind's fields only."""

from __future__ import annotations

from uuid import UUID

import pytest

from domain.eventlog.commands import LeaveStationOut, SetRunOutcome, VoidRun
from web.staff.preview import PreviewError, correction_command

RUN = "6f1c0d1e-0000-4000-8000-000000000000"
TEXT = {"reason": "judge bug", "public_text": "Judged wrongly."}


def test_a_void_takes_the_run_and_ignores_the_forms_other_fields() -> None:
    form = {"target": "run", "change": "void", "run_id": RUN, "outcome": "passed", "model": "m", "week": "x", **TEXT}
    assert correction_command(form, "s") == VoidRun(run_id=UUID(RUN), by="s", **TEXT)


def test_setting_an_outcome_needs_the_outcome() -> None:
    form = {"target": "run", "change": "set_outcome", "run_id": RUN, **TEXT}
    with pytest.raises(PreviewError, match="needs the outcome"):
        correction_command(form, "s")
    assert correction_command({**form, "outcome": "passed"}, "s") == SetRunOutcome(
        run_id=UUID(RUN), outcome="passed", by="s", **TEXT)


def test_a_station_left_out_is_named_by_its_code_and_week() -> None:
    form = {"target": "station_week", "change": "exclude", "station": "S05", "week": "2026-W48", **TEXT}
    assert correction_command(form, "s") == LeaveStationOut(station="s05", week="2026-W48", by="s", **TEXT)


def test_a_change_the_target_does_not_have_is_refused() -> None:
    with pytest.raises(PreviewError, match="a run cannot be corrected by exclude"):
        correction_command({"target": "run", "change": "exclude", "run_id": RUN, **TEXT}, "s")
    with pytest.raises(PreviewError, match="not a run id"):
        correction_command({"target": "run", "change": "void", "run_id": "run 5", **TEXT}, "s")
