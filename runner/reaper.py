"""Find and remove this installation's run containers: the labels every run container
carries, and the reaper (``mleboard reap``, the site's sweeper) that removes those past
their deadline or no longer running, the second line behind each container's own watchdog.
"""

from __future__ import annotations

import contextlib
import time
from datetime import datetime
from typing import Any

from config import env
from runner.backend import HarnessError
from runner.spec import KILL_GRACE_ENV

# Labels let an operator (or a reaper) find mleboard's containers on a host.
LABEL_RUN = "org.mleboard.run"
LABEL_COMPETITION = "org.mleboard.competition"
LABEL_AGENT = "org.mleboard.agent"
# Which installation started it ($MLEBOARD_INSTANCE): a reaper removes only its own.
LABEL_INSTANCE = "org.mleboard.instance"
INSTANCE_ENV = "MLEBOARD_INSTANCE"
# Epoch seconds: when the time limit ends, and when the container's watchdog ends it all.
LABEL_DEADLINE = "org.mleboard.deadline"
LABEL_KILL_AFTER = "org.mleboard.kill-after"


def own_labels() -> dict[str, str]:
    """The labels every run container of this installation (``$MLEBOARD_INSTANCE``) has."""
    return {LABEL_RUN: "1", LABEL_INSTANCE: env(INSTANCE_ENV)}


def own_containers_filter(labels: dict[str, str] | None = None) -> dict[str, list[str]]:
    """A ``containers.list`` filter for this installation's run containers, narrowed by
    ``labels``."""
    wanted = {**own_labels(), **(labels or {})}
    return {"label": [f"{key}={value}" for key, value in wanted.items()]}


def reap_expired(
    client: Any = None, *, now: float | None = None, grace_s: float | None = None, dry_run=False
) -> list[dict[str, Any]]:
    """Remove mleboard run containers that should no longer exist: running past their
    ``org.mleboard.kill-after`` label (or ``deadline`` + ``grace_s``, default
    ``$MLEBOARD_RUN_KILL_GRACE_S``), or not running (exited, or created and never started
    for a minute). Only this installation's (``$MLEBOARD_INSTANCE``): another site's
    containers on the same engine are its own reaper's business. The second line behind
    each container's own watchdog, for ``mleboard reap`` and the site's sweeper. Returns
    what was (or, ``dry_run``, would be) removed."""
    import docker
    import docker.errors

    client = client or docker.from_env()
    now = time.time() if now is None else now
    grace = env(KILL_GRACE_ENV) if grace_s is None else grace_s
    removed = []
    # Sparse: read from the list alone, so a container removed meanwhile (by its own
    # watchdog, another reaper) is not an error of the whole reap.
    for container in client.containers.list(all=True, sparse=True, filters=own_containers_filter()):
        labels = container.attrs.get("Labels") or {}
        status = container.status
        why = ""
        kill_after = _label_time(labels, LABEL_KILL_AFTER)
        deadline = _label_time(labels, LABEL_DEADLINE)
        if kill_after is None and deadline is not None:
            kill_after = deadline + grace
        if kill_after is not None and now >= kill_after:
            why = f"past its deadline ({now - kill_after:.0f}s after it should have ended)"
        elif status in ("exited", "dead"):
            why = f"{status}"
        elif status == "created":
            created = container.attrs.get("Created")
            created = created if isinstance(created, int | float) else parse_docker_time(created)
            if created is not None and now - created > 60:
                why = "created but never started"
        if not why:
            continue
        name = container.name or (container.attrs.get("Names") or [""])[0].lstrip("/")
        removed.append({"name": name, "status": status, "reason": why})
        if not dry_run:
            with contextlib.suppress(docker.errors.NotFound):
                remove_container(container)
    return removed


def _label_time(labels: dict[str, str], key: str) -> float | None:
    try:
        return float(labels[key])
    except (KeyError, ValueError):
        return None


def parse_docker_time(text: str | None) -> float | None:
    """Return an engine timestamp (RFC 3339, nanoseconds) as an epoch, ``None`` if unset."""
    if not text or text.startswith("0001-01-01"):
        return None
    stamp = text.rstrip("Z")
    offset = "+00:00"
    for sign in ("+", "-"):
        head, sep, tail = stamp.rpartition(sign)
        if sep and "T" in head and ":" in tail and len(tail) == 5:
            stamp, offset = head, sign + tail
            break
    if "." in stamp:
        whole, frac = stamp.split(".", 1)
        stamp = f"{whole}.{frac[:6].ljust(6, '0')}"
    return datetime.fromisoformat(stamp + offset).timestamp()


def remove_run_container(name: str, client: Any = None) -> bool:
    """Kill and remove the run container called ``name`` (for a reaper or a cancel issued
    from another process). Returns ``False`` if no such container exists."""
    import docker
    import docker.errors

    client = client or docker.from_env()
    try:
        container = client.containers.get(name)
    except docker.errors.NotFound:
        return False
    if container.labels.get(LABEL_RUN) != "1":
        raise HarnessError(f"{name} is not an mleboard run container")
    remove_container(container)
    return True


def remove_container(container: Any, attempts: int = 5) -> None:
    """Kill and remove ``container``; a container already gone is fine."""
    import docker.errors

    for attempt in range(attempts):
        try:
            container.remove(force=True, v=True)
            return
        except docker.errors.NotFound:
            return
        except docker.errors.APIError as exc:
            if exc.status_code == 409 and "already in progress" in str(exc):
                return  # auto-removal is under way
            # A busy engine: try again shortly.
            if attempt == attempts - 1:
                raise
            time.sleep(0.5 * (attempt + 1))
