"""Runs that end other than by finishing: cancelled, silent (their worker or container is
gone), or handed over when their host went down or their worker stops."""

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from webapp import work
from webapp.runs import capacity
from webapp.runs.kinds import agent_runs
from webapp.runs.models import AgentRun
from webapp.runs.services.outputs import hand_to_grading

log = logging.getLogger(__name__)


def agent_run_cancel(run: AgentRun) -> str:
    """Cancel a run: a queued one ends at once; a running one is stopped by its harness
    within seconds. Returns the run's status afterwards."""
    if work.finish(
        agent_runs(),
        run.pk,
        AgentRun.Status.CANCELLED,
        where=Q(status=AgentRun.Status.QUEUED),
        cancel_requested=True,
        message="Cancelled before it started.",
        finished_at=timezone.now(),
    ):
        return AgentRun.Status.CANCELLED
    AgentRun.objects.filter(pk=run.pk, status=AgentRun.Status.RUNNING).update(cancel_requested=True)
    return AgentRun.objects.values_list("status", flat=True).get(pk=run.pk)


def agent_run_end_silent(run_id: int, cutoff) -> bool:
    """End a run whose heartbeat stopped before ``cutoff`` (its worker or container is
    gone): recorded as a harness error, its container removed, its (missing) submission
    handed to grading so the experiment counts it. True when this call ended it."""
    return _end_running(
        run_id,
        f"The run's heartbeat stopped for more than {settings.MLEBOARD_STALE_AFTER_S} s: "
        "its worker or container is gone.",
        heartbeat_at__lt=cutoff,
    )


def agent_run_hand_over(run_id: int, token: str, why: str) -> str:
    """A run ``token`` still holds as running, whose execution stopped without an outcome
    (its host went down, its worker restarted or is stopping): ``"requeued"`` for another
    host while attempts are left, ``"ended"`` after; ``""`` when ``token`` no longer holds
    it (it ended, or was handed over already)."""
    kind = agent_runs()
    attempts = AgentRun.objects.filter(pk=run_id).values_list("attempts", flat=True).first()
    if attempts is None or not work.holding(kind, run_id, token).exists():
        return ""
    if not work.attempts_spent(kind, attempts):
        released = work.release(
            kind,
            run_id,
            token,
            message=(
                f"Queued again for another host: {why} while it ran "
                f"(attempt {attempts} of {settings.MLEBOARD_MAX_ATTEMPTS})."
            ),
        )
        return "requeued" if released else ""
    return "ended" if _end_on_lost_host(run_id, token, why, attempts) else ""


def _end_on_lost_host(run_id: int, token: str, why: str, attempts: int) -> bool:
    """End a started run whose host went down once its attempts are spent, like a silent
    run (its container went with its host: the host's engine is not ours to reach)."""
    return _end_running(
        run_id,
        f"Ended: {why} while it ran, after {attempts} attempts "
        f"(MLEBOARD_MAX_ATTEMPTS={settings.MLEBOARD_MAX_ATTEMPTS}).",
        remove_container=False,
        claimed_by=token,
    )


def _end_running(run_id: int, message: str, *, remove_container: bool = True, **still) -> bool:
    """A running run (still matching ``still``) ended as a harness error: its claim on its
    host released, and its (missing) submission handed to grading."""
    ended = work.fail(
        agent_runs(),
        run_id,
        message,
        where=Q(status=AgentRun.Status.RUNNING, **still),
        finished_at=timezone.now(),
    )
    if ended:
        capacity.release(run_id)
        run = AgentRun.objects.select_related("launch").get(pk=run_id)
        if remove_container:
            _remove_leftover_container(run)
        with transaction.atomic():
            hand_to_grading(run, submission=None)
    return bool(ended)


def _remove_leftover_container(run: AgentRun) -> None:
    """Best effort: a run whose worker died may have left its container running."""
    if run.launch.backend != "docker" or not run.container:
        return
    try:
        from runner.reaper import remove_run_container

        remove_run_container(run.container)
    except Exception:  # the engine may be gone too; the run is already recorded as ended
        log.warning("could not remove container %s of run %s", run.container, run.pk, exc_info=True)
