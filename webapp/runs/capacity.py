"""What one worker host can run at once. Every run reserves CPUs, memory and whole GPUs
in a ledger file shared by the host's worker processes (under an exclusive file lock),
so that the host never runs more than its resources allow and never gives one GPU to
two runs. Reservations of processes that died are dropped when the ledger is read."""

import fcntl
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


class CapacityError(ValueError):
    """The request can never fit on this host (more than it has in total)."""


@dataclass(frozen=True)
class HostResources:
    cpus: float
    memory_bytes: int
    gpu_ids: tuple[str, ...]


@dataclass(frozen=True)
class Reservation:
    key: str
    cpus: float
    memory_bytes: int
    gpu_ids: tuple[str, ...]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class HostCapacity:
    def __init__(self, ledger: Path, host: HostResources):
        self.ledger = Path(ledger)
        self.host = host
        self.ledger.parent.mkdir(parents=True, exist_ok=True)

    @contextmanager
    def _locked(self):
        with open(self.ledger.with_suffix(".lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                try:
                    entries = json.loads(self.ledger.read_text() or "{}")
                except (FileNotFoundError, json.JSONDecodeError):
                    entries = {}
                entries = {k: v for k, v in entries.items() if _alive(int(v.get("pid", 0)))}
                yield entries
                tmp = self.ledger.with_suffix(".tmp")
                tmp.write_text(json.dumps(entries))
                tmp.replace(self.ledger)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def check_fits_host(self, cpus: float | None, memory: int | None, gpus: int) -> None:
        problems = []
        if cpus is not None and cpus > self.host.cpus:
            problems.append(f"{cpus:g} CPUs requested, the host has {self.host.cpus:g}")
        if memory is not None and memory > self.host.memory_bytes:
            problems.append(
                f"{memory / 1024**3:.1f} GiB of memory requested, the host has {self.host.memory_bytes / 1024**3:.1f} GiB"
            )
        if gpus > len(self.host.gpu_ids):
            problems.append(f"{gpus} GPU(s) requested, the host has {len(self.host.gpu_ids)}")
        if problems:
            raise CapacityError("this run cannot fit on this worker host: " + "; ".join(problems))

    def reserve(
        self, key: str, cpus: float | None, memory: int | None, gpus: int
    ) -> Reservation | None:
        """Reserve resources for run ``key``; None when they are not free right now.
        Raises CapacityError when they never could be."""
        self.check_fits_host(cpus, memory, gpus)
        want_cpus = cpus if cpus is not None else self.host.cpus
        want_memory = memory if memory is not None else 0
        with self._locked() as entries:
            if key in entries:  # a re-delivered task of the same run
                entry = entries[key]
                entry["pid"] = os.getpid()
                return Reservation(key, entry["cpus"], entry["memory"], tuple(entry["gpus"]))
            used_cpus = sum(e["cpus"] for e in entries.values())
            used_memory = sum(e["memory"] for e in entries.values())
            used_gpus = {g for e in entries.values() for g in e["gpus"]}
            free_gpus = [g for g in self.host.gpu_ids if g not in used_gpus]
            if (
                used_cpus + want_cpus > self.host.cpus + 1e-9
                or used_memory + want_memory > self.host.memory_bytes
                or len(free_gpus) < gpus
            ):
                return None
            chosen = tuple(free_gpus[:gpus])
            entries[key] = {
                "cpus": want_cpus,
                "memory": want_memory,
                "gpus": list(chosen),
                "pid": os.getpid(),
            }
            return Reservation(key, want_cpus, want_memory, chosen)

    def release(self, key: str) -> None:
        with self._locked() as entries:
            entries.pop(key, None)

    def in_use(self) -> dict:
        with self._locked() as entries:
            return dict(entries)
