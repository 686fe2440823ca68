"""The agent's process inside a run container: started with ``docker exec`` as the agent's
unprivileged user, its output read from the engine's stream, killed with everything its
user left running, and its outputs copied out by ``runner.outputs``' collector.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from runner.backend import Fetched, HarnessError
from runner.outputs import COLLECTOR, Received, describe_exceeded, receive
from runner.spec import (
    CODE_DIR,
    CONTAINER_CODE_DIR,
    CONTAINER_LOGS_DIR,
    CONTAINER_SUBMISSION_DIR,
    LOGS_DIR,
    OUTPUT_MAX_ENTRIES,
    SUBMISSION_DIR,
    SUBMISSION_FILENAME,
    RunDirs,
    RunSpec,
)

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


def agent_ids(spec: RunSpec) -> tuple[int, int]:
    """The agent's numeric (uid, gid) from ``spec.user``; root is refused."""
    uid, _, gid = spec.user.partition(":")
    gid = gid or uid
    if not (uid.isascii() and uid.isdigit() and gid.isascii() and gid.isdigit()):
        raise HarnessError(f"the agent's user must be numeric uid:gid, got {spec.user!r}")
    if int(uid) == 0 or int(gid) == 0:
        raise HarnessError("the agent may not run as root (uid or gid 0)")
    return int(uid), int(gid)


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


class ContainerAgent:
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
