"""Familiarity measurements, on the ``grading`` queue: each fetches its row by id and
calls the service. Idempotent: a row is claimed once, so a repeated task does nothing;
one lost with its worker is taken back and sent again by the sweeper."""

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from webapp.competitions.familiarity import familiarity_fail, familiarity_measure
from webapp.work import new_token


@shared_task(
    bind=True,
    name="webapp.competitions.tasks.measure_familiarity_task",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.GRADING_SOFT_TIME_LIMIT,
    time_limit=settings.GRADING_TIME_LIMIT,
)
def measure_familiarity_task(self, familiarity_id: int) -> None:
    token = self.request.id or new_token()
    try:
        familiarity_measure(familiarity_id, token=token)
    except SoftTimeLimitExceeded:
        familiarity_fail(
            familiarity_id,
            token,
            f"measuring took longer than {settings.GRADING_SOFT_TIME_LIMIT} s "
            "(MLEBOARD_GRADING_SOFT_TIME_LIMIT): fewer or shorter texts, or a faster endpoint",
        )
