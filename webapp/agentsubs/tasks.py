"""The build of a submitted agent, on a run host (``runs.cpu``): fetch by id, call the
service."""

from celery import shared_task

from webapp.agentsubs.services import submission_build
from webapp.work import new_token


@shared_task(
    bind=True,
    name="webapp.agentsubs.tasks.build_agent_task",
    acks_late=True,
    reject_on_worker_lost=True,
)
def build_agent_task(self, submission_id: int) -> None:
    submission_build(submission_id, token=self.request.id or new_token())
