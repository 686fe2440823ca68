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
from django.utils import timezone

from graders import AnswersMissing
from webapp import work
from webapp.core.media_space import is_disk_full
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.grading.services import run_fail, run_grade
from webapp.results.uploads.services import upload_fail, upload_process
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
    if is_disk_full(exc):
        return (
            f"{what} stopped: the server's storage filled up meanwhile (nothing half-read was "
            "kept); send it again later, or tell the site's operators"
        )
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
        _retry_or_fail(self, "grading", run_id, token, exc)
    except Exception as exc:
        log.exception("grading run %s failed", run_id)
        run_fail(run_id, _internal_error("grading", exc), token)


def _retry_or_fail(task, kind_name: str, pk: int, token: str, exc: BaseException) -> None:
    """A transient error: the work waits again and this task retries with backoff, or,
    past its attempts budget, fails with the kind's message (``work.retry_or_fail``)."""
    kind = work.kind_for(kind_name)
    attempts = kind.model.objects.filter(pk=pk).values_list("attempts", flat=True).first() or 0
    # Sent again by this retry, not at once by the sweeper.
    resend = {"dispatched_at": timezone.now()}
    if work.retry_or_fail(kind, pk, token, "transient", release_fields=resend, error=exc) == (
        "released"
    ):
        raise task.retry(exc=exc, countdown=_backoff(attempts), max_retries=None) from exc


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
        _retry_or_fail(self, "upload", upload_id, token, exc)
    except Exception as exc:
        log.exception("processing upload %s failed", upload_id)
        upload_fail(upload_id, _internal_error("reading the upload", exc), token)
