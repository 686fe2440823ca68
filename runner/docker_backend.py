"""Run an agent in a Docker container, with the limits enforced by the engine.

The container gets: the competition's public data read-only at ``/home/data``, empty
writable ``/home/submission``, ``/home/logs`` and ``/home/code`` (host folders), the
instructions file and the validation client (read-only), and the folder holding the
validation service's socket. It runs as a non-root user with every capability dropped and
``no-new-privileges``, under ``mem_limit``/``nano_cpus``/``pids_limit``/``shm_size``, with no
network unless the spec grants egress. The private answers are never mounted.

The container is created and removed by ``managed_container``: it is removed whatever
happens (exit, time-out, cancel, an exception in the harness).
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from runner.backend import BackendResult, HarnessError, RunControl, agent_env, supervise
from runner.logs import LogSink
from runner.spec import (
    CONTAINER_AGENT_DIR,
    CONTAINER_CODE_DIR,
    CONTAINER_DATA_DIR,
    CONTAINER_INSTRUCTIONS,
    CONTAINER_LOGS_DIR,
    CONTAINER_SUBMISSION_DIR,
    CONTAINER_VALIDATE_SCRIPT,
    CONTAINER_VALIDATION_DIR,
    VALIDATION_SOCKET_NAME,
    Outcome,
    RunDirs,
    RunSpec,
)

# Labels let an operator (or a reaper) find mleboard's containers on a host.
LABEL_RUN = "org.mleboard.run"
LABEL_COMPETITION = "org.mleboard.competition"
LABEL_AGENT = "org.mleboard.agent"

# SIGKILL: 128 + 9. Under a memory limit the kernel's OOM killer sends it.
EXIT_SIGKILL = 137


def container_env(spec: RunSpec) -> dict[str, str]:
    """The environment inside the container: the spec's plus where everything is."""
    return agent_env(
        spec,
        data=CONTAINER_DATA_DIR,
        submission=CONTAINER_SUBMISSION_DIR,
        logs=CONTAINER_LOGS_DIR,
        code=CONTAINER_CODE_DIR,
        agent=CONTAINER_AGENT_DIR,
        instructions=CONTAINER_INSTRUCTIONS,
        validate_script=CONTAINER_VALIDATE_SCRIPT,
        validation_socket=f"{CONTAINER_VALIDATION_DIR}/{VALIDATION_SOCKET_NAME}",
        home=CONTAINER_AGENT_DIR,
    )


def container_kwargs(spec: RunSpec, dirs: RunDirs) -> dict[str, Any]:
    """The keyword arguments for ``client.containers.create`` (pure: testable without an engine)."""
    from docker.types import DeviceRequest, LogConfig, Mount

    def bind(source: os.PathLike, target: str, read_only: bool) -> Mount:
        return Mount(target=target, source=str(source), type="bind", read_only=read_only)

    mounts = [
        bind(dirs.data, CONTAINER_DATA_DIR, True),
        bind(dirs.submission, CONTAINER_SUBMISSION_DIR, False),
        bind(dirs.logs, CONTAINER_LOGS_DIR, False),
        bind(dirs.code, CONTAINER_CODE_DIR, False),
        bind(dirs.support / "instructions.txt", CONTAINER_INSTRUCTIONS, True),
        bind(dirs.support / "validate_submission.sh", CONTAINER_VALIDATE_SCRIPT, True),
        bind(dirs.validation, CONTAINER_VALIDATION_DIR, True),
    ]
    res = spec.resources
    kwargs: dict[str, Any] = {
        "image": spec.image,
        "command": list(spec.command),
        "name": f"mleboard-{spec.competition_id}-{spec.seed}-{uuid.uuid4().hex[:8]}",
        "hostname": "agent",
        "user": spec.user,
        "working_dir": spec.workdir,
        "environment": container_env(spec),
        "detach": True,
        # docker-init as PID 1 reaps zombies and passes signals on to the agent.
        "init": True,
        "network_mode": spec.network.egress_network if spec.network.egress else "none",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "mounts": mounts,
        "labels": {
            LABEL_RUN: "1",
            LABEL_COMPETITION: spec.competition_id,
            LABEL_AGENT: spec.agent_name,
        },
        # The engine's own copy of the output is bounded too; ours is the LogSink.
        "log_config": LogConfig(type="json-file", config={"max-size": "20m", "max-file": "1"}),
    }
    if res.memory is not None:
        kwargs["mem_limit"] = res.memory
        kwargs["memswap_limit"] = res.memory  # no swap beyond the limit
    if res.cpus is not None:
        kwargs["nano_cpus"] = int(res.cpus * 1e9)
    if res.pids is not None:
        kwargs["pids_limit"] = res.pids
    if res.shm is not None:
        kwargs["shm_size"] = res.shm
    if res.gpus:
        request = (
            DeviceRequest(device_ids=list(res.gpu_ids), capabilities=[["gpu"]])
            if res.gpu_ids
            else DeviceRequest(count=res.gpus, capabilities=[["gpu"]])
        )
        kwargs["device_requests"] = [request]
    return kwargs


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


