"""What every execution backend shares: its result type, the run control, the supervision.

A backend starts the agent, streams its output into a ``LogSink`` and returns a
``BackendResult``; the harness (``runner.harness``) does everything around it. Once the
agent is started, ``supervise`` does the rest: it copies the output into the sink, waits
for the exit and runs the watch loop, where the harness - not the agent - enforces the
time limit and honours a cancel request, and where the heartbeat is driven from.
Snapshots of the submission are copied on a thread of their own (``Snapshots``), with the
same byte limits as the final outputs, so that a slow or huge copy never delays the time
limit. A backend only starts and kills its agent (a process, a container), copies a file
out of its reach and says what its exit status means.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from runner.logs import LogSink
from runner.spec import Outcome, RunDirs, RunSpec, Snapshot


class HarnessError(RuntimeError):
    """The infrastructure failed (no engine, no image, an API error): not the agent's fault."""


@dataclass
class RunControl:
    """How the caller steers a running run.

    Set ``cancel`` (from any thread) to stop the agent; the backend kills it within about
    ``poll_s`` seconds. ``heartbeat`` is called every ``heartbeat_interval_s`` while the
    agent runs (a Celery task records it so that a reaper can end runs whose worker died).
    ``on_tick(elapsed_s)`` is called every poll while the agent runs (keep it quick: the
    time limit waits for it). ``on_started(name)`` receives the container or process id.
    ``snapshots`` (set by the harness) copies the submission periodically on its own thread.
    """

    cancel: threading.Event = field(default_factory=threading.Event)
    heartbeat: Callable[[], None] | None = None
    heartbeat_interval_s: float = 30.0
    poll_s: float = 0.2
    on_tick: Callable[[float], None] | None = None
    on_started: Callable[[str], None] | None = None
    snapshots: Snapshots | None = None
    # Set by the backend when the run had a model endpoint: what it asked of it
    # (``runner.llm_meter``), kept even when the run ends in a harness error.
    llm_usage: dict | None = None


@dataclass
class BackendResult:
    """What the backend saw. Times are ``time.time()`` epochs (``None``: never happened)."""

    outcome: Outcome
    exit_code: int | None
    create_requested_at: float
    started_at: float | None = None
    exited_at: float | None = None
    detail: str = ""
    # Set when the outputs went past a limit: what was over (the run's outcome is then
    # ``failed`` unless it had already ended otherwise).
    outputs_exceeded: str = ""
    outputs_limit: int = 0
    # What the agent asked of its model endpoint, counted at the bridge (None: no endpoint).
    llm_usage: dict | None = None
    # What the agent could read of the host, for people (the local backend's confinement).
    confinement: str = ""


class Backend(Protocol):
    """An execution backend: runs ``spec`` with ``dirs`` mounted, until exit/limit/cancel."""

    name: str

    def run(
        self, spec: RunSpec, dirs: RunDirs, control: RunControl, sink: LogSink
    ) -> BackendResult: ...


# Thread pools of the numerical libraries, sized to the run's CPUs (the agent's own
# definition may set them otherwise).
THREAD_COUNT_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


