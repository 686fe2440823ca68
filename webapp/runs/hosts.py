"""Run hosts as the site knows them. A worker consuming a run queue (``runs.cpu``, and
``runs.gpu`` with GPUs) registers its host when ready (``webapp.project.celery``): its name
(``MLEBOARD_HOST_NAME``), what it may hand out (``MLEBOARD_HOST_CPUS``,
``MLEBOARD_HOST_MEMORY``, ``MLEBOARD_HOST_GPUS``, ``MLEBOARD_HOST_GPU_MODEL``; default what
the machine has), its engine, queues and run slots; it beats every quarter of
``MLEBOARD_STALE_AFTER_S``, and each start is a new *boot*. A host silent that long is
marked down by the sweeper and its runs handed over (``hand_over``): one not started waits
again; a started one is queued for another host while it has attempts left
(``MLEBOARD_MAX_ATTEMPTS``), else ended as a harness error; its claims are released. A
run whose own heartbeat stops on a living host is ended (``agent_run_end_silent``).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import shutil
import socket
import subprocess
import threading
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone

from webapp import work
from webapp.runs import capacity
from webapp.runs.kinds import suspect_before
from webapp.runs.models import AgentRun, HostClaim, RunHost
from webapp.runs.queues import RUN_QUEUE_CPU, RUN_QUEUE_GPU, queue_for
from webapp.work import heartbeat_interval, stale_before

log = logging.getLogger(__name__)


# --- what this host is ---------------------------------------------------------------


def host_name() -> str:
    return settings.MLEBOARD_HOST_NAME or socket.gethostname()


@functools.lru_cache(maxsize=1)
def _nvidia_smi() -> tuple[tuple[str, ...], str]:
    """The GPUs nvidia-smi lists: (ids, model); nothing without it."""
    if shutil.which("nvidia-smi") is None:
        return (), ""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return (), ""
    rows = [[part.strip() for part in line.split(",", 1)] for line in out.splitlines() if line]
    ids = tuple(r[0] for r in rows if r and r[0])
    models = sorted({r[1] for r in rows if len(r) > 1})
    return ids, ", ".join(models)


def gpu_ids() -> tuple[str, ...]:
    if settings.MLEBOARD_HOST_GPUS is not None:
        return tuple(str(g) for g in settings.MLEBOARD_HOST_GPUS)
    return _nvidia_smi()[0]


def gpu_model() -> str:
    if settings.MLEBOARD_HOST_GPU_MODEL:
        return settings.MLEBOARD_HOST_GPU_MODEL
    return _nvidia_smi()[1] if gpu_ids() else ""


@functools.lru_cache(maxsize=4)
def _engine(backend: str) -> str:
    if backend != "docker":
        return backend
    try:
        import docker

        version = docker.from_env(timeout=10).version().get("Version", "?")
    except Exception:  # no engine reachable: say so on the hosts page
        return "docker (engine not reachable)"
    return f"docker {version}"


def engine() -> str:
    return _engine(settings.MLEBOARD_RUN_BACKEND)


def run_queues() -> list[str]:
    """The run queues (resource classes) a worker of this host should consume: the
    operator's ``MLEBOARD_RUN_QUEUES``, else runs.cpu, plus runs.gpu when it has GPUs."""
    if settings.MLEBOARD_RUN_QUEUES:
        return list(settings.MLEBOARD_RUN_QUEUES)
    return [RUN_QUEUE_CPU, RUN_QUEUE_GPU] if gpu_ids() else [RUN_QUEUE_CPU]


def host_beats(queue: str, since: dt.datetime) -> list[tuple[dt.datetime | None, bool]]:
    """Each run host consuming ``queue``: its last beat, and whether it is up and has
    beaten since ``since`` (``webapp.liveness`` asks, for "no run worker has answered")."""
    return [
        (host.heartbeat_at, host.state == RunHost.State.UP and host.heartbeat_at >= since)
        for host in RunHost.objects.exclude(heartbeat_at=None)
        if queue in (host.queues or [])
    ]


