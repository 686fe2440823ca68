"""The run queues, by resource class: ``runs.cpu`` and ``runs.gpu`` (a run asking for
GPUs). A run host's worker consumes the classes it can serve, as many at once as it has
run slots, so delivery places runs without bouncing them. Runs whose worker died are ended
by the sweeper (``webapp.ops.sweeper``) when their heartbeat stops, or handed over when their
host stops beating (``webapp.runs.hosts``)."""

import logging

from celery import Task, shared_task
from django.conf import settings

from webapp.runs.services.execution import agent_run_execute
from webapp.work import new_token

log = logging.getLogger(__name__)


def run_queue(agent_run_id) -> str:
    """The queue of an agent run's resource class: ``runs.gpu`` when it asks for GPUs."""
    from webapp.runs.models import AgentRun
    from webapp.runs.queues import queue_for

    gpus = AgentRun.objects.filter(pk=agent_run_id).values_list("launch__gpus", flat=True).first()
    return queue_for(gpus or 0)


class AgentRunTask(Task):
    def apply_async(self, args=None, kwargs=None, **options):
        if args and "queue" not in options and not options.get("routing_key"):
            options["queue"] = run_queue(args[0])
        return super().apply_async(args, kwargs, **options)


@shared_task(
    bind=True,
    base=AgentRunTask,
    name="webapp.runs.tasks.execute_agent_run_task",
    acks_late=True,
    reject_on_worker_lost=True,
)
def execute_agent_run_task(self, agent_run_id: int) -> None:
    agent_run_execute(agent_run_id, token=self.request.id or new_token())


@shared_task(name="webapp.runs.tasks.reap_containers_task")
def reap_containers_task() -> int:
    """The second line behind each run container's own watchdog, on the host whose runs
    worker takes it: remove run containers past their deadline or left stopped."""
    if settings.MLEBOARD_RUN_BACKEND != "docker":
        return 0
    from runner.reaper import reap_expired

    try:
        removed = reap_expired()
    except Exception:  # no engine reachable from this worker: nothing to reap here
        log.warning("could not reap run containers", exc_info=True)
        return 0
    for item in removed:
        log.info("reaped run container %s", item)
    return len(removed)
