"""Run an agent in a Docker container, with the limits enforced by the engine and the kernel.

The agent sees its data read-only, writes only to size-capped in-memory file systems under
a read-only root, has no network unless granted egress (a model endpoint only through
``runner.llm_bridge``), runs under ``runner/seccomp.json`` with ``no-new-privileges``, and
as an unprivileged uid with no capabilities beside a root watchdog (``docker-init`` and a
``sleep`` of the time limit): the deadline holds with no mleboard process alive, and
``runner.reaper`` finds a container past it by its labels. The harness kills the agent at
the time limit first, copies the outputs out (``runner.outputs``) and removes the
container; ``out_of_memory`` comes from the engine, never from an exit code.
The container's layout and privileges in full: docs/agents.md.
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
import uuid
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from runner.agent_definition import AGENT_BASE_URL_ENV
from runner.backend import (
    BackendResult,
    HarnessError,
    RunControl,
    agent_env,
    supervise,
)
from runner.docker_exec import OUTPUT_ROOTS, ContainerAgent, agent_ids
from runner.llm_bridge import CONTAINER_LLM_DIR, HostBridge, container_base_url, forwarder_command
from runner.logs import LogSink
from runner.reaper import (
    LABEL_AGENT,
    LABEL_COMPETITION,
    LABEL_DEADLINE,
    LABEL_KILL_AFTER,
    own_labels,
    remove_container,
)
from runner.spec import (
    CONTAINER_AGENT_DIR,
    CONTAINER_CODE_DIR,
    CONTAINER_DATA_DIR,
    CONTAINER_HOME_DIR,
    CONTAINER_INSTRUCTIONS,
    CONTAINER_LOGS_DIR,
    CONTAINER_SCRATCH_DIR,
    CONTAINER_SUBMISSION_DIR,
    CONTAINER_VALIDATE_SCRIPT,
    CONTAINER_VALIDATION_DIR,
    VALIDATION_SOCKET_NAME,
    Outcome,
    RunDirs,
    RunSpec,
)

# The only capabilities left: what ``setpriv`` needs to become the agent's user and drop
# the bounding set. The agent itself has none.
CONTAINER_CAPS = ["SETUID", "SETGID", "SETPCAP"]
SECCOMP_PROFILE = "seccomp.json"


def container_env(spec: RunSpec) -> dict[str, str]:
    """The environment inside the container: the spec's plus where everything is (and, for
    an agent with a model endpoint, the bridge's end as ``OPENAI_BASE_URL``)."""
    env = agent_env(
        spec,
        data=CONTAINER_DATA_DIR,
        submission=CONTAINER_SUBMISSION_DIR,
        logs=CONTAINER_LOGS_DIR,
        code=CONTAINER_CODE_DIR,
        agent=CONTAINER_AGENT_DIR,
        instructions=CONTAINER_INSTRUCTIONS,
        validate_script=CONTAINER_VALIDATE_SCRIPT,
        validation_socket=f"{CONTAINER_VALIDATION_DIR}/{VALIDATION_SOCKET_NAME}",
        home=CONTAINER_HOME_DIR,
    )
    if spec.llm_base_url:
        env[AGENT_BASE_URL_ENV] = container_base_url(spec.llm_base_url)
        env["MLEBOARD_LLM_FORWARDER"] = " ".join(forwarder_command())
    return env


@functools.cache
def seccomp_profile() -> str:
    """The seccomp profile (``runner/seccomp.json``) as the compact JSON the engine takes."""
    text = resources.files("runner").joinpath(SECCOMP_PROFILE).read_text()
    return json.dumps(json.loads(text), separators=(",", ":"))


def watchdog_seconds(spec: RunSpec) -> int | None:
    """How long the container may live: the time limit plus the kill grace (``None``: no
    limit). The harness collects the outputs within the grace."""
    if spec.time_limit_s is None:
        return None
    return int(spec.time_limit_s + spec.kill_grace_s) + 1


