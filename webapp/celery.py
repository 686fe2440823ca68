"""The Celery app. Queues: ``grading`` (short: one task per run to grade) and ``runs``
(long: one agent container per (competition, seed)), so a day-long agent run never
blocks grading."""

import os
import resource

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

# Tasks are sent by webapp.work (after commit, recorded on the row, re-sent by the sweeper).
app = Celery("mleboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def cap_memory(**kwargs) -> None:
    """Each worker process may use at most MLEBOARD_GRADING_MEMORY_BYTES of data memory: a
    submission that would take more fails its grading with "ran out of memory" instead of
    taking the host down."""
    from django.conf import settings

    cap = settings.MLEBOARD_GRADING_MEMORY_BYTES
    if cap:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        limit = cap if hard == resource.RLIM_INFINITY else min(cap, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
