"""The ``runs`` queue: one task per (competition, seed) agent run."""

from celery import shared_task
from django.conf import settings

from webapp.runs.services import RetryLater, agent_run_execute, agent_runs_reap


@shared_task(
    bind=True,
    name="webapp.runs.tasks.execute_agent_run_task",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def execute_agent_run_task(self, agent_run_id: int) -> None:
    try:
        agent_run_execute(agent_run_id, token=self.request.id or "")
    except RetryLater as exc:
        # The host is full: try again shortly (no limit: the run waits its turn).
        raise self.retry(exc=exc, countdown=settings.MLEBOARD_RUN_RETRY_S) from None


@shared_task(name="webapp.runs.tasks.reap_agent_runs_task")
def reap_agent_runs_task() -> list[int]:
    return agent_runs_reap(settings.MLEBOARD_RUN_HEARTBEAT_STALE_S)
