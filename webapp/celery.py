"""The Celery app. Queues: ``grading`` (short: one task per run to grade) and ``runs``
(long: one agent container per (competition, seed)), so a day-long agent run never
blocks grading."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

# DjangoTask gives tasks delay_on_commit, which every dispatch uses: a task is sent only
# once the transaction that wrote the rows it reads has committed.
app = Celery("mleboard", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
