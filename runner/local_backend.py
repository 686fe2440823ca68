"""Run an agent as a local process: the development backend and the embedded default.

Not a container. The agent is a process of the worker's host, started with an environment
built from nothing and confined as well as the host allows (``runner.local_confinement``);
what it can read is stored with the run (``RunOutcome.confinement``). It can reach the
network on every level: use the Docker backend for anything you do not trust. Enforced: a
wall-clock limit on its process group, ``RLIMIT_AS``, no core dumps, CPU affinity; outputs
are written straight to the host and their limit checked at the end (docs/agents.md). It
sees its data and outputs through the container's variables (``DATA_DIR``...).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runner.agent_definition import AGENT_BASE_URL_ENV
from runner.backend import BackendResult, HarnessError, RunControl, agent_env, supervise
from runner.llm_bridge import HostBridge
from runner.local_confinement import (
    SYSTEM_PATH,
    Confinement,
    Level,
    hand_over,
    local_confinement,
    python_folders,
    site_folders,
    take_back,
    wrap_command,
)
from runner.logs import LogSink
from runner.outputs import apparent_size, copy_capped
from runner.spec import (
    OUTPUT_MAX_ENTRIES,
    SUBMISSION_FILENAME,
    VALIDATION_SOCKET_NAME,
    Outcome,
    RunDirs,
    RunSpec,
)

# Phrases runtimes print when an allocation fails under RLIMIT_AS.
_OOM_MARKERS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory")


def _data_view(spec: RunSpec, dirs: RunDirs) -> Path:
    """The folder the agent reads as its data: the public folder itself, or (for a run on
    an obfuscated description) a folder of links to its entries with the harness's
    ``description.md`` in place of the public one."""
    if spec.obfuscated_description is None:
        return dirs.data
    view = dirs.support / "data"
    view.mkdir(exist_ok=True)
    for entry in os.scandir(dirs.data):
        if entry.name != "description.md" and not (view / entry.name).exists():
            (view / entry.name).symlink_to(entry.path)
    if not (view / "description.md").exists():
        (view / "description.md").symlink_to(dirs.description_override)
    return view


def local_env(spec: RunSpec, dirs: RunDirs) -> dict[str, str]:
    """The agent's environment, built from nothing: this Python and the system's folders
    on PATH, a UTF-8 locale, HOME in its run folder, the layout and the run's own
    variables. Nothing of the worker's environment is passed on (its secrets live there)."""
    python_bin = str(Path(sys.executable).parent)
    base = {
        "PATH": python_bin + os.pathsep + SYSTEM_PATH,
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        # The agent runs from its source folder here: leave no bytecode behind in it.
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return agent_env(
        spec,
        data=str(_data_view(spec, dirs)),
        submission=str(dirs.submission),
        logs=str(dirs.logs),
        code=str(dirs.code),
        agent=str(spec.local_workdir or dirs.code),
        instructions=str(dirs.support / "instructions.txt"),
        validate_script=str(dirs.support / "validate_submission.sh"),
        validation_socket=str(dirs.validation / VALIDATION_SOCKET_NAME),
        home=str(dirs.code),
        base=base,
    )


def _limit_child(spec: RunSpec) -> None:
    """Runs in the child between fork and exec: apply the resource limits."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if spec.resources.memory is not None:
        resource.setrlimit(resource.RLIMIT_AS, (spec.resources.memory, spec.resources.memory))
    if spec.resources.cpus is not None and hasattr(os, "sched_setaffinity"):
        available = sorted(os.sched_getaffinity(0))
        wanted = max(1, math.ceil(spec.resources.cpus))
        os.sched_setaffinity(0, available[:wanted])


class LocalBackend:
    """Runs the agent's command as a subprocess in its own process group, confined as
    well as this host allows (``runner.local_confinement``; ``confinement`` overrides
    the probe)."""

    name = "local"

    def __init__(self, confinement: Confinement | None = None) -> None:
        self._confinement = confinement

    @property
    def confinement(self) -> Confinement:
        return self._confinement or local_confinement()

    def run(
        self, spec: RunSpec, dirs: RunDirs, control: RunControl, sink: LogSink
    ) -> BackendResult:
        """Run the process to its end; see ``runner.backend.Backend``. An agent with a
        model endpoint reaches it through the bridge on a loopback port, which counts its
        use (``BackendResult.llm_usage``)."""
        env = local_env(spec, dirs)
        if not spec.llm_base_url:
            return self._run(spec, dirs, control, sink, env)
        with HostBridge(spec.llm_base_url, tcp=True) as bridge:
            env[AGENT_BASE_URL_ENV] = bridge.local_base_url
            try:
                result = self._run(spec, dirs, control, sink, env)
            finally:
                control.llm_usage = bridge.usage()
            result.llm_usage = control.llm_usage
            return result

    def _run(
        self, spec: RunSpec, dirs: RunDirs, control: RunControl, sink: LogSink, env: dict
    ) -> BackendResult:
        create_requested_at = time.time()
        cwd = Path(spec.local_workdir or dirs.code)
        confinement = self.confinement
        _check_program(spec.command[0], cwd, env["PATH"])
        outputs = (dirs.submission, dirs.logs, dirs.code)
        stage = Path(tempfile.mkdtemp(prefix="mleboard-stage-"))
        read_only = [dirs.data, dirs.support, *python_folders()]
        if spec.local_workdir:
            read_only.append(Path(spec.local_workdir))
        command = wrap_command(
            confinement,
            spec.command,
            cwd=cwd,
            keep=[*outputs, *read_only],
            read_only=read_only,
            # The data root the harness was given, as well as the configured one.
            hide=[*site_folders(), dirs.data.parents[2]],
            stage=stage,
        )
        if confinement.level is Level.ISOLATED:
            hand_over(outputs)
        try:
            return self._start(spec, dirs, control, sink, env, command, cwd, create_requested_at)
        finally:
            if confinement.level is Level.ISOLATED:
                take_back(outputs)
            shutil.rmtree(stage, ignore_errors=True)

    def _start(self, spec, dirs, control, sink, env, command, cwd, create_requested_at):
        try:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed as a whole
                preexec_fn=lambda: _limit_child(spec),  # a few syscalls only, safe after fork
            )
        except OSError as exc:
            raise HarnessError(f"could not start {command[0]!r}: {exc}") from exc
        started_at = time.time()
        stdout = proc.stdout
        assert stdout is not None
        with stdout:
            stop = supervise(
                spec,
                control,
                sink,
                agent_id=str(proc.pid),
                what="process",
                read_output=lambda: iter(functools.partial(stdout.read1, 65536), b""),
                wait=proc.wait,
                # Always end the whole group: children the agent left behind go too.
                kill=lambda: _kill_group(proc.pid),
                kill_after_exit=True,
                fetch_submission=lambda target, most: copy_capped(
                    dirs.submission / SUBMISSION_FILENAME, target, most
                ),
            )
        result = BackendResult(
            outcome=Outcome.COMPLETED,
            exit_code=None,
            create_requested_at=create_requested_at,
            started_at=started_at,
            exited_at=stop.exited_at,
            confinement=self.confinement.summary,
        )
        result = stop.conclude(result, spec, sink, lambda code: _interpret_exit(code, spec, sink))
        exceeded, limit = _over_limits(spec, dirs)
        if exceeded and not result.outputs_exceeded:
            result.outputs_exceeded, result.outputs_limit = exceeded, limit
        return result


def _check_program(program: str, cwd: Path, path: str) -> None:
    """Raise ``HarnessError`` if ``program`` cannot be found and run (as Popen would, but
    here the first process started is the confinement's, not the agent's)."""
    if os.sep in program:
        found = (cwd / program) if not os.path.isabs(program) else Path(program)
        ok = found.is_file() and os.access(found, os.X_OK)
    else:
        ok = shutil.which(program, path=path) is not None
    if not ok:
        raise HarnessError(f"could not start {program!r}: no such program (PATH={path})")


def _over_limits(spec: RunSpec, dirs: RunDirs) -> tuple[str, int]:
    """What of the outputs (already on the host) is over a limit, and that limit."""
    submission = dirs.submission / SUBMISSION_FILENAME
    with contextlib.suppress(OSError):
        size = submission.lstat().st_size
        if size > spec.submission_max_bytes:
            return (
                f"submission.csv is {size} bytes, over the limit of {spec.submission_max_bytes} "
                "bytes (MLEBOARD_MAX_SUBMISSION_BYTES)",
                spec.submission_max_bytes,
            )
    total = entries = 0
    for folder in (dirs.submission, dirs.code, dirs.logs):
        size, count = apparent_size(folder, OUTPUT_MAX_ENTRIES)
        total, entries = total + size, entries + count
    if total > spec.output_max_bytes or entries > OUTPUT_MAX_ENTRIES:
        return (
            f"outputs exceeded {spec.output_max_bytes} bytes: {total} bytes in {entries} entries",
            spec.output_max_bytes,
        )
    return "", 0


def _interpret_exit(code: int, spec: RunSpec, sink: LogSink) -> tuple[int, Outcome, str]:
    """Exit code, outcome and detail for a process that ended with ``returncode`` ``code``."""
    # A process killed by a signal has returncode -N; report it like a shell (128+N).
    exit_code = 128 - code if code < 0 else code
    if code == 0:
        return exit_code, Outcome.COMPLETED, ""
    if spec.resources.memory is not None and _mentions_oom(sink):
        return (
            exit_code,
            Outcome.OUT_OF_MEMORY,
            "an allocation failed under the address-space limit",
        )
    return exit_code, Outcome.FAILED, f"exit code {exit_code}"


def _mentions_oom(sink: LogSink) -> bool:
    tail = sink.recent_text()
    return any(marker in tail for marker in _OOM_MARKERS)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