def _capacity_fields() -> dict:
    return {
        "cpus": float(settings.MLEBOARD_HOST_CPUS),
        "memory_bytes": int(settings.MLEBOARD_HOST_MEMORY),
        "gpu_ids": list(gpu_ids()),
        "gpu_model": gpu_model(),
    }


def register(queues: list[str] | None = None, slots: int | None = None) -> RunHost:
    """Register this host for a new boot of its worker (up, with a fresh heartbeat): the
    worker's own (``MLEBOARD_HOST_BOOT``), else a new one. The claims of its earlier
    boots are handed over at once: their processes are gone."""
    now = timezone.now()
    defaults = {
        **_capacity_fields(),
        "engine": engine(),
        "queues": list(queues if queues is not None else run_queues()),
        "slots": slots if slots is not None else settings.MLEBOARD_RUN_SLOTS,
        "boot": capacity.current_boot() or uuid.uuid4().hex,
        "state": RunHost.State.UP,
        "started_at": now,
        "heartbeat_at": now,
        "down_since": None,
        "note": "",
    }
    host, _ = RunHost.objects.update_or_create(name=host_name(), defaults=defaults)
    hand_over_stale_claims(host_pk=host.pk)
    log.info(
        "run host %s registered: %g CPUs, %.1f GiB, GPUs %s, queues %s, %s slots",
        host.name,
        host.cpus,
        host.memory_bytes / 1024**3,
        ",".join(host.gpu_ids) or "none",
        ",".join(host.queues),
        host.slots,
    )
    return host


def this_host() -> RunHost:
    """This host's row, for a run about to claim resources. A worker registered it when it
    started; a run executed outside a worker (a command, a test) registers it here. What
    the settings say this host has is what it has."""
    fields = _capacity_fields()
    host = RunHost.objects.filter(name=host_name()).first()
    if host is None:
        now = timezone.now()
        host, _ = RunHost.objects.get_or_create(
            name=host_name(),
            defaults={
                **fields,
                "engine": engine(),
                "queues": run_queues(),
                "slots": settings.MLEBOARD_RUN_SLOTS,
                "boot": capacity.current_boot() or uuid.uuid4().hex,
                "started_at": now,
                "heartbeat_at": now,
            },
        )
    elif any(getattr(host, k) != v for k, v in fields.items()):
        RunHost.objects.filter(pk=host.pk).update(**fields)
        host.refresh_from_db()
    return host


def beat(name: str, boot: str) -> bool:
    """Say that boot ``boot`` of host ``name`` is alive. A host the sweeper had marked down
    is up again (its earlier runs were handed over already). False when another boot has
    registered the name since."""
    return bool(
        RunHost.objects.filter(name=name, boot=boot).update(
            heartbeat_at=timezone.now(), state=RunHost.State.UP, down_since=None, note=""
        )
    )


def mark_stopped(name: str, boot: str) -> HandOver:
    """A worker that shut down cleanly: its host is down, and says so; its runs are handed
    over."""
    marked = RunHost.objects.filter(name=name, boot=boot).update(
        state=RunHost.State.DOWN, down_since=timezone.now(), note="its worker stopped"
    )
    result = hand_over_stale_claims()
    log.info(
        "run host %s stopped%s: %d runs queued again, %d ended, %d claims released",
        name,
        "" if marked else " (registered again by another worker meanwhile)",
        result.requeued,
        result.ended,
        result.released,
    )
    return result


