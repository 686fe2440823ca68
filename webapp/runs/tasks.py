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


@shared_task(name="webapp.runs.tasks.reap_containers_task")
def reap_containers_task() -> int:
    """The second line behind each run container's own watchdog, on the host whose runs
    worker takes it: remove run containers past their deadline or left stopped."""
    if settings.MLEBOARD_RUN_BACKEND != "docker":
        return 0
    from runner.docker_backend import reap_expired

    try:
        removed = reap_expired()
    except Exception:  # no engine reachable from this worker: nothing to reap here
        log.warning("could not reap run containers", exc_info=True)
        return 0
    for item in removed:
        log.info("reaped run container %s", item)
    return len(removed)
