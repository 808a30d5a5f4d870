"""A rich week, built deterministically: every cell status, cut-short causes, repeats, every kind of correction
(one withdrawn), labels, a consented private test and a run started in the next week. Its documents were written
by the code before the documents became Structs (tests/fixtures/documents-before-structs/), so a test can prove
the Structs encode to the same bytes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scoring_builders import COURSE, MONDAY, WEEK, release

from domain.agent.verdicts import Verdict
from domain.courses.course import CURRENT_VERSION
from domain.projections.facts import CorrectionFact, RunFact, WeekFacts

MODELS = ["alpha", "beta", "gamma", "delta"]


def _run(n: int, model: str, station: str, verdict: Verdict | None, *, status: str = "finished",
         cause: str | None = None, repeat: int = 0, attempt: int = 1, org: str | None = None,
         consented: bool = False) -> RunFact:
    ended = MONDAY + timedelta(minutes=n)
    return RunFact(
        run_id=f"00000000-0000-0000-0000-{n:012d}", station=station, model=model, week=WEEK,
        kind="reader" if COURSE.station(station).is_reading else "browser", course_version=CURRENT_VERSION,
        task="shop_brief" if station in ("s15", "s16") else "shop", attempt=attempt, repeat=repeat, org=org,
        scheduled_at=MONDAY, position=100 + n, status=status, started_at=MONDAY + timedelta(seconds=n),
        ended_at=ended, end_position=100 + n, verdict=verdict, cut_short_cause=cause, steps=n % 9 + 1,
        milliseconds=1000 + n, consented_at=ended if consented else None,
    )


def _verdict(model_index: int, station_index: int) -> Verdict:
    pick = (model_index * 7 + station_index * 3) % 6
    if pick in (0, 1, 2):
        remarks = ["consent_all"] if station_index % 5 == 0 else []
        return Verdict(passed=True, outcome="passed", stage="order", step=5 + pick, remarks=remarks)  # type: ignore[list-item]
    if pick == 3:
        return Verdict(passed=False, outcome="verification_page", stage="entry", step=2)
    if pick == 4:
        return Verdict(passed=False, outcome="broke_brief", stage="order", step=9,
                       broke=["consent_all", "add_extras"])  # type: ignore[list-item]
    return Verdict(passed=False, outcome="step_limit", stage="cart", step=16)


def rich_runs() -> list[RunFact]:
    runs: list[RunFact] = []
    n = 1
    for m, model in enumerate(MODELS):
        for s, station in enumerate(COURSE.codes):
            if model == "delta" and s % 4 == 1:
                continue  # not run
            if model == "gamma" and station == "s01":
                runs.append(_run(n, model, station, None, status="cut_short", cause="model_connection"))
            elif model == "beta" and station == "s05":
                runs.append(_run(n, model, station, None, status="cut_short", cause="our_error"))
            else:
                runs.append(_run(n, model, station, _verdict(m, s)))
                if model in ("alpha", "beta") and s % 3 == 0:
                    n += 1
                    runs.append(_run(n, model, station, _verdict(m + 1, s), repeat=1))
            n += 1
    runs.append(_run(n, "alpha", "s02", _verdict(0, 0), org="acme", consented=True))
    runs.append(_run(n + 1, "alpha", "s03", None, status="running"))
    return runs


def rich_corrections(runs: list[RunFact]) -> list[CorrectionFact]:
    def corr(n: int, target: str, change: str, **fields: object) -> CorrectionFact:
        return CorrectionFact(
            correction_id=f"10000000-0000-0000-0000-{n:012d}", target=target, change=change, week=WEEK,
            reason=f"reason {n}", public_text=f"public text {n}", by="staff@canitbuy.com",
            issued_at=MONDAY + timedelta(days=1, minutes=n), position=1000 + n, **fields,  # type: ignore[arg-type]
        )

    beta_s07 = next(r for r in runs if r.model == "beta" and r.station == "s07")
    alpha_s09 = next(r for r in runs if r.model == "alpha" and r.station == "s09")
    return [
        corr(1, "run", "void", run_id=beta_s07.run_id, model="beta", station="s07"),
        corr(2, "run", "set_outcome", run_id=alpha_s09.run_id, model="alpha", station="s09", passed=True,
             outcome="passed"),
        corr(3, "station_week", "exclude", station="s11"),
        corr(4, "model_week", "exclude", model="delta",
             withdrawn=True, withdrawn_at=datetime(2026, 11, 27, tzinfo=UTC), withdrawn_by="lead@canitbuy.com",
             withdrawn_reason="excluded by mistake", withdrawn_position=1100),
        corr(5, "run", "note", run_id=alpha_s09.run_id, model="alpha", station="s09"),
    ]


def rich_facts() -> WeekFacts:
    runs = rich_runs()
    return WeekFacts(
        week=WEEK, runs=[r for r in runs if r.org is None], corrections=rich_corrections(runs),
        releases=[release()], labels={"alpha": "Alpha 1", "beta": "Beta (preview)"},
        position=max(r.position for r in runs) + 1000,
    )
