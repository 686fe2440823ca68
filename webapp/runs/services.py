"""Launching, executing, cancelling and reaping agent runs. The execution is
``runner.run_agent`` (the same code as ``mleboard run``); its outputs are then graded
like an upload, as a run of the launch's verified experiment."""

import datetime as dt
import logging
import shutil
import threading
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from benchmark.catalogue import competitions_in_split
from benchmark.cost import METERED
from runner.agent_definition import AgentConfigError, AgentDefinition, agents_in, shipped_agents
from runner.backend import RunControl
from runner.spec import Resources, parse_size
from webapp import work
from webapp.competitions.models import Competition
from webapp.results.models import Experiment, Run
from webapp.results.services import agent_get_or_create
from webapp.runs import capacity
from webapp.runs.capacity import CapacityError
from webapp.runs.hosts import fitting_hosts, this_host
from webapp.runs.models import AgentRun, HostClaim, Launch, SubmissionSnapshot
from webapp.work import heartbeat_interval, new_token, send_on_commit

log = logging.getLogger(__name__)


class LaunchRefused(ValueError):
    pass


def site_agents() -> dict[str, AgentDefinition]:
    """The agents this site can run: the shipped ones, plus every agent folder found in
    the folders of MLEBOARD_AGENT_DIRS (an operator's own agents)."""
    agents = shipped_agents()
    for folder in settings.MLEBOARD_AGENT_DIRS:
        agents.update(agents_in(Path(folder)))
    return agents


def agent_unusable_reason(agent: AgentDefinition) -> str:
    """Why this site cannot run ``agent`` now (empty when it can): a variable it needs,
    the model endpoint of an ``llm`` agent above all, is not set."""
    import os

    try:
        agent.environment(os.environ)
    except AgentConfigError as exc:
        return str(exc)
    return ""


def find_site_agent(name: str) -> AgentDefinition:
    agents = site_agents()
    if name not in agents:
        raise AgentConfigError(
            f"no agent {name!r} on this site; known: {', '.join(sorted(agents))}"
        )
    return agents[name]


def site_backend(asked: str | None = None) -> str:
    """The backend this site runs agents with: the operator's setting. A launch asking for
    another one, or ``local`` while unisolated runs are not allowed, is refused."""
    backend = settings.MLEBOARD_RUN_BACKEND
    if asked and asked != backend:
        raise LaunchRefused(
            f"this site runs agents with the {backend} backend; isolation is the operator's "
            f"choice (MLEBOARD_RUN_BACKEND), not a launch's: leave backend out or ask for {backend}"
        )
    if backend == "local" and not settings.MLEBOARD_ALLOW_UNISOLATED_RUNS:
        raise LaunchRefused(
            "this site is set to run agents as local processes, which are not isolated from "
            "the host; the operator must use the docker backend or turn on "
            "MLEBOARD_ALLOW_UNISOLATED_RUNS"
        )
    return backend


def backend_confinement(backend: str) -> str:
    """What an agent run by ``backend`` on this host can read of it, for people (empty for
    containers: the Docker backend's isolation is the same everywhere)."""
    if backend != "local":
        return ""
    from runner.local_confinement import local_confinement

    return local_confinement().summary


