"""Run an agent in a Docker container, with the limits enforced by the engine and the kernel.

The container, what the agent sees:

- the competition's public data read-only at ``/home/data``, the instructions and the
  validation client (read-only), the folder holding the validation service's socket;
- ``/home/submission``, ``/home/logs`` and ``/home/code`` on in-memory file systems
  (tmpfs) of ``RunSpec.output_max_bytes`` each, ``/tmp`` (holding ``$HOME``) of
  ``RunSpec.scratch_bytes``, and a read-only root file system: the agent writes nothing
  to the host's disk, and what it writes counts against its memory limit;
- no network unless the spec grants egress (and then only if the engine has a usable
  network by that name: otherwise the run does not start); an agent with a model endpoint
  (``RunSpec.llm_base_url``) reaches it, and only it, through a unix socket mounted at
  ``/home/llm`` and a forwarder on the container's own loopback (``runner.llm_bridge``);
- a seccomp profile (``runner/seccomp.json``, in place of Docker's default one): it
  allows by default and refuses, by name, kernel keyrings, BPF, userfaultfd, perf,
  io_uring, ptrace and reading other processes' memory, mounts, new namespaces (unshare,
  setns, clone flags; clone3 answers ENOSYS so that the C library falls back to clone),
  modules, kexec, file handles, clocks, swap, reboot, and every socket family but
  AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK (EAFNOSUPPORT); ``no-new-privileges``;
- ``mem_limit``/``nano_cpus``/``pids_limit``/``shm_size``.

Who runs what. PID 1 is the engine's ``docker-init`` and its only child is ``sleep
<time limit + kill grace>``, both root: when the sleep ends, init exits and the kernel
kills everything in the container, which the engine then removes (``auto_remove``). That
is the time limit's last line, and it holds with no mleboard process alive. The agent is
started by the harness with ``docker exec`` as uid:gid ``RunSpec.user`` (59999 by
default, an id no account uses) through ``setpriv``, with every capability gone (bounding
set included): it cannot signal the root processes, so it cannot end or extend the
container's life. The container keeps only CAP_SETUID, CAP_SETGID and CAP_SETPCAP, which
``setpriv`` needs. The deadline is also in the labels (``org.mleboard.deadline``,
``org.mleboard.kill-after``, epoch seconds) so that ``reap_expired`` (``mleboard reap``,
the site's sweeper) removes a container its watchdog failed to end: the watchdog runs the
image's ``sleep``, which the agent's image could replace.

The harness enforces the time limit itself first: it kills the agent's processes (a
``kill -9 -1`` as the agent's user), copies the outputs out (``runner.outputs``, as the
agent's user, bounded, links never followed), then removes the container. Snapshots are
copied the same way while the agent runs. Outcomes come from the engine:
``out_of_memory`` only when it says so (the container's ``OOMKilled`` state or an ``oom``
event for it), never from an exit code (137 is any SIGKILL).
"""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from config import env
from runner.agent_definition import AGENT_BASE_URL_ENV
from runner.backend import (
    BackendResult,
    Fetched,
    HarnessError,
    RunControl,
    agent_env,
    supervise,
)
from runner.llm_bridge import CONTAINER_LLM_DIR, HostBridge, container_base_url, forwarder_command
from runner.logs import LogSink
from runner.outputs import COLLECTOR, Received, describe_exceeded, receive
from runner.spec import (
    CODE_DIR,
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
    KILL_GRACE_ENV,
    LOGS_DIR,
    OUTPUT_MAX_ENTRIES,
    SUBMISSION_DIR,
    SUBMISSION_FILENAME,
    VALIDATION_SOCKET_NAME,
    Outcome,
    RunDirs,
    RunSpec,
)

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

# The only capabilities left: what ``setpriv`` needs to become the agent's user and drop
# the bounding set. The agent itself has none.
CONTAINER_CAPS = ["SETUID", "SETGID", "SETPCAP"]
SECCOMP_PROFILE = "seccomp.json"
# Output roots, in the order they get the byte budget.
OUTPUT_ROOTS = (
    (SUBMISSION_DIR, CONTAINER_SUBMISSION_DIR),
    (CODE_DIR, CONTAINER_CODE_DIR),
    (LOGS_DIR, CONTAINER_LOGS_DIR),
)
# Kills every process of the agent's user (it runs as that user; kill(-1) spares itself),
# until none is left (kill(-1) itself succeeds while any other process exists, even one it
# may not signal): $1 is the uid.
_KILL_ALL = (
    'n=0; while [ "$n" -lt 100 ]; do kill -9 -1 2>/dev/null; left=""; '
    'for s in /proc/[0-9]*/status; do [ "$s" = "/proc/$$/status" ] && continue; '
    'grep -q "^Uid:[[:space:]]*$1[[:space:]]" "$s" 2>/dev/null && left=1 && break; done; '
    '[ -z "$left" ] && exit 0; n=$((n+1)); sleep 0.05; done; exit 1'
)
# Make $HOME (on the scratch tmpfs), start the model bridge's forwarder when the agent has
# one (``runner.llm_bridge``; it returns once listening), then become the agent's command.
_START = (
    'mkdir -p "$HOME" 2>/dev/null; '
    'if [ -n "${MLEBOARD_LLM_FORWARDER:-}" ]; then $MLEBOARD_LLM_FORWARDER '
    '|| { echo "the model bridge did not start" >&2; exit 97; }; fi; exec "$@"'
)
_POLL_S = 0.1
# Reading the outputs: this long at least, plus the time the bytes take at a slow pace.
_COLLECT_MIN_S = 60.0
_COLLECT_BYTES_PER_S = 32 * 1024**2


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


