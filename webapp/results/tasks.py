"""Celery tasks: each fetches by id and calls a service, nothing more."""

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from webapp.results.aggregates import experiment_aggregate_refresh
from webapp.results.grading import run_grade

log = logging.getLogger(__name__)


@shared_task(
    name="webapp.results.tasks.grade_run",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=600,
    time_limit=660,
    autoretry_for=(OSError, ConnectionError),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=5,
)
def grade_run(run_id: int) -> None:
    try:
        report = run_grade(run_id)
    except SoftTimeLimitExceeded:
        from webapp.results.grading import run_fail

        run_fail(run_id, "grading took longer than the time limit")
        return
    if report is not None:
        refresh_experiment_aggregate.delay(report.experiment_id)


@shared_task(name="webapp.results.tasks.refresh_experiment_aggregate", acks_late=True)
def refresh_experiment_aggregate(experiment_id: int) -> None:
    experiment_aggregate_refresh(experiment_id)