def launch_create(
    *,
    owner,
    agent_name: str,
    competitions: list[str] | None = None,
    split: str = "",
    seeds: int = 1,
    cpus: float | None = None,
    memory_bytes: int | None = None,
    shm_bytes: int | None = None,
    gpus: int = 0,
    time_limit_s: float | None = None,
    snapshot_interval_s: float | None = None,
    backend: str | None = None,
    obfuscated_descriptions: bool = False,
    knowledge_cutoff: dt.date | None = None,
) -> Launch:
    """Create a launch, its verified experiment and one queued AgentRun per
    (competition, seed); the runs are dispatched on the ``runs`` queue after commit.
    Raises LaunchRefused with a message a person can act on."""
    try:
        agent = find_site_agent(agent_name)
    except AgentConfigError as exc:
        raise LaunchRefused(str(exc)) from None
    # Refused here, not ended as a harness error later (which is not a result).
    if unusable := agent_unusable_reason(agent):
        raise LaunchRefused(unusable)
    ids = list(dict.fromkeys(competitions or []))
    if split:
        ids += [c.id for c in competitions_in_split(split) if c.id not in ids]
    if not ids:
        raise LaunchRefused("choose at least one competition or a split")
    known = {c.slug: c for c in Competition.objects.filter(slug__in=ids, retired=False)}
    unknown = [c for c in ids if c not in known]
    if unknown:
        raise LaunchRefused(f"unknown or retired competitions: {', '.join(unknown[:5])}")
    data_dir = Path(settings.MLEBOARD_DATA_DIR)
    unprepared = [c for c in ids if not (data_dir / c / "prepared" / "public").is_dir()]
    if unprepared:
        raise LaunchRefused(
            f"no prepared data for {', '.join(unprepared[:5])} under {data_dir}: prepare it (MLE-bench's "
            "prepared layout) before running agents on it"
        )
    if not 1 <= seeds <= 20:
        raise LaunchRefused("seeds must be between 1 and 20")
    if obfuscated_descriptions:
        lacking = [c for c in ids if not known[c].description_obfuscated.strip()]
        if lacking:
            raise LaunchRefused(
                f"no obfuscated description for {', '.join(lacking[:5])}: import MLE-bench's "
                "description_obfuscated.md (manage.py import_mlebench) or run on the original "
                "descriptions"
            )
    backend = site_backend(asked=backend)
    with transaction.atomic():
        experiment = Experiment.objects.create(
            name=f"{agent.name} run {timezone.now():%Y-%m-%d %H:%M}",
            agent=agent_get_or_create(agent.name, _model_label(agent)),
            source=Experiment.Source.VERIFIED,
            owner=owner,
            hardware=_hardware(cpus, memory_bytes, gpus),
            runtime_hours=(time_limit_s / 3600) if time_limit_s else None,
            date=timezone.now().date(),
            internet_access=agent.egress,
            test_feedback=False,
            source_available=True,
            obfuscated_descriptions=obfuscated_descriptions,
            knowledge_cutoff=knowledge_cutoff,
            notes=f"Run by mleboard's harness ({backend} backend).",
        )
        launch = Launch.objects.create(
            owner=owner,
            agent_name=agent.name,
            backend=backend,
            competitions=ids,
            seeds=seeds,
            cpus=cpus,
            memory_bytes=memory_bytes,
            shm_bytes=shm_bytes,
            gpus=gpus,
            time_limit_s=time_limit_s,
            snapshot_interval_s=snapshot_interval_s,
            experiment=experiment,
        )
        runs = AgentRun.objects.bulk_create(
            [
                AgentRun(launch=launch, competition=known[c], seed=s)
                for s in range(seeds)
                for c in ids
            ]
        )
        from webapp.runs.tasks import execute_agent_run_task

        for run in runs:
            send_on_commit(execute_agent_run_task, run.pk, AgentRun)
    return launch


def _model_label(agent) -> str:
    """The model an experiment of ``agent`` is shown with: the operator's model for an
    agent using the site's endpoint (``MLEBOARD_LLM_MODEL``), else what the agent says."""
    from config import env
    from runner.agent_definition import LLM_MODEL_ENV

    if agent.llm:
        return env(LLM_MODEL_ENV).strip() or "the operator's model"
    return "via its own endpoint" if agent.egress else "none (no LLM)"


def launch_create_from_input(owner, data: dict) -> Launch:
    """``launch_create`` from the launch form's or ``POST /api/launches/``'s cleaned data,
    sizes written as people write them ("8g")."""
    try:
        memory = parse_size(data["memory"]) if data.get("memory") else None
        shm = parse_size(data["shm"]) if data.get("shm") else None
    except ValueError as exc:
        raise LaunchRefused(str(exc)) from None
    return launch_create(
        owner=owner,
        agent_name=data["agent"],
        competitions=data.get("competitions") or [],
        split=data.get("split") or "",
        seeds=data["seeds"],
        cpus=data.get("cpus"),
        memory_bytes=memory,
        shm_bytes=shm,
        gpus=data.get("gpus") or 0,
        time_limit_s=data.get("time_limit_s"),
        snapshot_interval_s=data.get("snapshot_interval_s"),
        backend=data.get("backend") or None,
        obfuscated_descriptions=bool(data.get("obfuscated_descriptions")),
        knowledge_cutoff=data.get("knowledge_cutoff"),
    )


def _hardware(cpus, memory, gpus) -> str:
    parts = []
    if cpus:
        parts.append(f"{cpus:g} vCPU")
    if memory:
        parts.append(f"{memory / 1024**3:.0f} GB RAM")
    parts.append(f"{gpus} GPU" if gpus else "no GPU")
    return ", ".join(parts)


