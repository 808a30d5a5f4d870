"""A run names its trace and video once, after it has ended; the event changes no week's facts and decodes
with the public schema (older events, without it, decode as ever)."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from domain.agent.runs import Run, RunError, ShownScreen
from domain.agent.verdicts import Verdict
from domain.eventlog.schema import Envelope, encode_payload, payload_decoder
from domain.projections.fold import LogState, fold_run, scheduled

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
TRACE, VIDEO = "a" * 64, "b" * 64


def ended_run() -> Run:
    run = Run.schedule(station="s01", model="baseline-robust", course_version="2.1", week="2026-W49",
                       kind="browser", requested_by="test", at=AT)
    run.start(worker="w", browser_version="chromium", agent_version="a", at=AT)
    run.finish(Verdict(passed=False, outcome="stopped"), steps=0, seconds=1.0, at=AT)
    return run


def test_a_run_keeps_its_media_once_and_only_after_it_ended() -> None:
    running = Run.schedule(station="s01", model="baseline-robust", course_version="2.1", week="2026-W49",
                           kind="browser", requested_by="test", at=AT)
    with pytest.raises(RunError, match="kept once it has ended"):
        running.keep_media(trace=TRACE, trace_bytes=10, video=VIDEO, video_bytes=20, at=AT)
    run = ended_run()
    run.keep_media(trace=TRACE, trace_bytes=10, video=VIDEO, video_bytes=20, at=AT)
    assert run.media_kept
    with pytest.raises(RunError, match="already"):
        run.keep_media(trace=TRACE, trace_bytes=10, video=VIDEO, video_bytes=20, at=AT)


def test_the_event_decodes_with_the_schema_and_changes_no_weeks_facts() -> None:
    run = ended_run()
    run.keep_media(trace=TRACE, trace_bytes=10, video=None, video_bytes=0, at=AT)
    events = run.collect_events()
    kept = events[-1]
    state = {k: v for k, v in vars(kept).items() if k not in ("originator_id", "originator_version")}
    payload = payload_decoder("Run.MediaKept").decode(encode_payload(state))
    assert (payload.trace, payload.trace_bytes, payload.video, payload.video_bytes) == (TRACE, 10, None, 0)
    fact = scheduled(str(run.id), events[0], 1)
    before = msgspec.structs.asdict(fact)
    assert fold_run(fact, "Run.MediaKept", payload, 5) is False
    assert msgspec.structs.asdict(fact) == before
    state_of_log = LogState()
    assert state_of_log.apply(Envelope(5, str(run.id), 5, "Run.MediaKept", payload)) == frozenset()


def test_the_videos_screens_decode_and_an_older_event_without_them_decodes_with_none() -> None:
    run = ended_run()
    screens = (ShownScreen(screenshot="c" * 64, seconds=1.234), ShownScreen(screenshot="d" * 64, seconds=1.0))
    run.keep_media(trace=TRACE, trace_bytes=10, video=None, video_bytes=0, screens=screens, at=AT)
    kept = run.collect_events()[-1]
    state = {k: v for k, v in vars(kept).items() if k not in ("originator_id", "originator_version")}
    assert payload_decoder("Run.MediaKept").decode(encode_payload(state)).screens == screens
    older = {k: v for k, v in state.items() if k != "screens"}  # as runs until 2 December 2026 wrote it
    decoded = payload_decoder("Run.MediaKept").decode(encode_payload({**older, "video": VIDEO, "video_bytes": 20}))
    assert (decoded.video, decoded.screens) == (VIDEO, ())


def test_a_trace_is_replaced_only_by_another_and_only_the_one_the_run_offers() -> None:
    """Run.TraceCleaned (`canitbuy traces clean`): the run offers the cleaned trace, or none, from then on."""
    run = ended_run()
    with pytest.raises(RunError, match="offers no trace"):
        run.clean_trace(replaced=TRACE, trace="c" * 64, trace_bytes=9, at=AT)
    run.keep_media(trace=TRACE, trace_bytes=10, video=None, video_bytes=0, at=AT)
    assert run.trace == TRACE
    with pytest.raises(RunError, match="not dddddddddddd"):
        run.clean_trace(replaced="d" * 64, trace="c" * 64, trace_bytes=9, at=AT)
    with pytest.raises(RunError, match="cannot replace itself"):
        run.clean_trace(replaced=TRACE, trace=TRACE, trace_bytes=10, at=AT)
    run.clean_trace(replaced=TRACE, trace="c" * 64, trace_bytes=9, at=AT)
    assert run.trace == "c" * 64
    run.clean_trace(replaced="c" * 64, trace=None, trace_bytes=0, at=AT)
    assert run.trace is None and run.media_kept
    with pytest.raises(RunError, match="offers no trace"):
        run.clean_trace(replaced="c" * 64, trace="e" * 64, trace_bytes=9, at=AT)


def test_a_cleaned_trace_decodes_with_the_schema_and_changes_no_weeks_facts() -> None:
    run = ended_run()
    run.keep_media(trace=TRACE, trace_bytes=10, video=None, video_bytes=0, at=AT)
    run.clean_trace(replaced=TRACE, trace="c" * 64, trace_bytes=9, at=AT)
    events = run.collect_events()
    state = {k: v for k, v in vars(events[-1]).items() if k not in ("originator_id", "originator_version")}
    payload = payload_decoder("Run.TraceCleaned").decode(encode_payload(state))
    assert (payload.replaced, payload.trace, payload.trace_bytes) == (TRACE, "c" * 64, 9)
    fact = scheduled(str(run.id), events[0], 1)
    before = msgspec.structs.asdict(fact)
    assert fold_run(fact, "Run.TraceCleaned", payload, 6) is False
    assert msgspec.structs.asdict(fact) == before
    assert LogState().apply(Envelope(6, str(run.id), 6, "Run.TraceCleaned", payload)) == frozenset()