class HostHeartbeat:
    """The thread that keeps this host up, and removes its engine's run containers past
    their deadline every ``MLEBOARD_REAPER_INTERVAL_S``. A host that could not register
    when its worker started (the database not up yet, or not migrated: compose starts the
    workers beside the site's migration) registers from here, once it can."""

    def __init__(self, queues: list[str], slots: int | None):
        self.queues, self.slots = queues, slots
        self.name, self.boot = host_name(), ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="run-host-heartbeat", daemon=True)

    def register(self) -> bool:
        """Register this host; False if the database would not have it yet."""
        try:
            host = register(queues=self.queues, slots=self.slots)
        except Exception:
            log.warning("could not register run host %s; retrying", self.name, exc_info=True)
            close_old_connections()
            return False
        self.name, self.boot = host.name, host.boot
        return True

    def start(self) -> HostHeartbeat:
        self._thread.start()
        return self

    def _loop(self) -> None:
        last_reap = timezone.now()
        try:
            while not self._stop.wait(heartbeat_interval()):
                if not self.boot and not self.register():
                    continue
                try:
                    if not beat(self.name, self.boot):
                        log.warning("run host %s was registered again by another worker", self.name)
                except Exception:  # the database blinked; the next beat tries again
                    log.warning("heartbeat of run host %s failed", self.name, exc_info=True)
                    close_old_connections()
                now = timezone.now()
                if (now - last_reap).total_seconds() >= settings.MLEBOARD_REAPER_INTERVAL_S:
                    last_reap = now
                    self._reap()
        finally:
            close_old_connections()

    @staticmethod
    def _reap() -> None:
        if settings.MLEBOARD_RUN_BACKEND != "docker":
            return
        try:
            from runner.reaper import reap_expired

            for item in reap_expired():
                log.info("reaped run container %s", item)
        except Exception:
            log.warning("could not reap run containers", exc_info=True)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


_started: HostHeartbeat | None = None


def start(queues: list[str], slots: int | None) -> HostHeartbeat:
    """Register this host and keep it beating (a worker's ``worker_ready``); a host the
    database cannot take yet registers from its heartbeat."""
    global _started
    if _started is not None:
        _started.stop()
    heart = HostHeartbeat(queues, slots)
    heart.register()
    _started = heart.start()
    return heart


def stop() -> None:
    """A worker's clean shutdown: stop beating and mark the host down."""
    global _started
    if _started is None:
        return
    beating, _started = _started, None
    beating.stop()
    if not beating.boot:  # never registered: nothing to mark
        return
    try:
        mark_stopped(beating.name, beating.boot)
    finally:
        close_old_connections()


# --- hosts that went silent -------------------------------------------------------------


@dataclass
class HandOver:
    hosts_down: list[str] = field(default_factory=list)
    requeued: int = 0
    ended: int = 0
    released: int = 0


def mark_silent_hosts_down(result: HandOver | None = None) -> HandOver:
    """Hosts silent for ``MLEBOARD_STALE_AFTER_S`` are down; then every claim of a host
    that is down or of an earlier boot is handed over."""
    result = result or HandOver()
    cutoff = stale_before()
    for pk, name, beat_at in RunHost.objects.filter(
        state=RunHost.State.UP, heartbeat_at__lt=cutoff
    ).values_list("pk", "name", "heartbeat_at"):
        if RunHost.objects.filter(pk=pk, state=RunHost.State.UP, heartbeat_at__lt=cutoff).update(
            state=RunHost.State.DOWN,
            down_since=timezone.now(),
            note=f"no heartbeat since {beat_at:%Y-%m-%d %H:%M:%S} UTC",
        ):
            result.hosts_down.append(name)
            log.warning("run host %s is down: no heartbeat since %s", name, beat_at)
    return hand_over_stale_claims(result)


def hand_over_stale_claims(result: HandOver | None = None, host_pk: int | None = None) -> HandOver:
    """Hand over the runs of every claim held on a host that is down, or by an earlier
    boot of its host (its worker restarted), and release those claims."""
    result = result or HandOver()
    stale = HostClaim.objects.filter(Q(host__state=RunHost.State.DOWN) | ~Q(boot=F("host__boot")))
    if host_pk is not None:
        stale = stale.filter(host_id=host_pk)
    for claim in stale.select_related("host")[:1000]:
        hand_over(claim, result)
    return result


