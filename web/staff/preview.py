"""What a correction would change in its week's ranking, computed before it is issued.

The desk's form becomes the same IssueCorrection command that issuing takes. For the preview, the command's
handler decides the correction without saving it; its event, as the log would give it back, is folded into a copy
of the week's state, and the core's own projection computes the ranking again: the preview is what issuing it
will publish, with no fact built by hand.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec

from domain.errata.corrections import CorrectionError
from domain.eventlog.commands import CORRECTION_KINDS, IssueCorrection
from domain.eventlog.handlers import correction_for, would_record
from domain.eventlog.record import Record, UnknownRunError
from domain.projections.documents import week_documents
from domain.projections.facts import WeekFacts
from domain.projections.fold import LogState
from domain.week.weeks import WeekError, parse_week
from web.data import SiteData

FIELDS = ("target", "change", "run_id", "model", "station", "week", "outcome", "reason", "public_text")
_COMMON = ("reason", "public_text")


class PreviewError(ValueError):
    """The correction cannot be issued as it stands; the message says why."""


def correction_command(form: dict[str, str], by: str) -> IssueCorrection:
    """The command the form asks for: the kind its target and change name, with that kind's fields only."""
    text = {k: (form.get(k) or "").strip() for k in FIELDS}
    kind = CORRECTION_KINDS.get((text["target"], text["change"]))
    if kind is None:
        raise PreviewError(f"a {text['target'] or 'correction'} cannot be corrected by {text['change'] or 'nothing'}")
    fields: dict[str, Any] = {"by": by}
    for name in kind.__struct_fields__:
        if name in text:
            fields[name] = _field(name, text[name])
    missing = [name.replace("_", " ") for name, value in fields.items() if value is None]
    if missing:
        raise PreviewError(f"this correction needs the {' and the '.join(missing)}")
    try:
        return msgspec.convert(fields, kind)
    except msgspec.ValidationError as error:
        raise PreviewError(f"the correction is incomplete: {error}") from None


def _field(name: str, value: str) -> Any:
    if name == "run_id":
        try:
            return UUID(value)
        except ValueError:
            raise PreviewError("the run id is not a run id (a UUID)") from None
    if name == "week":
        try:
            return parse_week(value)
        except WeekError as error:
            raise PreviewError(str(error)) from None
    if name == "station":
        return value.lower()
    return value if value or name in _COMMON else None


def preview(data: SiteData, record: Record, command: IssueCorrection) -> dict[str, Any]:
    """The week's ranking rows before and after, and which models moved."""
    run_id = getattr(command, "run_id", None)
    try:
        run = data.readmodels.run(str(run_id)) if run_id else None
        correction = correction_for(record, data, command)  # the handler's decision, not saved
    except UnknownRunError:
        raise PreviewError("there is no public run with that id") from None
    except CorrectionError as error:
        raise PreviewError(str(error)) from None
    week = run.week if run else str(getattr(command, "week", ""))
    facts = data.readmodels.week_facts(week)
    if not facts.runs:
        raise PreviewError(f"week {week} has no public runs")
    state = _copy_of(facts)
    state.fold(would_record(record, [correction], after=facts.position))
    before = msgspec.json.decode(week_documents(facts).ranking)
    after = msgspec.json.decode(week_documents(state.week_facts(week)).ranking)
    return {"week": week, "run": run, "rows": _diff(before["entries"], after["entries"])}


def _copy_of(facts: WeekFacts) -> LogState:
    """The state the log folds to, for this week: copies, since the fold changes the facts it holds."""
    state = LogState()
    state.runs = {r.run_id: msgspec.structs.replace(r) for r in facts.runs}
    state.corrections = {c.correction_id: msgspec.structs.replace(c) for c in facts.corrections}
    state.releases = {r.version: r for r in facts.releases}
    state.labels = dict(facts.labels)
    state.week_positions[facts.week] = state.position = facts.position
    return state


def _diff(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    old = {e["model"]: e for e in before}
    rows = []
    for e in after:
        was = old.get(e["model"], {})
        rows.append({
            "label": e["label"], "before": _line(was), "after": _line(e),
            "changed": _line(was) != _line(e),
        })
    return rows


def _line(entry: dict[str, Any]) -> str:
    if not entry:
        return "–"
    if entry["ranked"]:
        return f"place {entry['place']}, {entry['passed']} of {entry['of']}"
    reasons = ", ".join(r.replace("_", " ") for r in entry["reasons"])
    return f"not ranked ({reasons}), {entry['passed']} of {entry['of']}"
