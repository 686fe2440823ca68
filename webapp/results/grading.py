"""Grading a stored run: claim it, grade its submission with the real grader, rank it on
the competition's current private leaderboard, store the report. Shared by uploads, the
demo and agent runs, so that every report on the site is made the same way."""

import datetime as dt
import functools
import logging
import math
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from benchmark.leaderboard import LeaderboardTable
from webapp.competitions.models import Competition, LeaderboardEntry, PrivateLeaderboard
from webapp.results.models import GradeReport, Run
from webapp.results.services import report_store

log = logging.getLogger(__name__)


def leaderboard_data(competition: Competition) -> LeaderboardTable | None:
    """The competition's current leaderboard as the pure ``benchmark`` object."""
    board: PrivateLeaderboard | None = competition.current_leaderboard
    if board is None:
        return None
    scores = _leaderboard_scores(board.pk, board.created_at)
    n = len(scores)
    return LeaderboardTable(
        scores=scores,
        team_ids=(None,) * n,
        team_names=(None,) * n,
        submission_dates=(None,) * n,
        source_format=board.source_format,
        lower_is_better=board.lower_is_better,
    )


@functools.lru_cache(maxsize=128)
def _leaderboard_scores(leaderboard_id: int, created_at) -> tuple[float, ...]:
    """A stored leaderboard's scores, best first. Versions are never edited (an import
    adds a version), so a worker reads each one once, not once per run it grades. The
    creation time is part of the key, so a database emptied and refilled (ids reused)
    never serves another leaderboard's scores."""
    return tuple(
        math.nan if score is None else score  # a row without a score still counts in N
        for score in LeaderboardEntry.objects.filter(leaderboard_id=leaderboard_id)
        .order_by("position")
        .values_list("score", flat=True)
    )


def run_claim(run_id: int, token: str = "") -> bool:
    """Move a queued run to running. True only for the one caller that won the claim, so
    a re-delivered task does nothing twice. A run left running by a task whose worker
    died may be taken back by a re-delivery of that same task (same ``token``)."""
    claimable = Q(status=Run.Status.QUEUED)
    if token:
        claimable |= Q(status=Run.Status.RUNNING, claimed_by=token)
    return (
        Run.objects.filter(claimable, pk=run_id).update(
            status=Run.Status.RUNNING, claimed_at=timezone.now(), claimed_by=token
        )
        == 1
    )


def run_grade(run_id: int, *, data_dir: Path | None = None, token: str = "") -> GradeReport | None:
    """Grade one queued run. Returns the stored report, or None when another task holds
    the run or it is already graded. Infrastructure errors (answers missing, database
    gone) propagate so the task can retry; a bad submission is a final, stored result."""
    from benchmark.grading import grade_submission_run

    if not run_claim(run_id, token):
        return None
    if settings.MLEBOARD_GRADING_FAULT_DELAY:
        # Fault injection for the tests that kill a worker in the middle of grading.
        time.sleep(settings.MLEBOARD_GRADING_FAULT_DELAY)
    run = Run.objects.select_related("competition").get(pk=run_id)
    Run.objects.filter(pk=run_id).update(attempts=run.attempts + 1)
    submission = Path(run.submission_path) if run.submission_path else None
    try:
        report = grade_submission_run(
            submission,
            run.competition.slug,
            Path(data_dir or settings.MLEBOARD_DATA_DIR),
            leaderboard_data(run.competition),
            seed=run.seed,
        )
    except Exception:
        # Hand the run back so a retry can claim it again.
        Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(status=Run.Status.QUEUED)
        raise
    with transaction.atomic():
        stored = report_store(run, report)
        Run.objects.filter(pk=run_id).update(status=Run.Status.GRADED, error=report.error or "")
    return stored


def run_fail(run_id: int, reason: str) -> None:
    """Mark a run failed for a reason outside the submission (time limit, lost worker)."""
    Run.objects.filter(pk=run_id).exclude(status=Run.Status.GRADED).update(
        status=Run.Status.FAILED, error=reason
    )


def runs_reap_stuck(older_than_seconds: int) -> list[int]:
    """Fail runs claimed longer ago than any grading may take: their worker is gone and
    no re-delivery came. Returns the ids of the runs failed."""
    cutoff = timezone.now() - dt.timedelta(seconds=older_than_seconds)
    stuck = list(
        Run.objects.filter(status=Run.Status.RUNNING, claimed_at__lt=cutoff).values_list(
            "pk", flat=True
        )
    )
    if stuck:
        Run.objects.filter(pk__in=stuck, status=Run.Status.RUNNING).update(
            status=Run.Status.FAILED,
            error=f"grading did not finish within {older_than_seconds} s (its worker was lost); re-grade to try again",
        )
    return stuck
