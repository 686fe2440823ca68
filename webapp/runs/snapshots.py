"""Snapshots of a run's submission, saved at elapsed times during the run, graded like its
final submission: the data of Any Medal % against hours. An agent run's snapshots are
taken by the harness and graded by the runs worker when the run ends; an upload's are
read from its run folders (``benchmark.upload_layout``) and graded with the run's final
submission by the grading task. One function grades both."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from webapp.runs.models import SubmissionSnapshot

SNAPSHOT_FIELDS = ("score", "valid_submission", "above_median", "any_medal", "error")


def snapshot_grades(competition, seed: int, paths: list[Path]) -> list[dict]:
    """The grade of each snapshot (``SNAPSHOT_FIELDS``), in order, as the final
    submission is graded: the real grader, ranked on the competition's leaderboard."""
    from benchmark.grading import grade_submission_run
    from webapp.results.grading.services import leaderboard_data

    if not paths:
        return []
    board = leaderboard_data(competition)
    out = []
    for path in paths:
        report = grade_submission_run(
            Path(path),
            competition.slug,
            Path(settings.MLEBOARD_DATA_DIR),
            board,
            seed=seed,
            max_bytes=settings.MLEBOARD_MAX_SUBMISSION_BYTES,
        )
        out.append(
            {
                "score": report.score,
                "valid_submission": report.valid_submission,
                "above_median": report.above_median,
                "any_medal": report.any_medal,
                "error": report.error or "",
            }
        )
    return out


def uploaded_snapshots_grades(run) -> list[tuple[int, dict]]:
    """(snapshot id, grade) for the snapshots an upload carried for ``run`` (a
    ``results.Run``); graded again at each grading of the run, as its report is."""
    snapshots = list(
        SubmissionSnapshot.objects.filter(run=run, agent_run__isnull=True).order_by("elapsed_s")
    )
    grades = snapshot_grades(run.competition, run.seed, [Path(s.path) for s in snapshots])
    return [(s.pk, g) for s, g in zip(snapshots, grades, strict=True)]


def snapshots_store(graded: list[tuple[int, dict]]) -> None:
    for pk, grade in graded:
        SubmissionSnapshot.objects.filter(pk=pk).update(**grade)


def uploaded_snapshots_create(experiment, runs, created) -> None:
    """The snapshots an upload's run folders carry, to be graded with their runs
    (registered with ``webapp.results.extensions``)."""
    from webapp.results.models import Run

    if not any(run.snapshots for run in runs):
        return
    if any(r.pk is None for r in created):  # a backend that does not return ids
        ids = dict(
            ((slug, seed), pk)
            for pk, slug, seed in Run.objects.filter(experiment=experiment).values_list(
                "pk", "competition__slug", "seed"
            )
        )
    else:
        ids = {(r.competition.slug, r.seed): r.pk for r in created}
    SubmissionSnapshot.objects.bulk_create(
        SubmissionSnapshot(
            run_id=ids[(run.competition_id, run.seed)], elapsed_s=elapsed, path=str(path)
        )
        for run in runs
        for elapsed, path in run.snapshots
    )
