"""The integrity check of one graded run, on the ``grading`` queue after its grading.
A check is idempotent (it recomputes from the stored files), so a duplicate is harmless;
one lost with its worker stays due and the sweeper sends it again."""

import logging

from celery import shared_task
from django.conf import settings

from webapp.integrity.services import run_check

log = logging.getLogger(__name__)


@shared_task(
    name="webapp.integrity.tasks.check_run_task",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.GRADING_SOFT_TIME_LIMIT,
    time_limit=settings.GRADING_TIME_LIMIT,
)
def check_run_task(run_id: int) -> None:
    run_check(run_id)