def agent_env(
    spec: RunSpec,
    *,
    data: str,
    submission: str,
    logs: str,
    code: str,
    agent: str,
    instructions: str,
    validate_script: str,
    validation_socket: str,
    home: str,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The agent's environment on any backend: ``base``, where everything is (as the
    backend's agent sees it), the run's identity and time limit, the numerical libraries'
    thread counts (the run's CPUs, when it has a number of them), then the spec's own."""
    env = dict(base or {})
    env.update(
        {
            "HOME": home,
            "COMPETITION_ID": spec.competition_id,
            "SEED": str(spec.seed),
            "DATA_DIR": data,
            "SUBMISSION_DIR": submission,
            "LOGS_DIR": logs,
            "CODE_DIR": code,
            "AGENT_DIR": agent,
            "INSTRUCTIONS_FILE": instructions,
            "VALIDATE_SCRIPT": validate_script,
            "VALIDATION_SOCKET": validation_socket,
        }
    )
    if spec.time_limit_s is not None:
        env["TIME_LIMIT_SECS"] = str(int(spec.time_limit_s))
    if spec.resources.cpus is not None:
        # A CPU quota (Docker's nano_cpus) does not change the CPUs a process sees: without
        # these, OpenMP and BLAS start a thread per host CPU and spin against the quota.
        threads = str(max(1, math.ceil(spec.resources.cpus)))
        env.update(dict.fromkeys(THREAD_COUNT_VARIABLES, threads))
    env.update(spec.env)
    return env


@dataclass(frozen=True)
class Fetched:
    """What copying one file out of the agent's reach did: ``copied``, or why not. ``size``
    is the file's apparent size when known; ``too_large`` says it was over the limit (and
    was not read)."""

    copied: bool
    size: int | None = None
    too_large: bool = False
    reason: str = ""


# Copies the agent's submission to a host path, reading at most ``max_bytes``.
FetchSubmission = Callable[[Path, int], Fetched]


class Snapshots:
    """Copies ``submission.csv`` into ``directory`` every ``interval_s`` seconds of the
    agent's run, on a thread of its own, each copy bounded by ``max_bytes`` and all of them
    together by ``total_bytes`` (``None``: no bound beyond each one's).

    A submission over ``max_bytes`` is not copied: ``exceeded`` is set with the reason
    (the watch loop then stops the run). Once the total is spent no more are taken
    (``skipped`` says so). The thread never holds up the time limit: the watch loop does
    not wait for it, and ``stop`` waits only briefly.
    """

    def __init__(
        self,
        directory: Path,
        interval_s: float | None,
        max_bytes: int,
        total_bytes: int | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.directory = directory
        self._say = say  # a harness line in the run's log (why snapshots stopped)
        self.interval_s = interval_s
        self.max_bytes = max_bytes
        self.left = total_bytes
        self.skipped = ""
        self.exceeded = threading.Event()
        self.exceeded_reason = ""
        self._taken: list[Snapshot] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def taken(self) -> tuple[Snapshot, ...]:
        with self._lock:
            return tuple(self._taken)

    def start(self, fetch: FetchSubmission, started_monotonic: float) -> None:
        if not self.interval_s or self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._loop, args=(fetch, started_monotonic), name="snapshots", daemon=True
        )
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop taking snapshots; one still being copied is dropped if not done in time."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _loop(self, fetch: FetchSubmission, started_monotonic: float) -> None:
        assert self.interval_s
        next_at = self.interval_s
        while not self._stop.wait(max(0.0, started_monotonic + next_at - time.monotonic())):
            elapsed = time.monotonic() - started_monotonic
            next_at += self.interval_s * (1 + int(max(0.0, elapsed - next_at) // self.interval_s))
            self._take(fetch, elapsed)

    def _take(self, fetch: FetchSubmission, elapsed_s: float) -> None:
        # Milliseconds in the name: two snapshots within one second must not share it (the
        # second replaced the first, which stayed listed).
        target = self.directory / f"submission_{elapsed_s:012.3f}s.csv"
        partial = target.with_name(target.name + ".partial")
        most = self.max_bytes if self.left is None else min(self.max_bytes, self.left)
        try:
            fetched = fetch(partial, most)
        except Exception as exc:  # the agent or its container went away meanwhile
            fetched = Fetched(copied=False, reason=f"{type(exc).__name__}: {exc}")
        with self._lock:
            if fetched.copied and not self._stop.is_set():
                partial.rename(target)
                self._taken.append(Snapshot(elapsed_s=elapsed_s, path=target))
                if self.left is not None:
                    self.left -= fetched.size or 0
                return
        with contextlib.suppress(OSError):
            partial.unlink()
        if fetched.too_large and (fetched.size or 0) <= self.max_bytes:
            # Only the snapshots' total is spent: no more snapshots, the run goes on.
            self.skipped = (
                f"snapshots stopped at {elapsed_s:.0f}s: together they would pass "
                f"{self.max_bytes if self.left is None else self.left} more bytes"
            )
            self._stop.set()
            if self._say is not None:
                self._say(self.skipped)
        elif fetched.too_large and not self.exceeded.is_set():
            self.exceeded_reason = (
                f"submission.csv is {fetched.size} bytes, over the limit of {self.max_bytes} "
                "bytes (MLEBOARD_MAX_SUBMISSION_BYTES)"
            )
            self.exceeded.set()


class StopReason:
    EXITED = "exited"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    OUTPUTS_EXCEEDED = "outputs_exceeded"


def watch(
    exited: threading.Event,
    started_monotonic: float,
    time_limit_s: float | None,
    control: RunControl,
) -> str:
    """Wait until the agent exits, its time is up, the run is cancelled or its outputs went
    past a limit (seen by ``control.snapshots``).

    Returns a ``StopReason``. ``exited`` is set by the backend's waiter thread. Heartbeat
    and tick callbacks run here; an exception in one is the caller's bug and propagates
    (the backend then kills the agent and reports a harness error).
    """
    last_heartbeat = time.monotonic()
    if control.heartbeat:
        control.heartbeat()
    while True:
        elapsed = time.monotonic() - started_monotonic
        remaining = None if time_limit_s is None else time_limit_s - elapsed
        wait_s = control.poll_s if remaining is None else max(min(control.poll_s, remaining), 0)
        if exited.wait(wait_s):
            return StopReason.EXITED
        if control.cancel.is_set():
            return StopReason.CANCELLED
        if control.snapshots is not None and control.snapshots.exceeded.is_set():
            return StopReason.OUTPUTS_EXCEEDED
        elapsed = time.monotonic() - started_monotonic
        if time_limit_s is not None and elapsed >= time_limit_s:
            # A last look: an agent that exited at the very deadline did finish.
            return StopReason.EXITED if exited.is_set() else StopReason.TIMED_OUT
        if control.on_tick:
            control.on_tick(elapsed)
        now = time.monotonic()
        if control.heartbeat and now - last_heartbeat >= control.heartbeat_interval_s:
            control.heartbeat()
            last_heartbeat = now


@dataclass
class Stop:
    """How a supervised agent's run ended (see ``supervise``): the ``StopReason``, what
    ``wait()`` returned or raised, and when it returned (a ``time.time()`` epoch)."""

    reason: str
    what: str
    status: Any = None
    wait_error: Exception | None = None
    exited_at: float | None = None
    outputs_exceeded: str = ""

    def conclude(
        self,
        result: BackendResult,
        spec: RunSpec,
        sink: LogSink,
        interpret_exit: Callable[[Any], tuple[int, Outcome, str]],
    ) -> BackendResult:
        """Set ``result``'s outcome: a time-out or a cancel as such (said in the log), an
        exit as ``interpret_exit(status)`` says (exit code, outcome, detail)."""
        if self.reason == StopReason.TIMED_OUT:
            result.outcome = Outcome.TIMED_OUT
            sink.write_line(f"time limit of {spec.time_limit_s:g}s reached: agent killed")
        elif self.reason == StopReason.CANCELLED:
            result.outcome = Outcome.CANCELLED
            sink.write_line("run cancelled: agent killed")
        elif self.reason == StopReason.OUTPUTS_EXCEEDED:
            result.outcome = Outcome.FAILED
            reason = self.outputs_exceeded or "the outputs went past their limit"
            result.outputs_exceeded = reason
            result.outputs_limit = spec.submission_max_bytes
            sink.write_line(f"outputs exceeded their limit ({reason}): agent killed")
        elif self.wait_error is not None:
            raise HarnessError(f"lost track of the {self.what}: {self.wait_error}")
        else:
            result.exit_code, result.outcome, result.detail = interpret_exit(self.status)
        return result


def supervise(
    spec: RunSpec,
    control: RunControl,
    sink: LogSink,
    *,
    agent_id: str,
    what: str,
    read_output: Callable[[], Iterable[bytes]],
    wait: Callable[[], Any],
    kill: Callable[[], None],
    kill_after_exit: bool = False,
    fetch_submission: FetchSubmission | None = None,
) -> Stop:
    """Look after an agent the backend has just started, until it is over; return how.

    ``read_output()`` gives the agent's output as it comes (copied into ``sink`` on a
    thread); ``wait()`` blocks until the agent exits and returns its status (on another
    thread); ``kill()`` stops the agent and must accept one that is already gone. The
    agent is killed unless it exited by itself, and even then with ``kill_after_exit``
    (what it left behind goes too). ``watch`` runs meanwhile; an exception in a control
    callback propagates once the agent is killed. ``what`` names the agent's kind
    ("process", "container") in messages. ``fetch_submission`` copies the submission out
    for ``control.snapshots`` (taken on their own thread, stopped before the kill).
    """
    started_monotonic = time.monotonic()
    if control.on_started:
        control.on_started(agent_id)
    stop = Stop(reason=StopReason.EXITED, what=what)
    exited = threading.Event()

    def pump() -> None:
        try:
            for chunk in read_output():
                sink.write(chunk)
        except Exception as exc:  # the agent vanished mid-stream: keep what we have
            sink.write_line(f"log stream ended early: {exc}")

    def wait_for_exit() -> None:
        try:
            stop.status = wait()
            stop.exited_at = time.time()
        except Exception as exc:  # reported by ``Stop.conclude`` as a harness error
            stop.wait_error = exc
        finally:
            exited.set()

    pump_thread = threading.Thread(target=pump, name="agent-logs", daemon=True)
    pump_thread.start()
    threading.Thread(target=wait_for_exit, name="agent-wait", daemon=True).start()
    snapshots = control.snapshots
    if snapshots is not None and fetch_submission is not None:
        snapshots.start(fetch_submission, started_monotonic)
    try:
        stop.reason = watch(exited, started_monotonic, spec.time_limit_s, control)
    finally:
        if snapshots is not None:
            # Never waits long: a copy still running is abandoned (and dropped).
            snapshots.stop(timeout_s=0.5)
            stop.outputs_exceeded = snapshots.exceeded_reason
        if kill_after_exit or stop.reason != StopReason.EXITED or not exited.is_set():
            kill()
            exited.wait(30)
        pump_thread.join(timeout=10)
    return stop
