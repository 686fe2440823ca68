"""Executing a claimed agent run on this host: ``runner.run_agent`` (the same code as
``mleboard run``) in its container, within the host's capacity, its outcome recorded."""

import logging
import shutil
import threading
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from runner.agent_definition import AgentConfigError
from runner.backend import RunControl
from runner.spec import Resources
from webapp import work
from webapp.runs import capacity
from webapp.runs.capacity import CapacityError
from webapp.runs.hosts import fitting_hosts, this_host
from webapp.runs.kinds import agent_runs
from webapp.runs.models import AgentRun, HostClaim
from webapp.runs.services.catalogue import (
    LaunchRefused,
    backend_confinement,
    find_site_agent,
    site_backend,
)
from webapp.runs.services.ending import agent_run_hand_over
from webapp.runs.services.outputs import grade_snapshots, hand_to_grading
from webapp.work import heartbeat_interval, new_token

log = logging.getLogger(__name__)


def agent_run_claim(run_id: int, token: str) -> bool:
    """Queued -> running, for one task only (a long run is never started twice). A run
    whose worker died is ended by the sweeper when its heartbeat stops, not re-run."""
    claimed = work.claim(agent_runs(), run_id, token, where=Q(cancel_requested=False))
    if claimed:
        AgentRun.objects.filter(pk=run_id).update(started_at=timezone.now())
    return claimed


def agent_run_execute(run_id: int, token: str = "") -> AgentRun | None:
    """Run one (competition, seed) in its container on this host and hand its outputs to
    grading. The run's resources are claimed on this host first (``capacity``): while
    they are busy the run waits here, still queued (another host may take a copy of its
    task meanwhile); a run this host can never fit is left to a host that can, or ended
    without running when no host can. Returns None when another task holds the run."""
    token = token or new_token()
    run = AgentRun.objects.select_related("launch", "competition").filter(pk=run_id).first()
    if run is None:
        return None
    launch = run.launch
    host = this_host()
    try:
        reservation = _wait_for_room(run, token, host.name)
    except CapacityError as exc:
        elsewhere = [
            h.name
            for h in fitting_hosts(launch.cpus, launch.memory_bytes, launch.gpus)
            if h.pk != host.pk
        ]
        if elsewhere:
            # Sent again by the sweeper, for a host of its class that can fit it.
            AgentRun.objects.filter(pk=run.pk, status=AgentRun.Status.QUEUED).update(
                dispatched_at=None,
                message=f"Waiting for a host that can fit it ({', '.join(elsewhere[:3])}): "
                f"{host.name} cannot ({exc}).",
            )
            return None
        if not agent_run_claim(run_id, token):
            return None
        # No host can ever give what the launch asks: the agent was never tried, so
        # nothing is graded (a "no submission" would count as a 0% result).
        return _finish_without_running(
            run,
            AgentRun.Status.HARNESS_ERROR,
            f"Never started: {exc}. Not counted in the experiment's figures.",
            token=token,
        )
    if reservation is None:
        return None
    why = f"the harness on {host.name} returned without an outcome"
    try:
        if not agent_run_claim(run_id, token):
            return None
        return _execute_claimed(run, token, reservation)
    except Exception as exc:
        why = f"the harness on {host.name} failed ({type(exc).__name__})"
        raise
    except BaseException:
        why = f"the worker on {host.name} stopped"
        raise
    finally:
        # Interrupted with the run still held (the worker is stopping: its pool process
        # unwinds on SIGTERM, maybe before the worker's own hand-over looks; or the harness
        # raised): handed over here, or it would stay running with no claim left to hand
        # over. Said as it happened.
        agent_run_hand_over(run.pk, token, why)
        capacity.release(run.pk, token)


def _wait_for_room(run: AgentRun, token: str, host: str) -> capacity.Reservation | None:
    """Claim the run's resources on ``host``, waiting while they are busy. None when the
    run stopped waiting meanwhile (another task took it, or it was cancelled)."""
    launch = run.launch
    waiting = AgentRun.objects.filter(
        pk=run.pk, status=AgentRun.Status.QUEUED, cancel_requested=False
    )
    while waiting.exists():
        reservation = capacity.reserve(
            host, run.pk, token, launch.cpus, launch.memory_bytes, launch.gpus
        )
        if reservation is not None:
            return reservation
        if HostClaim.objects.filter(agent_run_id=run.pk).exists():
            return None  # another task (here or on another host) has claimed it
        time.sleep(settings.MLEBOARD_RUN_RETRY_S)
    return None


