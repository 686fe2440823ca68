"""An upload's progress as its page and the API show it, and whether it waits for a
worker none answers."""

from django.conf import settings
from django.db.models import Count, Q

from webapp.liveness.services import GRADING_QUEUE, no_worker_note
from webapp.results.models import GradeReport, Run, Upload
from webapp.work import stale_before


def waiting_for_worker(upload: Upload) -> bool:
    """Nothing has consumed the upload's work for ``MLEBOARD_STALE_AFTER_S``: it is queued
    and not picked up (the broker or every worker is down), or its runs are."""
    since = stale_before()
    if upload.status == Upload.Status.QUEUED:
        # Waiting since it was made, or since a claim that was handed back.
        return (upload.claimed_at or upload.created_at) < since
    if upload.status != Upload.Status.PROCESSING or not upload.experiment_id:
        return False
    runs = Run.objects.filter(experiment_id=upload.experiment_id)
    return (
        runs.filter(status=Run.Status.QUEUED, updated_at__lt=since).exists()
        and not runs.filter(status=Run.Status.RUNNING).exists()
        and not runs.filter(updated_at__gte=since).exclude(status=Run.Status.QUEUED).exists()
    )


def grading_worker_note(upload: Upload) -> str:
    """ "no grading worker has answered for N s" while the upload, or one of its runs,
    waits for one and none answers (``webapp.liveness``); "" otherwise."""
    waits = upload.status == Upload.Status.QUEUED or (
        upload.status == Upload.Status.PROCESSING
        and upload.experiment_id
        and Run.objects.filter(
            experiment_id=upload.experiment_id, status=Run.Status.QUEUED
        ).exists()
    )
    return no_worker_note(GRADING_QUEUE) if waits else ""


def upload_progress(upload: Upload) -> dict:
    """What the upload page and ``GET /api/uploads/<id>/`` show. ``failures`` are the runs
    that failed to grade (``runs_failed`` of them, each with its reason);
    ``invalid_submissions`` the runs graded with an invalid or missing submission
    (``runs_invalid``: they count, as 0, in the figures), each saying whether a submission
    was made (``submission_made``)."""
    runs_total = runs_graded = runs_failed = runs_invalid = 0
    failures: list[dict] = []
    invalid: list[dict] = []
    if upload.experiment_id:
        runs = Run.objects.filter(experiment_id=upload.experiment_id)
        with_error = ~Q(error="")
        counts = runs.aggregate(
            total=Count("pk"),
            graded=Count("pk", filter=Q(status=Run.Status.GRADED)),
            failed=Count("pk", filter=Q(status=Run.Status.FAILED)),
            invalid=Count("pk", filter=Q(status=Run.Status.GRADED) & with_error),
        )
        runs_total, runs_graded = counts["total"], counts["graded"]
        runs_failed, runs_invalid = counts["failed"], counts["invalid"]

        def listed(status):
            return [
                {
                    "competition_id": r.competition.slug,
                    "seed": r.seed,
                    "reason": r.error,
                    "pk": r.pk,
                }
                for r in runs.filter(status=status)
                .filter(with_error)
                .select_related("competition")
                .order_by("competition__slug", "seed")[:200]
            ]

        failures = listed(Run.Status.FAILED)
        invalid = listed(Run.Status.GRADED)
        # A run without a submission is graded as invalid (it counts as 0) but is not an
        # invalid submission: the page lists the two apart.
        made = dict(
            GradeReport.objects.filter(
                run_id__in=[r["pk"] for r in invalid], is_current=True
            ).values_list("run_id", "submission_exists")
        )
        for row in invalid:
            row["submission_made"] = made.get(row["pk"], True)
        for row in (*failures, *invalid):
            del row["pk"]
    no_worker = grading_worker_note(upload)
    waiting = bool(no_worker) or waiting_for_worker(upload)
    if no_worker:
        message = f"{no_worker}; this upload will be processed when one is back"
    elif waiting:
        message = (
            "waiting for a worker: nothing has picked this work up for "
            f"{settings.MLEBOARD_STALE_AFTER_S} s; it will be processed when a worker is back"
        )
    else:
        message = ""
    return {
        "id": upload.pk,
        "status": upload.status,
        "status_label": upload.status_label,
        "is_final": upload.is_final,
        "waiting_for_worker": waiting,
        "message": message,
        "no_worker": no_worker,
        "kind": upload.kind,
        "runs_total": runs_total,
        "runs_graded": runs_graded,
        "runs_failed": runs_failed,
        "failures": failures,
        "runs_invalid": runs_invalid,
        "invalid_submissions": invalid,
        "error": upload.error or None,
        "warnings": upload.warnings,
        "experiment": upload.experiment_id,
        "sha256": upload.sha256,
        "size": upload.size,
        "original_name": upload.original_name,
    }
