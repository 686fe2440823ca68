"""Who is alive: each Celery worker and beat process writes its own heartbeat row
(``webapp.liveness.services``), so the site can say "no grading worker has answered for
N s" without asking the broker (remote control is not reliable on every transport)."""

from django.db import models


class ProcessBeat(models.Model):
    class Kind(models.TextChoices):
        WORKER = "worker", "Worker"
        BEAT = "beat", "Beat"

    # A worker's Celery node name (``grading@host``), or ``beat@host``: one row per
    # process name, taken over by the next start of that name.
    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    hostname = models.CharField(max_length=200)
    pid = models.PositiveIntegerField()
    # The queues a worker consumes (empty for beat).
    queues = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField(db_index=True)
    # Set by a clean stop; a process that died keeps its last beat and no stop.
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["kind", "name"]

    def __str__(self) -> str:
        return self.name