def _execute_claimed(run: AgentRun, token: str, reservation) -> AgentRun:
    from runner.harness import run_agent, spec_for_agent

    launch = run.launch
    try:  # the operator may have changed the isolation since the launch
        site_backend(asked=launch.backend)
    except LaunchRefused as exc:
        return _finish_without_running(run, AgentRun.Status.HARNESS_ERROR, str(exc), token=token)
    try:
        agent = find_site_agent(launch.agent_name)
        resources = Resources(
            cpus=launch.cpus,
            memory=launch.memory_bytes,
            shm=launch.shm_bytes,
            gpus=launch.gpus,
            gpu_ids=reservation.gpu_ids,
            pids=4096,
        )
        spec = spec_for_agent(
            agent,
            run.competition.slug,
            resources=resources,
            time_limit_s=launch.time_limit_s,
            seed=run.seed,
            obfuscated_description=run.competition.description_obfuscated
            if launch.experiment and launch.experiment.obfuscated_descriptions
            else None,
        )
        output = Path(settings.MEDIA_ROOT) / "agent-runs" / str(run.pk)
        if output.exists():  # what a dead attempt left behind
            shutil.rmtree(output)
        work.holding(agent_runs(), run.pk, token).update(
            output_dir=str(output),
            gpu_ids=list(reservation.gpu_ids),
            message="",
            confinement=backend_confinement(launch.backend),
        )
        cancel = threading.Event()
        watcher = _CancelWatcher(run.pk, token, cancel)
        control = RunControl(
            cancel=cancel,
            heartbeat=watcher.heartbeat,
            heartbeat_interval_s=heartbeat_interval(),
            on_started=lambda name: work.holding(agent_runs(), run.pk, token).update(
                container=name
            ),
        )
        try:
            outcome = run_agent(
                spec,
                data_dir=Path(settings.MLEBOARD_DATA_DIR),
                output_dir=output,
                backend=launch.backend,
                control=control,
                snapshot_interval_s=launch.snapshot_interval_s,
            )
        finally:
            watcher.stop()
    except AgentConfigError as exc:
        return _finish_without_running(run, AgentRun.Status.HARNESS_ERROR, str(exc), token=token)
    return _record_outcome(run, outcome, token)


class _CancelWatcher:
    """Turns a cancel request stored on the run, or the loss of its claim (its host was
    taken for down and the run handed over), into the harness's cancel event, and records
    heartbeats while the claim holds; polls the database once a second from its own
    thread."""

    def __init__(self, run_id: int, token: str, cancel: threading.Event):
        self.run_id, self.token, self.cancel = run_id, token, cancel
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        from django.db import close_old_connections

        try:
            while not self._stop.wait(1.0):
                if (
                    AgentRun.objects.filter(pk=self.run_id)
                    .filter(Q(cancel_requested=True) | ~Q(claimed_by=self.token))
                    .exists()
                ):
                    self.cancel.set()
                    return
        finally:
            close_old_connections()

    def heartbeat(self):
        AgentRun.objects.filter(pk=self.run_id, claimed_by=self.token).update(
            heartbeat_at=timezone.now()
        )

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=5)


def _finish_without_running(
    run: AgentRun, status: str, message: str, *, token: str | None = None
) -> AgentRun:
    """End a run the harness never started (while ``token`` holds it, when given). It is
    not handed to grading: a refusal is not the agent's doing, and a "no submission"
    would count as a 0% result of a reproduced experiment."""
    if not work.finish(
        agent_runs(), run.pk, status, token=token, message=message, finished_at=timezone.now()
    ):
        run.refresh_from_db()
        return run
    run.refresh_from_db()
    return run


def _record_outcome(run: AgentRun, outcome, token: str) -> AgentRun:
    """Store the outcome while the claim holds (a run handed over meanwhile belongs to
    another host's attempt: this one's outcome is dropped)."""
    with transaction.atomic():
        recorded = work.finish(
            agent_runs(),
            run.pk,
            outcome.outcome.value,
            token=token,
            message=outcome.message,
            detail=outcome.detail,
            exit_code=outcome.exit_code,
            duration_s=outcome.duration_s,
            egress_granted=outcome.egress_granted,
            overhead=outcome.overhead,
            validation_counts=outcome.validation_counts,
            llm_usage=outcome.llm_usage,
            finished_at=timezone.now(),
            **({"confinement": outcome.confinement} if outcome.confinement else {}),
        )
        # A harness error is the infrastructure's failure, not the agent's: no result.
        if recorded and outcome.outcome.value != AgentRun.Status.HARNESS_ERROR:
            hand_to_grading(run, submission=outcome.submission_path)
    if not recorded:
        log.warning("run %s was handed over while it ran here: its outcome is dropped", run.pk)
        run.refresh_from_db()
        return run
    if outcome.outcome.value != AgentRun.Status.HARNESS_ERROR:
        grade_snapshots(run, outcome.snapshots)
    run.refresh_from_db()
    return run
