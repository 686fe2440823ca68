"""The ``grading`` queue: reading uploads, grading runs, recomputing figures, and the
sweeper. Each task fetches by id and calls a service.

Retries are honest: only transient infrastructure errors (the database or the broker
unreachable for a moment) are retried, with backoff, within ``MLEBOARD_MAX_ATTEMPTS``.
Anything else (a bug, memory exhausted, answers missing on this host) fails the work at
once with a message a person can read, and the traceback goes to the worker's log.
"""

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError

from graders import AnswersMissing
from webapp.results.aggregates import experiment_aggregate_refresh
from webapp.results.grading import run_ended, run_fail, run_grade, run_release
from webapp.results.models import Run
from webapp.results.uploads import upload_fail, upload_process, upload_release
from webapp.work import new_token

log = logging.getLogger(__name__)

# Errors that say "try again shortly", not "this is wrong".
TRANSIENT_ERRORS = (OperationalError, InterfaceError, ConnectionError, TimeoutError)


def _token(task) -> str:
    return task.request.id or new_token()


def _backoff(attempts: int) -> int:
    return min(300, 5 * 2 ** max(attempts - 1, 0))


def _internal_error(what: str, exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return f"{what} ran out of memory on the worker"
    if isinstance(exc, AnswersMissing):
        return f"{what} could not start: {exc}"
    return (
        f"{what} failed with an internal error ({type(exc).__name__}: {exc}); "
        "the traceback is in the worker's log"
    )


@shared_task(
    bind=True,
    name="webapp.results.tasks.grade_run_task",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.GRADING_SOFT_TIME_LIMIT,
    time_limit=settings.GRADING_TIME_LIMIT,
)
def grade_run_task(self, run_id: int) -> None:
    token = _token(self)
    try:
        run_grade(run_id, token=token)
    except SoftTimeLimitExceeded:
        run_fail(run_id, f"grading took longer than {settings.GRADING_SOFT_TIME_LIMIT} s", token)
    except TRANSIENT_ERRORS as exc:
        attempts = Run.objects.filter(pk=run_id).values_list("attempts", flat=True).first() or 0
        if attempts >= settings.MLEBOARD_MAX_ATTEMPTS:
            run_fail(
                run_id,
                f"grading failed {attempts} times for a transient reason ({exc}); re-grade to "
                "try again",
                token,
            )
        elif run_release(run_id, token):
            raise self.retry(exc=exc, countdown=_backoff(attempts), max_retries=None) from exc
    except Exception as exc:
        log.exception("grading run %s failed", run_id)
        run_fail(run_id, _internal_error("grading", exc), token)
    run_ended(run_id)


@shared_task(name="webapp.results.tasks.refresh_experiment_aggregate_task", acks_late=True)
def refresh_experiment_aggregate_task(experiment_id: int) -> None:
    experiment_aggregate_refresh(experiment_id)


@shared_task(
    bind=True,
    name="webapp.results.tasks.process_upload_task",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.UPLOAD_SOFT_TIME_LIMIT,
    time_limit=settings.UPLOAD_SOFT_TIME_LIMIT + 60,
)
def process_upload_task(self, upload_id: int) -> None:
    token = _token(self)
    try:
        upload_process(upload_id, token=token)
    except SoftTimeLimitExceeded:
        upload_fail(
            upload_id,
            f"reading the archive took longer than {settings.UPLOAD_SOFT_TIME_LIMIT} s; "
            "split it into smaller uploads",
            token,
        )
    except TRANSIENT_ERRORS as exc:
        if upload_release(upload_id, token):
            raise self.retry(exc=exc, countdown=_backoff(1), max_retries=None) from exc
    except Exception as exc:
        log.exception("processing upload %s failed", upload_id)
        upload_fail(upload_id, _internal_error("reading the upload", exc), token)


@shared_task(name="webapp.results.tasks.sweep_task")
def sweep_task() -> dict:
    from webapp.sweeper import sweep

    return sweep().as_dict()
