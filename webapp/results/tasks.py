"""Celery tasks: each fetches by id and calls a service, nothing more. They are
idempotent (a claim by conditional update) before acks_late is relied on."""

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError

from graders import GraderError
from webapp.results.aggregates import experiment_aggregate_refresh
from webapp.results.grading import run_fail, run_grade, runs_reap_stuck
from webapp.results.models import Run
from webapp.results.uploads import upload_fail, upload_finish_if_done, upload_process

log = logging.getLogger(__name__)

# Errors of the infrastructure (database, file system, a missing answers file) are
# retried with backoff; a bad submission is a final result and never raises.
INFRASTRUCTURE_ERRORS = (
    OperationalError,
    InterfaceError,
    DatabaseError,
    OSError,
    ConnectionError,
    GraderError,
)


@shared_task(
    bind=True,
    name="webapp.results.tasks.grade_run_task",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.GRADING_SOFT_TIME_LIMIT,
    time_limit=settings.GRADING_TIME_LIMIT,
    autoretry_for=INFRASTRUCTURE_ERRORS,
    retry_backoff=5,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=5,
)
def grade_run_task(self, run_id: int) -> None:
    try:
        report = run_grade(run_id, token=self.request.id or "")
    except SoftTimeLimitExceeded:
        run_fail(run_id, f"grading took longer than {settings.GRADING_SOFT_TIME_LIMIT} s")
        report = None
    except INFRASTRUCTURE_ERRORS:
        if self.request.retries >= self.max_retries:
            run_fail(
                run_id,
                "grading failed repeatedly for an infrastructure reason; re-grade to try again",
            )
        raise
    experiment_id = (
        report.experiment_id
        if report
        else Run.objects.filter(pk=run_id).values_list("experiment_id", flat=True).first()
    )
    # Figures are computed once the experiment's last run is graded, not after each run.
    if experiment_id is not None and upload_finish_if_done(experiment_id):
        refresh_experiment_aggregate_task.delay_on_commit(experiment_id)


@shared_task(name="webapp.results.tasks.refresh_experiment_aggregate_task", acks_late=True)
def refresh_experiment_aggregate_task(experiment_id: int) -> None:
    experiment_aggregate_refresh(experiment_id)


@shared_task(
    bind=True,
    name="webapp.results.tasks.process_upload_task",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=1800,
    time_limit=1900,
    autoretry_for=INFRASTRUCTURE_ERRORS,
    retry_backoff=5,
    max_retries=3,
)
def process_upload_task(self, upload_id: int) -> None:
    try:
        upload_process(upload_id)
    except INFRASTRUCTURE_ERRORS as exc:
        if self.request.retries >= self.max_retries:
            upload_fail(
                upload_id,
                f"the upload could not be processed ({type(exc).__name__}: {exc}); it is stored, try again later",
            )
        raise


@shared_task(name="webapp.results.tasks.reap_stuck_runs_task")
def reap_stuck_runs_task() -> list[int]:
    reaped = runs_reap_stuck(settings.GRADING_STUCK_AFTER)
    for experiment_id in set(
        Run.objects.filter(pk__in=reaped).values_list("experiment_id", flat=True)
    ):
        upload_finish_if_done(experiment_id)
    return reaped
