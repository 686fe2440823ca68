"""Grading a run: the grader's score, placed on the private leaderboard, as a report.

``grade_submission_run`` is what MLE-bench's ``grade_csv`` does (score -> ``rank_score`` ->
``CompetitionReport``), with the direction taken from the catalogue and mleboard's extras
(seed, the reason a submission is invalid, the grader version, the leaderboard percentile).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from benchmark.leaderboard import (
    LeaderboardError,
    LeaderboardTable,
    find_leaderboard,
    read_leaderboard,
)
from benchmark.medals import leaderboard_percentile, rank_score
from benchmark.reports import CompetitionReport

# The reason a run without a submission is graded invalid with (it counts as no medal).
NO_SUBMISSION = "No submission was made."


def grade_submission_run(
    submission_path: Path | None,
    competition_id: str,
    data_dir: Path,
    leaderboard: LeaderboardTable | None,
    *,
    seed: int | None = None,
    max_bytes: int | None = None,
) -> CompetitionReport:
    """Grade one run's submission and place it on ``leaderboard``.

    ``submission_path`` None or absent -> ``submission_exists`` False. ``leaderboard`` None ->
    thresholds None and no medals. Raises ``graders.UnknownCompetition`` for an id without a
    grader, ``benchmark.catalogue.UnknownCompetition`` for one missing from the catalogue, and
    ``graders.AnswersMissing`` when the competition's answers are not prepared (an
    infrastructure problem, never blamed on the submission). A submission larger than
    ``max_bytes`` (its apparent size, links not followed) is invalid and never read.
    """
    from benchmark.catalogue import get_competition
    from graders import GradeResult, grade_submission, grader_for
    from graders.results import ErrorClass

    facts = get_competition(competition_id)
    if submission_path is None:
        result = GradeResult(
            None,
            False,
            False,
            NO_SUBMISSION,
            grader_for(competition_id).grader_version,
            ErrorClass.MISSING,
        )
    elif max_bytes is not None and (size := _size(submission_path)) > max_bytes:
        result = GradeResult(
            score=None,
            valid_submission=False,
            submission_exists=True,
            error=f"the submission is {size:,} bytes, above the grading limit of "
            f"{max_bytes:,} bytes: it was not read",
            grader_version=grader_for(competition_id).grader_version,
            error_class=ErrorClass.OTHER,
        )
    else:
        result = grade_submission(Path(submission_path), competition_id, Path(data_dir))
    thresholds = leaderboard.thresholds() if leaderboard is not None else None
    rank = rank_score(result.score, thresholds)
    percentile = (
        leaderboard_percentile(result.score, leaderboard.scores, facts.lower_is_better)
        if leaderboard is not None
        else None
    )
    return CompetitionReport(
        competition_id=competition_id,
        score=result.score,
        gold_threshold=rank["gold_threshold"],
        silver_threshold=rank["silver_threshold"],
        bronze_threshold=rank["bronze_threshold"],
        median_threshold=rank["median_threshold"],
        any_medal=rank["any_medal"],
        gold_medal=rank["gold_medal"],
        silver_medal=rank["silver_medal"],
        bronze_medal=rank["bronze_medal"],
        above_median=rank["above_median"],
        submission_exists=result.submission_exists,
        valid_submission=result.valid_submission,
        is_lower_better=facts.lower_is_better,
        created_at=datetime.now(UTC),
        submission_path=str(submission_path) if submission_path is not None else "",
        seed=seed,
        error=result.error,
        grader_version=result.grader_version,
        percentile=percentile,
        error_class=None if result.error_class is None else str(result.error_class),
    )


def _size(path) -> int:
    try:
        return Path(path).lstat().st_size
    except OSError:
        return 0


def load_private_leaderboard(
    competition_id: str,
    *,
    data_dir: Path | None = None,
    mlebench_dir: Path | None = None,
) -> tuple[LeaderboardTable | None, str | None]:
    """The competition's private leaderboard, or None with a note saying why there is none.

    Looks in ``data_dir/<id>/leaderboard.csv`` then in an MLE-bench checkout; the direction
    is the catalogue's. The note (e.g. "run `git lfs pull`") is meant for stderr.
    """
    from benchmark.catalogue import get_competition

    path = find_leaderboard(competition_id, data_dir=data_dir, mlebench_dir=mlebench_dir)
    if path is None:
        return None, (
            f"no private leaderboard found for {competition_id}: medal thresholds are null "
            "and no medals are given (pass --mlebench-dir, or put leaderboard.csv in "
            f"<data-dir>/{competition_id}/)"
        )
    lower_is_better = get_competition(competition_id).lower_is_better
    try:
        return read_leaderboard(path, lower_is_better=lower_is_better), None
    except LeaderboardError as error:
        return None, f"{error}; medal thresholds are null for {competition_id}"