def agent_ids(spec: RunSpec) -> tuple[int, int]:
    """The agent's numeric (uid, gid) from ``spec.user``; root is refused."""
    uid, _, gid = spec.user.partition(":")
    gid = gid or uid
    if not (uid.isascii() and uid.isdigit() and gid.isascii() and gid.isdigit()):
        raise HarnessError(f"the agent's user must be numeric uid:gid, got {spec.user!r}")
    if int(uid) == 0 or int(gid) == 0:
        raise HarnessError("the agent may not run as root (uid or gid 0)")
    return int(uid), int(gid)


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


def as_agent(uid: int, gid: int, command: list[str]) -> list[str]:
    """``command`` run as uid:gid with no capabilities left at all (run from root)."""
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
        *command,
    ]


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
        except docker.errors.APIError as exc:
            if exc.status_code == 409 and "already in progress" in str(exc):
                return  # auto-removal is under way
            # A busy engine: try again shortly.
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
    for container in client.containers.list(all=True, filters=own_containers_filter()):
        labels = container.labels or {}
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
        removed.append({"name": container.name, "status": status, "reason": why})
        if not dry_run:
            with contextlib.suppress(docker.errors.NotFound):
                remove_container(container)
    return removed


def _label_time(labels: dict[str, str], key: str) -> float | None:
    try:
        return float(labels[key])
    except (KeyError, ValueError):
        return None


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


class _Agent:
    """The agent's process in the container (a ``docker exec``) and what acts on it."""

    def __init__(self, client: Any, container: Any, spec: RunSpec) -> None:
        self.client = client
        self.container = container
        self.spec = spec
        self.uid, self.gid = agent_ids(spec)
        self.exec_id = ""
        self.stream: _ExecStream | None = None
        self.container_killed = False
        self.gone = False  # the container ended or went, not by the harness's hand

    def start(self) -> None:
        import docker.errors

        command = as_agent(self.uid, self.gid, ["sh", "-c", _START, "agent", *self.spec.command])
        try:
            self.exec_id = self.client.api.exec_create(
                self.container.id,
                command,
                stdout=True,
                stderr=True,
                user="0:0",
                workdir=self.spec.workdir,
            )["Id"]
            self.stream = _ExecStream(self.client.api, self.exec_id)
        except docker.errors.APIError as exc:
            raise HarnessError(f"could not start the agent: {exc.explanation or exc}") from exc

    def output(self) -> Iterator[bytes]:
        try:
            for _stream, data in self.stream.frames():
                yield data
        finally:
            self.stream.close()

    def wait(self) -> int:
        """Block until the agent's process exits; its exit code (128+N for signal N)."""
        import docker.errors

        try:
            code = _exec_exit_code(self.client.api, self.exec_id, None)
        except docker.errors.NotFound:
            raise HarnessError("the container was removed from outside the harness") from None
        if code is None:
            raise HarnessError("the agent's process never started")
        return code

    def kill(self) -> None:
        """Kill every process of the agent's user, keeping the container (and the outputs
        in it); if that cannot be done, kill the container."""
        import docker.errors

        try:
            done = self.client.api.exec_create(
                self.container.id,
                as_agent(self.uid, self.gid, ["sh", "-c", _KILL_ALL, "kill", str(self.uid)]),
                user="0:0",
            )
            self.client.api.exec_start(done["Id"])
            if _exec_exit_code(self.client.api, done["Id"], 10.0) == 0:
                return
        except docker.errors.NotFound:
            self.gone = True
            return
        except docker.errors.APIError:
            pass
        try:
            self.container.reload()
        except docker.errors.NotFound:
            self.gone = True
            return
        if self.container.status != "running":
            self.gone = True
            return
        self.container_killed = True
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            self.container.kill()

    def run_collector(self, config: dict, roots: dict[str, Path], timeout_s: float) -> Received:
        """Run ``COLLECTOR`` as the agent's user and write what it sends under ``roots``."""
        import docker.errors

        command = as_agent(self.uid, self.gid, ["python3", "-c", COLLECTOR, json.dumps(config)])
        try:
            exec_id = self.client.api.exec_create(
                self.container.id, command, stdout=True, stderr=True, user="0:0"
            )["Id"]
            stream = _ExecStream(self.client.api, exec_id)
        except docker.errors.NotFound:
            return Received(error="the container is gone")
        except docker.errors.APIError as exc:
            return Received(error=f"could not start the collector: {exc.explanation or exc}")
        errors = bytearray()
        # Bounded in time whatever the collector does: the stream is cut at the end.
        timer = threading.Timer(timeout_s, stream.close)
        timer.daemon = True
        timer.start()

        def stdout() -> Iterator[bytes]:
            for kind, data in stream.frames():
                if kind == 1:
                    yield data
                elif len(errors) < 4096:
                    errors.extend(data[: 4096 - len(errors)])

        try:
            got = receive(
                stdout(),
                roots,
                budget=config["budget"],
                caps=config["caps"],
                max_entries=config["max_entries"],
            )
        finally:
            timer.cancel()
            stream.close()
        if not got.error:
            with contextlib.suppress(docker.errors.APIError):
                code = self.client.api.exec_inspect(exec_id).get("ExitCode")
                if code not in (0, None):
                    message = errors.decode(errors="replace").strip()[-300:]
                    got.error = f"the collector exited with code {code}: {message}"
        return got

    def fetch_submission(self, target: Path, max_bytes: int) -> Fetched:
        """Copy the submission out (a snapshot), reading at most ``max_bytes``."""
        name = SUBMISSION_FILENAME
        config = {
            "roots": [[name, f"{CONTAINER_SUBMISSION_DIR}/{name}"]],
            "budget": max_bytes,
            "caps": {name: max_bytes},
            "max_entries": 1,
        }
        got = self.run_collector(config, {name: target}, _collect_timeout(max_bytes))
        if got.files == 1 and not got.error:
            return Fetched(copied=True, size=got.bytes)
        for skipped, size, reason in got.skipped:
            if skipped == name and reason == "too large":
                return Fetched(copied=False, size=size, too_large=True, reason=reason)
        return Fetched(copied=False, reason=got.error or "no submission")

    def collect(self, dirs: RunDirs) -> tuple[str, int, str]:
        """Copy the outputs to ``dirs``; returns what went over a limit, that limit, and
        any other problem."""
        spec = self.spec
        submission = f"submission/{SUBMISSION_FILENAME}"
        config = {
            "roots": [list(root) for root in OUTPUT_ROOTS],
            "budget": spec.output_max_bytes,
            "caps": {submission: spec.submission_max_bytes},
            "max_entries": OUTPUT_MAX_ENTRIES,
        }
        roots = {SUBMISSION_DIR: dirs.submission, CODE_DIR: dirs.code, LOGS_DIR: dirs.logs}
        got = self.run_collector(config, roots, _collect_timeout(spec.output_max_bytes))
        exceeded, limit = "", spec.output_max_bytes
        over = got.too_large()
        if over:
            if all(name == submission for name, _, _ in over):
                limit = min(spec.submission_max_bytes, spec.output_max_bytes)
            exceeded = describe_exceeded(over, limit)
        problem = f"outputs not fully collected: {got.error}" if got.error else ""
        return exceeded, limit, problem