def AGENT_RUNS() -> work.Kind:  # noqa: N802 - the declaration, read like a constant
    return work.kind_for("agent_run")


def agent_run_claim(run_id: int, token: str) -> bool:
    """Queued -> running, for one task only (a long run is never started twice). A run
    whose worker died is ended by the sweeper when its heartbeat stops, not re-run."""
    claimed = work.claim(AGENT_RUNS(), run_id, token, where=Q(cancel_requested=False))
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
        work.holding(AGENT_RUNS(), run.pk, token).update(
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
            on_started=lambda name: work.holding(AGENT_RUNS(), run.pk, token).update(
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
    would count as a 0% result of a verified experiment."""
    if not work.finish(
        AGENT_RUNS(), run.pk, status, token=token, message=message, finished_at=timezone.now()
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
            AGENT_RUNS(),
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
            _hand_to_grading(run, submission=outcome.submission_path)
    if not recorded:
        log.warning("run %s was handed over while it ran here: its outcome is dropped", run.pk)
        run.refresh_from_db()
        return run
    if outcome.outcome.value != AgentRun.Status.HARNESS_ERROR:
        _grade_snapshots(run, outcome.snapshots)
    run.refresh_from_db()
    return run


def _hand_to_grading(run: AgentRun, submission: Path | None) -> None:
    """A results Run for the experiment, graded by the grading queue like an upload's."""
    from webapp.results.tasks import grade_run_task

    record = AgentRun.objects.values(
        "status", "duration_s", "validation_counts", "llm_usage", "launch__time_limit_s"
    ).get(pk=run.pk)
    result, _ = Run.objects.update_or_create(
        experiment_id=run.launch.experiment_id,
        competition_id=run.competition_id,
        seed=run.seed,
        defaults={
            "run_group": f"launch-{run.launch_id}",
            "submission_path": str(submission) if submission else "",
            "facts": run_facts(record),
            "llm_usage": {**record["llm_usage"], "source": METERED}
            if record["llm_usage"] is not None
            else None,
        },
    )
    work.restart(work.kind_for("grading"), [result.pk])
    AgentRun.objects.filter(pk=run.pk).update(result_run=result)
    send_on_commit(grade_run_task, result.pk, Run)


def run_facts(record: dict) -> dict:
    """What the failure table reads of an agent run (``benchmark.failures.RunFacts``)."""
    counts = record.get("validation_counts") or {}
    return {
        "outcome": record["status"],
        "duration_s": record["duration_s"],
        "time_limit_s": record["launch__time_limit_s"],
        "validation_calls": sum(v for v in counts.values() if isinstance(v, int)),
    }


def _grade_snapshots(run: AgentRun, snapshots) -> None:
    """Grade the harness's snapshots of ``run`` (``webapp.runs.snapshots``) and store them
    with the run's graded run."""
    from webapp.runs.snapshots import snapshot_grades

    if not snapshots:
        return
    result_run_id = AgentRun.objects.values_list("result_run_id", flat=True).get(pk=run.pk)
    grades = snapshot_grades(run.competition, run.seed, [Path(s.path) for s in snapshots])
    SubmissionSnapshot.objects.bulk_create(
        SubmissionSnapshot(
            agent_run=run,
            run_id=result_run_id,
            elapsed_s=snap.elapsed_s,
            path=str(snap.path),
            **grade,
        )
        for snap, grade in zip(snapshots, grades, strict=True)
    )


def agent_run_cancel(run: AgentRun) -> str:
    """Cancel a run: a queued one ends at once; a running one is stopped by its harness
    within seconds. Returns the run's status afterwards."""
    if work.finish(
        AGENT_RUNS(),
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
    kind = AGENT_RUNS()
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
        AGENT_RUNS(),
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
            _hand_to_grading(run, submission=None)
    return bool(ended)


def _remove_leftover_container(run: AgentRun) -> None:
    """Best effort: a run whose worker died may have left its container running."""
    if run.launch.backend != "docker" or not run.container:
        return
    try:
        from runner.docker_backend import remove_run_container

        remove_run_container(run.container)
    except Exception:  # the engine may be gone too; the run is already recorded as ended
        log.warning("could not remove container %s of run %s", run.container, run.pk, exc_info=True)
