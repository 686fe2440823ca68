"""The ``runs`` queue: one task per (competition, seed) agent run. Runs whose worker died
are ended by the sweeper (``webapp.sweeper``) when their heartbeat stops."""

import logging

from celery import shared_task
from django.conf import settings

from webapp.runs.services import RetryLater, agent_run_execute
from webapp.work import new_token

log = logging.getLogger(__name__)


@shared_task(
    bind=True,
    name="webapp.runs.tasks.execute_agent_run_task",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def execute_agent_run_task(self, agent_run_id: int) -> None:
    try:
        agent_run_execute(agent_run_id, token=self.request.id or new_token())
    except RetryLater as exc:
        # The host is full: try again shortly (no limit: the run waits its turn).
        raise self.retry(exc=exc, countdown=settings.MLEBOARD_RUN_RETRY_S) from None