def hand_over(claim: HostClaim, result: HandOver) -> None:
    from webapp.runs.services.ending import agent_run_hand_over

    host = claim.host
    why = (
        f"its host {host.name} went down ({host.note or 'no heartbeat'})"
        if host.state == RunHost.State.DOWN
        else f"its host {host.name}'s worker restarted"
    )
    with transaction.atomic():
        handed = agent_run_hand_over(claim.agent_run_id, claim.token, why)
        if handed == "requeued":
            result.requeued += 1
        elif handed == "ended":
            result.ended += 1
        else:
            # Claimed but never started (or already ended): send it again if it waits.
            AgentRun.objects.filter(pk=claim.agent_run_id, status=AgentRun.Status.QUEUED).update(
                dispatched_at=None
            )
        HostClaim.objects.filter(pk=claim.pk).delete()
        result.released += 1


def release_orphan_claims() -> int:
    """Claims on living hosts whose process is gone: the run ended, waits again, or is
    held by another task (a process that died between claiming resources and the run)."""
    old = stale_before()
    orphans = HostClaim.objects.filter(
        Q(agent_run__status__in=work.kind_for("agent_run").final, created_at__lt=old)
        | Q(agent_run__status=AgentRun.Status.QUEUED, created_at__lt=old)
        | (Q(agent_run__status=AgentRun.Status.RUNNING) & ~Q(agent_run__claimed_by=F("token")))
    )
    return orphans.delete()[0]


# --- what the pages show ----------------------------------------------------------------


def status(hosts=None) -> list[dict]:
    """Every host: state, last heartbeat, capacity, what is free, the runs it holds."""
    hosts = list(RunHost.objects.all() if hosts is None else hosts)
    claims: dict[int, list[HostClaim]] = {h.pk: [] for h in hosts}
    for claim in HostClaim.objects.filter(host__in=hosts).select_related(
        "agent_run__launch", "agent_run__competition"
    ):
        claims[claim.host_id].append(claim)
    now = timezone.now()
    suspect = suspect_before()
    out = []
    for host in hosts:
        held = claims[host.pk]
        free = capacity.free(host, held)
        silent = host.state == RunHost.State.UP and (
            host.heartbeat_at is None or host.heartbeat_at < suspect
        )
        out.append(
            {
                "name": host.name,
                "state": host.state,
                "silent": silent,
                "last_heartbeat": host.heartbeat_at,
                "seconds_since_heartbeat": (
                    round((now - host.heartbeat_at).total_seconds(), 1)
                    if host.heartbeat_at
                    else None
                ),
                "down_since": host.down_since,
                "note": host.note,
                "started_at": host.started_at,
                "engine": host.engine,
                "queues": host.queues,
                "slots": host.slots,
                "capacity": {
                    "cpus": host.cpus,
                    "memory_bytes": host.memory_bytes,
                    "gpu_ids": [str(g) for g in host.gpu_ids],
                    "gpu_model": host.gpu_model,
                },
                "free": free,
                "runs": [
                    {
                        "id": c.agent_run_id,
                        "label": str(c.agent_run),
                        "status": c.agent_run.status,
                        "cpus": c.cpus,
                        "memory_bytes": c.memory_bytes,
                        "gpu_ids": [str(g) for g in c.gpu_ids],
                        "url": reverse("run-page-agent", args=[c.agent_run_id]),
                    }
                    for c in held
                ],
            }
        )
    return out


def fitting_hosts(cpus: float | None, memory: int | None, gpus: int) -> list[RunHost]:
    """Hosts that are up and could ever fit the request."""
    return [
        h
        for h in RunHost.objects.filter(state=RunHost.State.UP)
        if not capacity.problems(capacity.resources_of(h), cpus, memory, gpus)
        and queue_for(gpus) in (h.queues or [])
    ]
