"""What a correction would change in its week's ranking, computed before it is issued.

The week's facts come from the read models; the correction is added to them hypothetically and the core's own
projection computes the ranking again, so the preview is exactly what issuing it will publish.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import msgspec

from adapters.readmodel_tables import Tables
from domain.corrections import Correction, CorrectionError
from domain.facts import CorrectionFact
from domain.projections.documents import week_documents
from domain.record import UnknownRunError
from domain.weeks import WeekError, parse_week
from web.data import SiteData

FIELDS = ("target", "change", "run_id", "model", "station", "week", "outcome", "reason", "public_text")


class PreviewError(ValueError):
    """The correction cannot be issued as it stands; the message says why."""


def correction_args(form: dict[str, str], by: str) -> dict[str, Any]:
    """Keyword arguments for Record.issue_correction from the form's text fields (checked by the domain)."""
    text = {k: (form.get(k) or "").strip() for k in FIELDS}
    target = text["target"]
    args: dict[str, Any] = {
        "target": target, "change": text["change"], "reason": text["reason"], "public_text": text["public_text"],
        "by": by,
    }
    if target == "run":
        try:
            args["run_id"] = UUID(text["run_id"])
        except ValueError:
            raise PreviewError("the run id is not a run id (a UUID)") from None
    else:
        try:
            args["week"] = parse_week(text["week"]) if text["week"] else None
        except WeekError as error:
            raise PreviewError(str(error)) from None
        args["model"] = text["model"] or None if target == "model_week" else None
        args["station"] = text["station"].lower() or None if target == "station_week" else None
    if text["change"] == "set_outcome":
        args["outcome"] = text["outcome"] or None
        args["passed"] = text["outcome"] == "passed"
    try:
        Correction.issue(at=datetime.now(UTC), **args)  # the domain's checks; nothing is saved
    except (CorrectionError, TypeError) as error:
        raise PreviewError(str(error)) from None
    return args


def preview(data: SiteData, args: dict[str, Any]) -> dict[str, Any]:
    """The week's ranking rows before and after, and which models moved."""
    run = None
    if args["target"] == "run":
        try:
            run = data.readmodels.run(str(args["run_id"]))
        except UnknownRunError:
            raise PreviewError("there is no public run with that id") from None
    week = run.week if run else args["week"]
    with data.readmodels.db.transaction() as tx:
        facts = Tables(tx).week_facts(week)
    if not facts.runs:
        raise PreviewError(f"week {week} has no public runs")
    hypothetical = CorrectionFact(
        correction_id="preview", target=args["target"], change=args["change"], week=week, reason=args["reason"],
        public_text=args["public_text"], by=args["by"], issued_at=datetime.now(UTC), position=facts.position + 1,
        run_id=str(args["run_id"]) if run else None, model=run.model if run else args.get("model"),
        station=run.station if run else args.get("station"), passed=args.get("passed"), outcome=args.get("outcome"),
    )
    before = msgspec.json.decode(week_documents(facts).ranking)
    after_facts = msgspec.structs.replace(facts, corrections=[*facts.corrections, hypothetical])
    after = msgspec.json.decode(week_documents(after_facts).ranking)
    return {"week": week, "run": run, "rows": _diff(before["entries"], after["entries"])}


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