@contextlib.contextmanager
def managed_container(client: Any, **kwargs: Any) -> Iterator[Any]:
    """Create a container and yield it; remove it (forcefully) on the way out, always."""
    import docker.errors

    try:
        container = client.containers.create(**kwargs)
    except docker.errors.ImageNotFound as exc:
        raise HarnessError(
            f"image {kwargs.get('image')!r} not found on this engine; build it with `mleboard images`"
        ) from exc
    except docker.errors.APIError as exc:
        raise HarnessError(f"the engine refused the container: {exc.explanation or exc}") from exc
    try:
        yield container
    finally:
        remove_container(container)


def remove_container(container: Any, attempts: int = 5) -> None:
    """Kill and remove ``container``; a container already gone is fine."""
    import docker.errors

    for attempt in range(attempts):
        try:
            container.remove(force=True, v=True)
            return
        except docker.errors.NotFound:
            return
        except docker.errors.APIError:
            # "removal already in progress" or a busy engine: try again shortly.
            if attempt == attempts - 1:
                raise
            time.sleep(0.5 * (attempt + 1))


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


class DockerBackend:
    """Runs agents on a Docker engine (the client from the environment unless given)."""

    name = "docker"

    def __init__(self, client: Any = None) -> None:
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import docker

            try:
                self._client = docker.from_env()
                self._client.ping()
            except Exception as exc:  # the SDK raises several types for "no engine"
                self._client = None
                raise HarnessError(f"no Docker engine reachable: {exc}") from exc
        return self._client

    def run(
        self, spec: RunSpec, dirs: RunDirs, control: RunControl, sink: LogSink
    ) -> BackendResult:
        """Run the container to its end; see ``runner.backend.Backend``."""
        kwargs = container_kwargs(spec, dirs)
        client = self.client
        create_requested_at = time.time()
        with managed_container(client, **kwargs) as container:
            container.start()
            stop = supervise(
                spec,
                control,
                sink,
                agent_id=container.name,
                what="container",
                read_output=lambda: container.logs(
                    stream=True, follow=True, stdout=True, stderr=True
                ),
                wait=container.wait,
                kill=lambda: _kill(container),
            )
            state = _final_state(container)
            result = BackendResult(
                outcome=Outcome.COMPLETED,
                exit_code=None,
                create_requested_at=create_requested_at,
                started_at=parse_docker_time(state.get("StartedAt")),
                exited_at=parse_docker_time(state.get("FinishedAt")),
            )
            return stop.conclude(
                result, spec, sink, lambda status: _interpret_exit(status, state, spec)
            )


def _final_state(container: Any) -> dict:
    """The container's state after exit. Raises ``HarnessError`` if someone else removed it
    (a reaper, an operator): its exit code then says nothing about the agent."""
    import docker.errors

    try:
        container.reload()
    except docker.errors.NotFound as exc:
        raise HarnessError("the container was removed from outside the harness") from exc
    state = container.attrs.get("State", {})
    if state.get("RemovalInProgress") or state.get("Dead"):
        raise HarnessError("the container was removed from outside the harness")
    return state


def _interpret_exit(status: dict, state: dict, spec: RunSpec) -> tuple[int, Outcome, str]:
    """Exit code, outcome and detail for a container that exited: ``status`` is what
    ``container.wait()`` returned, ``state`` the container's final state."""
    code = int(state.get("ExitCode", status.get("StatusCode", -1)))
    if state.get("OOMKilled"):
        return code, Outcome.OUT_OF_MEMORY, f"killed by the out-of-memory killer (exit {code})"
    if code == EXIT_SIGKILL and spec.resources.memory is not None:
        # With a memory limit, an unexplained SIGKILL is the kernel's OOM killer hitting a
        # child process: the engine only flags OOMKilled for some of those.
        return code, Outcome.OUT_OF_MEMORY, f"exit {code} (SIGKILL) under a memory limit"
    if code == 0:
        return code, Outcome.COMPLETED, ""
    return code, Outcome.FAILED, f"exit code {code}"


def _kill(container: Any) -> None:
    import docker.errors

    with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
        container.kill()