class _ExecStream:
    """The output of a started ``docker exec``, read as (stream, bytes) frames.

    Read through the HTTP response's own buffered reader (bytes that arrived with the
    response's headers are not lost), with no read timeout (an agent may be silent for
    hours); ``close`` (from any thread) ends the reading.
    """

    def __init__(self, api: Any, exec_id: str) -> None:
        response = api._post_json(
            api._url("/exec/{0}/start", exec_id),
            headers={"Connection": "Upgrade", "Upgrade": "tcp"},
            data={"Tty": False, "Detach": False},
            stream=True,
        )
        api._raise_for_status(response)
        self._response = response
        self._file = response.raw._fp.fp
        self._socket = getattr(self._file.raw, "_sock", None)
        if self._socket is not None:
            self._socket.settimeout(None)

    def frames(self) -> Iterator[tuple[int, bytes]]:
        try:
            while True:
                head = self._file.read(8)
                if len(head) < 8:
                    return
                kind, size = struct.unpack(">BxxxL", head)
                while size:
                    data = self._file.read1(min(size, 1024**2))
                    if not data:
                        return
                    size -= len(data)
                    yield kind, data
        except (OSError, ValueError):  # closed under us: the end of the stream
            return

    def close(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            self._response.close()


def _exec_exit_code(api: Any, exec_id: str, running_for_s: float | None) -> int | None:
    """The exit code of an exec once it has run and ended (polling the engine), ``None``
    if it has not ended within ``running_for_s`` seconds (``None``: wait as long as it
    runs) or never started within a minute. Raises ``docker.errors.NotFound`` if it is gone.
    """
    since = time.monotonic()
    while True:
        info = api.exec_inspect(exec_id)
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        waited = time.monotonic() - since
        if info.get("Running"):
            if running_for_s is not None and waited > running_for_s:
                return None
        elif waited > 60:  # the engine has not started it yet: not for a minute
            return None
        time.sleep(_POLL_S)


def _collect_timeout(max_bytes: int) -> float:
    return _COLLECT_MIN_S + max_bytes / _COLLECT_BYTES_PER_S


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
            agent = _Agent(client, container, spec)
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
