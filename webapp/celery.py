"""The Celery app. Queues: ``grading`` (short: one task per run to grade) and ``runs``
(long: one agent container per (competition, seed)), so a day-long agent run never
blocks grading."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

# Tasks are sent by webapp.work (after commit, recorded on the row, re-sent by the sweeper).
app = Celery("mleboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
