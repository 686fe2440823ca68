"""What a run host can run at once, claimed in the database. Every agent run holds one
``HostClaim`` on the host running it (CPUs, memory, whole GPU ids); claims of a host are
made under a lock on its ``RunHost`` row (``select_for_update`` on PostgreSQL; on SQLite
each transaction begins ``IMMEDIATE``, so writers are serialised), so a host never hands
out more than it registered and no GPU id is ever held by two runs. A host that stops
beating loses its claims (the sweeper, ``webapp.runs.hosts``)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from config import env
from webapp.runs.models import HostClaim, RunHost


def current_boot() -> str:
    """The boot of this worker (set when it starts, ``webapp.project.celery``); empty outside one."""
    return env("MLEBOARD_HOST_BOOT")


class CapacityError(ValueError):
    """The request can never fit on the host (more than it has in total)."""


@dataclass(frozen=True)
class HostResources:
    cpus: float
    memory_bytes: int
    gpu_ids: tuple[str, ...]


@dataclass(frozen=True)
class Reservation:
    run_id: int
    host: str
    cpus: float
    memory_bytes: int
    gpu_ids: tuple[str, ...]


def resources_of(host: RunHost) -> HostResources:
    return HostResources(host.cpus, host.memory_bytes, tuple(str(g) for g in host.gpu_ids))


def problems(host: HostResources, cpus: float | None, memory: int | None, gpus: int) -> list[str]:
    """Why a request can never fit on ``host`` (empty: it can, once the host is free)."""
    found = []
    if cpus is not None and cpus > host.cpus + 1e-9:
        found.append(f"{cpus:g} CPUs requested, the host has {host.cpus:g}")
    if memory is not None and memory > host.memory_bytes:
        found.append(
            f"{memory / 1024**3:.1f} GiB of memory requested, the host has "
            f"{host.memory_bytes / 1024**3:.1f} GiB"
        )
    if gpus > len(host.gpu_ids):
        found.append(f"{gpus} GPU(s) requested, the host has {len(host.gpu_ids)}")
    return found


def check_fits_host(host: HostResources, cpus: float | None, memory: int | None, gpus: int):
    found = problems(host, cpus, memory, gpus)
    if found:
        raise CapacityError("this run cannot fit on this worker host: " + "; ".join(found))


@dataclass(frozen=True)
class Usage:
    cpus: float
    memory_bytes: int
    gpu_ids: tuple[str, ...]
    runs: tuple[int, ...]


def usage(claims) -> Usage:
    claims = list(claims)
    return Usage(
        cpus=sum(c.cpus for c in claims),
        memory_bytes=sum(c.memory_bytes for c in claims),
        gpu_ids=tuple(str(g) for c in claims for g in c.gpu_ids),
        runs=tuple(c.agent_run_id for c in claims),
    )


def reserve(
    host_name: str, run_id: int, token: str, cpus: float | None, memory: int | None, gpus: int
) -> Reservation | None:
    """Claim resources on ``host_name`` for agent run ``run_id``. None when they are not
    free right now, or when the run already holds a claim of another task (a duplicate
    delivery); a re-delivery of the same task gets its claim back. Raises CapacityError
    when the host could never give them. A request without a CPU count takes the whole
    host's CPUs; without memory, no memory is set aside."""
    with transaction.atomic():
        # The lock that serialises the host's claims (PostgreSQL: this row; SQLite: the
        # IMMEDIATE transaction already holds the database's write lock).
        host = RunHost.objects.select_for_update().get(name=host_name)
        resources = resources_of(host)
        check_fits_host(resources, cpus, memory, gpus)
        boot = current_boot() or host.boot
        held = HostClaim.objects.filter(agent_run_id=run_id).first()
        if held is not None:
            if held.host_id == host.pk and held.token == token:
                if held.boot != boot:
                    HostClaim.objects.filter(pk=held.pk).update(boot=boot)
                return Reservation(
                    run_id, host.name, held.cpus, held.memory_bytes, tuple(held.gpu_ids)
                )
            return None
        used = usage(HostClaim.objects.filter(host=host))
        want_cpus = cpus if cpus is not None else resources.cpus
        want_memory = memory if memory is not None else 0
        free_gpus = [g for g in resources.gpu_ids if g not in set(used.gpu_ids)]
        if (
            used.cpus + want_cpus > resources.cpus + 1e-9
            or used.memory_bytes + want_memory > resources.memory_bytes
            or len(free_gpus) < gpus
        ):
            return None
        chosen = tuple(free_gpus[:gpus])
        try:
            with transaction.atomic():
                HostClaim.objects.create(
                    host=host,
                    agent_run_id=run_id,
                    token=token,
                    boot=boot,
                    cpus=want_cpus,
                    memory_bytes=want_memory,
                    gpu_ids=list(chosen),
                )
        except IntegrityError:  # another host claimed the run at the same moment
            return None
        return Reservation(run_id, host.name, want_cpus, want_memory, chosen)


def release(run_id: int, token: str | None = None) -> bool:
    """Give back the resources run ``run_id`` holds (only ``token``'s claim, when given)."""
    claims = HostClaim.objects.filter(agent_run_id=run_id)
    if token is not None:
        claims = claims.filter(token=token)
    return bool(claims.delete()[0])


def free(host: RunHost, claims=None) -> dict:
    """What ``host`` has not handed out: CPUs, memory, GPU ids."""
    used = usage(host.claims.all() if claims is None else claims)
    held = set(used.gpu_ids)
    return {
        "cpus": max(0.0, host.cpus - used.cpus),
        "memory_bytes": max(0, host.memory_bytes - used.memory_bytes),
        "gpu_ids": [str(g) for g in host.gpu_ids if str(g) not in held],
    }
