"""The outbox and the claim of work the database owns. Every row that waits for a worker
(an upload to read, a run to grade, an agent run) is its own outbox entry: it is written with its work in one
transaction, and a task is sent for it after commit. Nothing relies on that send:

* a row never sent (the broker was down, the process died after commit) or sent long ago
  and never claimed is sent again by the sweeper (``webapp.ops.sweeper``), with backoff;
* a worker claims a row with a token (a conditional update, so one claim wins), keeps a
  heartbeat while it works, and writes its result only while it still holds the claim;
* a claim whose heartbeat went silent for ``MLEBOARD_STALE_AFTER_S`` is taken back by the
  sweeper and the work is sent again, until ``MLEBOARD_MAX_ATTEMPTS`` claims have been
  spent; then the row fails with a reason a person can read.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
import uuid

from django.conf import settings
from django.db import close_old_connections, models, transaction
from django.db.models import F
from django.utils import timezone

from webapp.work.lifecycle import Kind, LifecycleFields, kind_for

log = logging.getLogger(__name__)


class Dispatched(LifecycleFields, models.Model):
    """The outbox and claim columns of a row a worker picks up."""

    # When a task was last sent for the row (None: never, send it) and how often.
    dispatched_at = models.DateTimeField(null=True, blank=True, db_index=True)
    dispatch_count = models.PositiveIntegerField(default=0)
    # The task holding the claim, when it took it and when it last said it is alive.
    claimed_by = models.CharField(max_length=64, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Claims spent on the row (a worker started on it); the sweeper's budget counts these.
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        abstract = True


def send(kind: Kind | str, pk: int) -> bool:
    """Send the task of ``kind`` (a kind or its name) for row ``pk``, found by the task's
    registered name, and, for a kind whose rows carry the outbox columns, record it on the
    row. False when the broker cannot take it: the row stays due and the sweeper sends it
    once the broker is back."""
    kind = kind_for(kind) if isinstance(kind, str) else kind
    try:
        registered(kind.task).apply_async((pk,), retry=False)
    except Exception as exc:  # kombu's, redis' and the socket's many ways of saying "down"
        log.warning("could not send %s(%s): %s; the sweeper will", kind.task, pk, exc)
        return False
    if kind.claims:
        kind.model.objects.filter(pk=pk).update(
            dispatched_at=timezone.now(), dispatch_count=F("dispatch_count") + 1
        )
    return True


def registered(name: str):
    """The task registered under ``name``. A process that is not a worker (the web, a
    command) has not imported the apps' tasks modules yet: Celery's loader imports them
    (the autodiscovered ``tasks`` of every app) at the first send."""
    from celery import current_app

    task = current_app.tasks.get(name)
    if task is None:
        current_app.loader.import_default_modules()
        task = current_app.tasks[name]
    return task


def send_on_commit(kind: Kind | str, pk: int) -> None:
    """``send`` once the current transaction has committed (at once outside one)."""
    transaction.on_commit(lambda: send(kind, pk))


def new_token() -> str:
    """A claim token for work started outside a task (a command, a test)."""
    return uuid.uuid4().hex


def heartbeat_interval() -> float:
    return max(0.5, settings.MLEBOARD_STALE_AFTER_S / 4)


@contextlib.contextmanager
def heartbeat(model, pk: int, token: str):
    """While the block runs, say every quarter of ``MLEBOARD_STALE_AFTER_S`` that
    ``token`` is alive on the row (from a thread with its own database connection)."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(heartbeat_interval()):
                try:
                    model.objects.filter(pk=pk, claimed_by=token).update(
                        heartbeat_at=timezone.now()
                    )
                except Exception:  # the database blinked; the next beat tries again
                    log.warning("heartbeat of %s %s failed", model.__name__, pk, exc_info=True)
                    close_old_connections()
        finally:
            close_old_connections()

    thread = threading.Thread(target=beat, name=f"heartbeat-{model.__name__}-{pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def stale_before() -> dt.datetime:
    """Claims whose last heartbeat is older than this are silent."""
    return timezone.now() - dt.timedelta(seconds=settings.MLEBOARD_STALE_AFTER_S)


def resend_due(dispatch_count: int) -> dt.timedelta:
    """How long after a send an unclaimed row is sent again: ``MLEBOARD_STALE_AFTER_S``,
    doubling with each send up to 32 times that (a long queue is not flooded)."""
    factor = 2 ** min(max(dispatch_count - 1, 0), 5)
    return dt.timedelta(seconds=settings.MLEBOARD_STALE_AFTER_S * factor)
