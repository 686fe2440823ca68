"""Grading a stored run: claim it, grade its submission with the real grader, rank it on
the competition's current private leaderboard, store the report. Shared by uploads, the
demo and agent runs, so that every report on the site is made the same way."""

import functools
import logging
import math
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction

from benchmark.leaderboard import LeaderboardTable
from webapp import work
from webapp.competitions.models import Competition, LeaderboardEntry, PrivateLeaderboard
from webapp.core import changes
from webapp.results import extensions
from webapp.results.models import GradeReport, Run
from webapp.results.services import report_store
from webapp.work import heartbeat, new_token

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


def run_grade(run_id: int, *, token: str = "", data_dir: Path | None = None) -> GradeReport | None:
    """Grade one queued run under the claim ``token``. Returns the stored report, or None
    when another task holds the run, it is already graded, or the claim was taken back
    while grading (then the sweeper has sent the run again and that attempt stores it).
    Errors propagate: the task decides between a retry and a failure."""
    from benchmark.grading import grade_submission_run

    token = token or new_token()
    if not work.claim(work.kind_for("grading"), run_id, token, reclaim_own=True):
        return None
    with heartbeat(Run, run_id, token):
        if settings.MLEBOARD_GRADING_FAULT_DELAY:
            # Fault injection for the tests and the drill that kill workers mid-grading.
            time.sleep(settings.MLEBOARD_GRADING_FAULT_DELAY)
        run = Run.objects.select_related("competition").get(pk=run_id)
        submission = Path(run.submission_path) if run.submission_path else None
        report = grade_submission_run(
            submission,
            run.competition.slug,
            Path(data_dir or settings.MLEBOARD_DATA_DIR),
            leaderboard_data(run.competition),
            seed=run.seed,
            max_bytes=settings.MLEBOARD_MAX_SUBMISSION_BYTES,
        )
        # What is graded with its final submission, the same way (an upload's snapshots).
        along = extensions.grade_along(run)
    with transaction.atomic():
        if not work.finish(work.kind_for("grading"), run_id, token=token, error=report.error or ""):
            return None
        extensions.store_along(along)
        # The report shows on pages before its figures are refreshed.
        changes.experiments_changed([run.experiment_id])
        return report_store(run, report)


def run_fail(run_id: int, reason: str, token: str = "") -> bool:
    """Fail a run for a reason outside the submission (time limit, lost worker, a bug).
    With ``token``, only while that claim holds it. Never touches a graded run (the table
    has no move from graded to failed)."""
    return work.fail(work.kind_for("grading"), run_id, reason, token=token or None)


def run_ended(run_ids: list[int], status: str) -> None:
    """The end hook of grading (registered by the results app): the upload is finished
    when nothing is left to grade and the experiment's figures are recomputed."""
    from webapp.results.grading.aggregates import figures_due
    from webapp.results.uploads.services import upload_finish_if_done

    experiments = set(Run.objects.filter(pk__in=run_ids).values_list("experiment_id", flat=True))
    # Asked once this end is committed: two workers ending an upload's last two runs at
    # once each see the other's run still grading inside their own transactions, and
    # neither would finish the upload. After the commits, the later one sees both.
    for experiment_id in experiments:
        transaction.on_commit(functools.partial(upload_finish_if_done, experiment_id))
    figures_due(sorted(experiments))
