"""The Celery app. Queues: ``grading`` (short: one task per run to grade) and the run
queues ``runs.cpu`` and ``runs.gpu`` (long: one agent container per (competition, seed)),
so a day-long agent run never blocks grading. A worker consuming a run queue registers its
host and keeps it beating (``webapp.runs.hosts``)."""

import os
import resource

from celery import Celery
from celery.signals import (
    beat_init,
    task_received,
    worker_init,
    worker_process_init,
    worker_ready,
    worker_shutdown,
    worker_shutting_down,
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.project.settings")

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


def _queues(consumer) -> list[str]:
    try:
        return sorted(consumer.app.amqp.queues.consume_from)
    except AttributeError:
        return []


def _run_queues(consumer) -> list[str]:
    return [n for n in _queues(consumer) if n.startswith("runs.")]


# This process's own heartbeat (webapp.liveness): a grading worker's or beat's.
_heartbeat = None


def _start_heartbeat(name: str, kind: str, queues: list[str]) -> None:
    global _heartbeat
    from webapp.liveness.services import ProcessHeartbeat

    if _heartbeat is not None:
        _heartbeat.stop()
    _heartbeat = ProcessHeartbeat(name, kind, queues).start()


def _worker_name(consumer) -> str:
    import socket

    return getattr(consumer, "hostname", None) or f"worker@{socket.gethostname()}"


# This worker's consumer (its pool and queues), known once it is ready.
_consumer = None


@worker_ready.connect
def worker_heartbeat(sender=None, **kwargs) -> None:
    """Every worker says it is alive, with the queues it consumes, so pages of waiting work
    can say when none has answered (the status page lists them). A runs worker says it
    through its run host's heartbeat (``register_run_host``, ``webapp.runs.hosts``): one
    heartbeat thread, not two, in the process whose stop hands agent runs over."""
    global _consumer
    _consumer = sender
    if _run_queues(sender):
        return
    _start_heartbeat(_worker_name(sender), "worker", _queues(sender))


@beat_init.connect
def beat_heartbeat(sender=None, **kwargs) -> None:
    """Beat says it is alive too (a beat that died stops the sweeper)."""
    import atexit
    import socket

    _start_heartbeat(f"beat@{socket.gethostname()}", "beat", [])
    atexit.register(_stop_heartbeat, 2.0)


def _stop_heartbeat(wait_s: float = 0.0) -> None:
    """Stop this process's heartbeat; its thread marks the row stopped as it ends. From a
    worker's stop (a signal handler) nothing is waited for: the stop is not held up."""
    global _heartbeat, _stopped_heartbeat
    if _heartbeat is not None:
        _heartbeat.stop(wait_s)
        _heartbeat, _stopped_heartbeat = None, _heartbeat


# The heartbeat stopped last: its thread marks its row stopped before the process ends.
_stopped_heartbeat = None


@worker_init.connect
def new_boot(**kwargs) -> None:
    """This start of the worker is a new boot of its host, known to its pool's processes
    (forked later) before the host registers it: their claims are this boot's."""
    import uuid

    os.environ["MLEBOARD_HOST_BOOT"] = uuid.uuid4().hex


@worker_ready.connect
def register_run_host(sender=None, **kwargs) -> None:
    """A worker of the run queues makes its host known to the site, then keeps it beating."""
    queues = _run_queues(sender)
    if not queues:
        return
    from webapp.runs import hosts

    concurrency = getattr(getattr(sender, "controller", None), "concurrency", None)
    hosts.start(queues=queues, slots=concurrency)


# Claim tokens (task ids) of the short work a stopping worker hands back; None until a stop
# is asked for.
_handing_back: set[str] | None = None


def _short_work() -> dict:
    """The kinds of work a grading worker's tasks claim, by task name."""
    from webapp import work

    return {kind.task: kind for kind in work.kinds().values() if kind.claims and kind.task}


def _hand_back(by_task: dict) -> None:
    from webapp import work

    for kind in {kind.name: kind for kind in by_task.values()}.values():
        work.hand_back(kind, _handing_back or ())


@worker_shutting_down.connect
def hand_work_back(**kwargs) -> None:
    """A worker of short work (grading, reading uploads, checks) told to stop hands back
    what its tasks hold, as soon as the stop is asked for: each row waits again
    (``work.hand_back``; the sweeper sends it again, to this worker's next start or another
    worker), and the tasks are ended instead of waited for, those its pool had not started
    yet as they start. A task ended this way stores nothing: it no longer holds its row.
    A runs worker hands its agent runs over through its host instead
    (``unregister_run_host``): each stops its agent itself."""
    from celery.worker import state

    global _handing_back
    if _consumer is None or _run_queues(_consumer):
        return
    by_task = _short_work()
    tasks = {r for r in (*state.reserved_requests, *state.active_requests) if r.name in by_task}
    _handing_back = {r.id for r in tasks} | (_handing_back or set())
    _hand_back(by_task)
    for request in tasks:
        request.terminate(_consumer.pool, signal="SIGKILL")


@task_received.connect
def end_what_arrives_stopping(request=None, **kwargs) -> None:
    """A task that reaches a worker of short work after its stop was asked for is handed
    back too, ended as it starts."""
    if _handing_back is not None and request is not None and request.name in _short_work():
        _handing_back.add(request.id)
        request.terminate(_consumer.pool, signal="SIGKILL")


@worker_shutdown.connect
def hand_back_the_rest(**kwargs) -> None:
    """Once the pool has ended, hand back again: a task that started as the stop was asked
    for may have claimed its row before it was ended."""
    if _handing_back:
        _hand_back(_short_work())


@worker_shutting_down.connect
@worker_shutdown.connect
def unregister_run_host(**kwargs) -> None:
    """A clean stop: the host is marked down and its runs handed over (queued again for
    another host, or ended past their attempts). Done as soon as the stop is asked for
    (SIGTERM, Ctrl-C), not after the pool has finished: each running agent run sees its
    claim gone within a second, stops its agent and returns, so the worker stops promptly
    instead of waiting out a day-long run. Nothing is done twice (``hosts.stop`` is a
    no-op once stopped)."""
    from webapp.runs import hosts

    hosts.stop()
    # After the hand-over, which must not wait: the heartbeat thread marks its own row
    # stopped as it ends.
    _stop_heartbeat()


@worker_shutdown.connect
def end_stopped_worker(sender=None, **kwargs) -> None:
    """A worker whose stop is done (its pool ended, its work handed back, its heartbeat
    marked stopped) ends at once. What an ordinary exit would add is billiard's exit
    handler, which waits out its pool threads' one-second naps, and the teardown of an
    interpreter holding pandas and pyarrow: seconds of a stop doing nothing. Only a worker
    that is its process's program (``celery worker``, not one embedded in another program),
    and connected last, so every other stop handler has run."""
    import logging
    import sys

    from celery.apps.worker import Worker
    from celery.bootsteps import TERMINATE

    if not isinstance(sender, Worker) or sender.blueprint.state != TERMINATE:
        return
    if _stopped_heartbeat is not None:
        _stopped_heartbeat.stop(2.0)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(getattr(sender, "exitcode", None) or 0)
