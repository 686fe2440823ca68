"""Heartbeats the processes write themselves, and what pages say from them.

A Celery worker (``worker_ready``) and beat (``beat_init``) start a ``ProcessHeartbeat``
(``webapp/project/celery.py``): a thread that writes the process's row at once, then every quarter
of ``MLEBOARD_STALE_AFTER_S``, and marks it stopped on a clean stop. A runs worker already
beats for its run host (``webapp.runs.hosts``), which the runs app registers here as a
source (``register_source``): no second thread in the process whose stop hands runs over. A queue has a live
worker while one consuming it has beaten within ``MLEBOARD_STALE_AFTER_S``; otherwise the
pages of work waiting on it say for how long no worker has answered.

This module imports no other app of ours: every app's pages may ask it.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import os
import socket
import threading
from collections.abc import Callable, Iterable

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from webapp.liveness.models import ProcessBeat
from webapp.work import heartbeat_interval, stale_before

log = logging.getLogger(__name__)

# The queue of short work (reading uploads, grading, checks, figures): tasks' routes say it.
GRADING_QUEUE = settings.CELERY_TASK_ROUTES["webapp.results.tasks.*"]["queue"]

# A process silent this long is forgotten when another one starts (its row only says
# "a worker of that name existed once").
FORGET_AFTER = dt.timedelta(days=7)


def beat_now(name: str) -> bool:
    """One heartbeat of process ``name``. False when its row is gone."""
    return bool(
        ProcessBeat.objects.filter(name=name).update(beat_at=timezone.now(), stopped_at=None)
    )


def mark_stopped(name: str) -> None:
    """A clean stop of process ``name``: the status page tells it from a crash."""
    try:
        ProcessBeat.objects.filter(name=name).update(stopped_at=timezone.now())
    except Exception:
        log.warning("could not mark %s stopped", name, exc_info=True)


class ProcessHeartbeat:
    """Keeps the row of this process (``name``) beating from a thread with its own
    database connection."""

    def __init__(self, name: str, kind: str, queues: list[str] | tuple[str, ...] = ()):
        self.name, self.kind, self.queues = name, kind, sorted(queues)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"heartbeat-{name}", daemon=True)

    def register(self) -> ProcessBeat:
        now = timezone.now()
        ProcessBeat.objects.filter(beat_at__lt=now - FORGET_AFTER).delete()
        row, _ = ProcessBeat.objects.update_or_create(
            name=self.name,
            defaults={
                "kind": self.kind,
                "hostname": socket.gethostname(),
                "pid": os.getpid(),
                "queues": self.queues,
                "started_at": now,
                "beat_at": now,
                "stopped_at": None,
            },
        )
        return row

    def start(self) -> ProcessHeartbeat:
        try:
            self.register()
        except Exception:  # the database is away: the thread registers once it is back
            log.warning("could not register %s; retrying from its heartbeat", self.name)
            close_old_connections()
        self._thread.start()
        return self

    def _loop(self) -> None:
        try:
            while not self._stop.wait(heartbeat_interval()):
                try:
                    if not beat_now(self.name):
                        self.register()
                except Exception:  # the database blinked; the next beat tries again
                    log.warning("heartbeat of %s failed", self.name, exc_info=True)
                    close_old_connections()
            mark_stopped(self.name)
        finally:
            close_old_connections()

    def stop(self, wait_s: float = 2.0) -> None:
        """Stop beating and mark the row stopped (from the thread, so that a stop asked
        from a signal handler does no database work there); waits at most ``wait_s``."""
        self._stop.set()
        self._thread.join(timeout=wait_s)


def is_alive(row: ProcessBeat, since: dt.datetime | None = None) -> bool:
    since = since or stale_before()
    return row.stopped_at is None and row.beat_at >= since


# Other heartbeats that say a queue's worker is alive, registered by the apps that keep
# them (the run hosts, webapp.runs.apps): each gives, for a queue, the (last beat, alive)
# of every process consuming it.
Beats = Callable[[str, dt.datetime], Iterable[tuple[dt.datetime, bool]]]
SOURCES: list[Beats] = []


def register_source(source: Beats) -> None:
    if source not in SOURCES:
        SOURCES.append(source)


def _own_beats(queue: str, since: dt.datetime) -> Iterable[tuple[dt.datetime, bool]]:
    for row in ProcessBeat.objects.filter(kind=ProcessBeat.Kind.WORKER):
        if queue in row.queues:
            yield row.beat_at, is_alive(row, since)


def worker_silence(queue: str, now: dt.datetime | None = None) -> float | None:
    """None while a worker consuming ``queue`` has answered within
    ``MLEBOARD_STALE_AFTER_S`` (or tasks run inline, ``CELERY_TASK_ALWAYS_EAGER``);
    otherwise the seconds since one last answered (``math.inf``: none ever has)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    now = now or timezone.now()
    since = now - dt.timedelta(seconds=settings.MLEBOARD_STALE_AFTER_S)
    last = None
    for source in (_own_beats, *SOURCES):
        for beat_at, alive in source(queue, since):
            if alive:
                return None
            if beat_at is not None:
                last = beat_at if last is None else max(last, beat_at)
    return math.inf if last is None else max(0.0, (now - last).total_seconds())


def worker_label(queue: str) -> str:
    """What a worker of ``queue`` is called on pages."""
    if queue.startswith("runs."):
        return f"run worker ({queue})"
    return f"{queue} worker"


def no_worker_note(queue: str, now: dt.datetime | None = None) -> str:
    """ "no grading worker has answered for N s" when that is so; "" while one answers."""
    silence = worker_silence(queue, now)
    if silence is None:
        return ""
    if math.isinf(silence):
        return f"no {worker_label(queue)} has answered yet"
    return f"no {worker_label(queue)} has answered for {int(silence)} s"