def container_kwargs(
    spec: RunSpec, dirs: RunDirs, now: float | None = None, llm_dir: Path | None = None
) -> dict[str, Any]:
    """The keyword arguments for ``client.containers.create`` (pure: testable without an
    engine). ``llm_dir``: the model bridge's folder (``runner.llm_bridge``), mounted
    read-only at ``/home/llm``."""
    from docker.types import DeviceRequest, LogConfig, Mount

    def bind(source: Path, target: str) -> Mount:
        return Mount(target=target, source=str(source), type="bind", read_only=True)

    uid, gid = agent_ids(spec)
    now = time.time() if now is None else now
    mounts = [
        bind(dirs.data, CONTAINER_DATA_DIR),
        bind(dirs.support / "instructions.txt", CONTAINER_INSTRUCTIONS),
        bind(dirs.support / "validate_submission.sh", CONTAINER_VALIDATE_SCRIPT),
        bind(dirs.validation, CONTAINER_VALIDATION_DIR),
    ]
    if llm_dir is not None:
        mounts.append(bind(llm_dir, CONTAINER_LLM_DIR))
    if spec.obfuscated_description is not None:
        # Over the public folder's own description, inside the same read-only mount.
        mounts.insert(1, bind(dirs.description_override, f"{CONTAINER_DATA_DIR}/description.md"))
    outputs = f"rw,nosuid,nodev,size={spec.output_max_bytes},uid={uid},gid={gid},mode=0755"
    tmpfs = {path: outputs for _, path in OUTPUT_ROOTS}
    tmpfs[CONTAINER_SCRATCH_DIR] = f"rw,nosuid,nodev,size={spec.scratch_bytes},mode=1777"
    labels = {
        **own_labels(),
        LABEL_COMPETITION: spec.competition_id,
        LABEL_AGENT: spec.agent_name,
    }
    lifetime = watchdog_seconds(spec)
    if lifetime is not None and spec.time_limit_s is not None:
        labels[LABEL_DEADLINE] = str(int(now + spec.time_limit_s))
        labels[LABEL_KILL_AFTER] = str(int(now + lifetime))
    res = spec.resources
    kwargs: dict[str, Any] = {
        "image": spec.image,
        # The watchdog: the agent is started beside it with ``docker exec``.
        "entrypoint": ["sleep"],
        "command": ["infinity" if lifetime is None else str(lifetime)],
        "name": f"mleboard-{spec.competition_id}-{spec.seed}-{uuid.uuid4().hex[:8]}",
        "hostname": "agent",
        "user": "0:0",
        "working_dir": "/",
        "environment": container_env(spec),
        "detach": True,
        # docker-init as PID 1 reaps zombies; when its child (the watchdog) ends, it ends.
        "init": True,
        "auto_remove": True,
        "read_only": True,
        "tmpfs": tmpfs,
        "network_mode": spec.network.egress_network if spec.network.egress else "none",
        "cap_drop": ["ALL"],
        "cap_add": list(CONTAINER_CAPS),
        "security_opt": ["no-new-privileges", f"seccomp={seccomp_profile()}"],
        "mounts": mounts,
        "labels": labels,
        # The engine's own copy of the output is bounded too; ours is the LogSink.
        "log_config": LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}),
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


