"""The topics events were stored under before the domain was grouped into sub-packages, and what they are now.

eventsourcing stores each event with its class's topic ("module:Class.Event") and each aggregate's first event
with the aggregate's topic (`originator_topic`); both are resolved when the record is read. Grouping `domain/`
into sub-packages (December 2026) moved every class, so the topics stored before name modules that are gone.
The table below is that history, fixed: it never changes when a module moves again (add the newer topics then).

Importing this module registers every old topic with eventsourcing, so `resolve_topic` finds the class wherever
it lives now; `domain.eventlog.schema` imports it, and so does everything that opens the record or decodes its events.
Filters of the log by topic ask `topics_of` for every topic a class was ever stored under.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.utils import get_topic, register_topic

from domain.agent.agent_releases import AgentReleases
from domain.agent.lineup import LineUp
from domain.agent.runs import Run
from domain.courses.releases import CourseRelease
from domain.errata.corrections import Correction
from domain.leaderboards.arc_batches import ArcBatch
from domain.leaderboards.manual_tests import ManualTest
from domain.leaderboards.receipt_ledger import AgentKey, SpentReceipt
from domain.leaderboards.submissions import LeaderboardSubmission, SubmissionDay
from domain.orgs.organisations import Organisation
from domain.week.publications import Week

# domain-move: keep (the topics as stored until December 2026: never rewrite them)
STORED_BEFORE_THE_GROUPING: dict[str, Any] = {
    "domain.releases:CourseRelease": CourseRelease,
    "domain.releases:CourseRelease.Released": CourseRelease.Released,
    "domain.lineup:LineUp": LineUp,
    "domain.lineup:LineUp.Started": LineUp.Started,
    "domain.lineup:LineUp.EntrantSet": LineUp.EntrantSet,
    "domain.lineup:LineUp.ModelsChecked": LineUp.ModelsChecked,
    "domain.runs:Run": Run,
    "domain.runs:Run.Scheduled": Run.Scheduled,
    "domain.runs:Run.Started": Run.Started,
    "domain.runs:Run.StepRecorded": Run.StepRecorded,
    "domain.runs:Run.Finished": Run.Finished,
    "domain.runs:Run.CutShort": Run.CutShort,
    "domain.runs:Run.MediaKept": Run.MediaKept,
    "domain.corrections:Correction": Correction,
    "domain.corrections:Correction.Issued": Correction.Issued,
    "domain.corrections:Correction.Withdrawn": Correction.Withdrawn,
    "domain.publications:Week": Week,
    "domain.publications:Week.Opened": Week.Opened,
    "domain.publications:Week.Published": Week.Published,
    "domain.manual_tests:ManualTest": ManualTest,
    "domain.manual_tests:ManualTest.Recorded": ManualTest.Recorded,
    "domain.submissions:LeaderboardSubmission": LeaderboardSubmission,
    "domain.submissions:LeaderboardSubmission.Submitted": LeaderboardSubmission.Submitted,
    "domain.submissions:LeaderboardSubmission.VerificationStarted": LeaderboardSubmission.VerificationStarted,
    "domain.submissions:LeaderboardSubmission.Verified": LeaderboardSubmission.Verified,
    "domain.submissions:LeaderboardSubmission.Rejected": LeaderboardSubmission.Rejected,
    "domain.submissions:SubmissionDay": SubmissionDay,
    "domain.submissions:SubmissionDay.Opened": SubmissionDay.Opened,
    "domain.submissions:SubmissionDay.Counted": SubmissionDay.Counted,
    "domain.organisations:Organisation": Organisation,
    "domain.organisations:Organisation.Registered": Organisation.Registered,
    "domain.organisations:Organisation.MemberAdded": Organisation.MemberAdded,
    "domain.organisations:Organisation.MemberRemoved": Organisation.MemberRemoved,
    "domain.organisations:Organisation.ConsentRecorded": Organisation.ConsentRecorded,
    "domain.arc_batches:ArcBatch": ArcBatch,
    "domain.arc_batches:ArcBatch.Started": ArcBatch.Started,
    "domain.arc_batches:ArcBatch.Finished": ArcBatch.Finished,
    "domain.agent_releases:AgentReleases": AgentReleases,
    "domain.agent_releases:AgentReleases.Opened": AgentReleases.Opened,
    "domain.agent_releases:AgentReleases.Released": AgentReleases.Released,
    "domain.receipt_ledger:AgentKey": AgentKey,
    "domain.receipt_ledger:AgentKey.Registered": AgentKey.Registered,
    "domain.receipt_ledger:SpentReceipt": SpentReceipt,
    "domain.receipt_ledger:SpentReceipt.Spent": SpentReceipt.Spent,
}
# domain-move: end keep

OLD_TOPICS: dict[str, Any] = {
    topic: cls for topic, cls in STORED_BEFORE_THE_GROUPING.items() if topic != get_topic(cls)
}
"""Every stored topic that is no longer its class's own (empty before the grouping, when they were the same)."""

for _topic, _cls in OLD_TOPICS.items():
    register_topic(_topic, _cls)


def topics_of(cls: type[Any]) -> list[str]:
    """Every topic events of `cls` may be stored under: its own first, then the ones it had before."""
    return [get_topic(cls), *(topic for topic, old in OLD_TOPICS.items() if old is cls)]