def check_egress(client: Any, spec: RunSpec) -> None:
    """Raise ``HarnessError`` (the run does not start) when the spec grants egress and the
    engine has no usable network by that name: missing (an engine started with
    ``--bridge=none`` has no ``bridge``), without addresses, internal, ``none`` or ``host``."""
    import docker.errors

    if not spec.network.egress:
        return
    name = spec.network.egress_network
    try:
        network = client.networks.get(name)
    except docker.errors.NotFound:
        raise HarnessError(
            f"the agent is granted egress but the engine has no network {name!r} (is dockerd "
            "running with --bridge=none?): the run was not started"
        ) from None
    except docker.errors.APIError as exc:
        raise HarnessError(f"could not look up network {name!r}: {exc}") from exc
    attrs = network.attrs or {}
    driver = attrs.get("Driver")
    configs = (attrs.get("IPAM") or {}).get("Config") or []
    problem = ""
    if driver in ("null", "host"):
        problem = f"its driver is {driver!r}"
    elif attrs.get("Internal"):
        problem = "it is internal (no route out)"
    elif not configs:
        problem = "it has no addresses"
    if problem:
        raise HarnessError(
            f"the agent is granted egress but network {name!r} cannot give it: {problem}; "
            "the run was not started"
        )


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
        """Run the agent to its end, then collect its outputs; see ``runner.backend.Backend``."""
        client = self.client
        check_egress(client, spec)
        with contextlib.ExitStack() as stack:
            # The model endpoint through a unix socket (the container has no network); an
            # endpoint that does not answer stops the run here, before any container.
            bridge = (
                stack.enter_context(HostBridge(spec.llm_base_url)) if spec.llm_base_url else None
            )
            kwargs = container_kwargs(spec, dirs, llm_dir=bridge.directory if bridge else None)
            if bridge is None:
                return self._run(client, kwargs, spec, dirs, control, sink)
            try:
                result = self._run(client, kwargs, spec, dirs, control, sink)
            finally:
                control.llm_usage = bridge.usage()
            result.llm_usage = control.llm_usage
            return result

    def _run(self, client, kwargs, spec, dirs, control, sink) -> BackendResult:
        create_requested_at = time.time()
        with managed_container(client, **kwargs) as container:
            container.start()
            agent = ContainerAgent(client, container, spec)
            agent.start()
            started_at = time.time()
            stop = supervise(
                spec,
                control,
                sink,
                agent_id=container.name,
                what="container",
                read_output=agent.output,
                wait=agent.wait,
                kill=agent.kill,
                # What the agent left running goes too (the container stays for collection).
                kill_after_exit=True,
                fetch_submission=agent.fetch_submission,
            )
            result = BackendResult(
                outcome=Outcome.COMPLETED,
                exit_code=None,
                create_requested_at=create_requested_at,
                started_at=started_at,
                exited_at=stop.exited_at,
            )
            if agent.gone:
                raise HarnessError("the container was removed from outside the harness")
            if agent.container_killed:
                # The agent's processes could not be killed alone (say, it used up its
                # process limit): the container went with them, and its outputs too.
                result = stop.conclude(
                    result, spec, sink, lambda code: _interpret_exit(code, False)
                )
                result.detail = _join(result.detail, "the container had to be killed: outputs lost")
                return result
            oom = _oom_killed(client, container, create_requested_at, stop.status)
            result = stop.conclude(result, spec, sink, lambda code: _interpret_exit(code, oom))
            exceeded, limit, problem = agent.collect(dirs)
            if exceeded:
                result.outputs_limit = result.outputs_limit or limit
                result.outputs_exceeded = _join(result.outputs_exceeded, exceeded)
                sink.write_line(exceeded)
            result.detail = _join(result.detail, problem)
            return result


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _oom_killed(client: Any, container: Any, since: float, exit_code: Any) -> bool:
    """Whether the engine says the container's memory limit killed a process: its state's
    ``OOMKilled`` (set by some engines only once the container exits) or an ``oom`` event
    for the container since ``since``. Raises ``HarnessError`` if the container is gone
    (removed from outside the harness)."""
    import docker.errors

    # The engine learns of an OOM kill by an event that may come just after the exit.
    checks = 10 if exit_code == 137 else 1
    for attempt in range(checks):
        try:
            container.reload()
        except docker.errors.NotFound as exc:
            raise HarnessError("the container was removed from outside the harness") from exc
        state = container.attrs.get("State", {})
        if state.get("RemovalInProgress") or state.get("Dead"):
            raise HarnessError("the container was removed from outside the harness")
        if state.get("OOMKilled"):
            return True
        events = client.events(
            since=since - 1,
            until=time.time(),
            filters={"type": "container", "container": container.id, "event": "oom"},
            decode=True,
        )
        try:
            if any(
                event.get("status") == "oom" or event.get("Action") == "oom" for event in events
            ):
                return True
        finally:
            events.close()
        if attempt < checks - 1:
            time.sleep(0.1)
    return False


def _interpret_exit(code: int, oom: bool) -> tuple[int, Outcome, str]:
    """Exit code, outcome and detail for an agent that exited with ``code``; ``oom`` is the
    engine's word (an exit code of 137 alone is only a SIGKILL, from anyone)."""
    if oom and code != 0:
        return code, Outcome.OUT_OF_MEMORY, f"killed by the out-of-memory killer (exit {code})"
    if code == 0:
        return code, Outcome.COMPLETED, ""
    if code > 128:
        return code, Outcome.FAILED, f"exit code {code} (killed by signal {code - 128})"
    return code, Outcome.FAILED, f"exit code {code}"
