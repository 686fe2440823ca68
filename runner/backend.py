"""What every execution backend shares: its result type, the run control, the supervision.

A backend starts the agent, streams its output into a ``LogSink`` and returns a
``BackendResult``; the harness (``runner.harness``) does everything around it. Once the
agent is started, ``supervise`` does the rest: it copies the output into the sink, waits
for the exit and runs the watch loop, where the harness - not the agent - enforces the
time limit and honours a cancel request, and where the heartbeat and periodic work
(snapshots) are driven from. A backend only starts and kills its agent (a process, a
container) and says what its exit status means.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from runner.logs import LogSink
from runner.spec import Outcome, RunDirs, RunSpec


class HarnessError(RuntimeError):
    """The infrastructure failed (no engine, no image, an API error): not the agent's fault."""


@dataclass
class RunControl:
    """How the caller steers a running run.

    Set ``cancel`` (from any thread) to stop the agent; the backend kills it within about
    ``poll_s`` seconds. ``heartbeat`` is called every ``heartbeat_interval_s`` while the
    agent runs (a Celery task records it so that a reaper can end runs whose worker died).
    ``on_tick(elapsed_s)`` is called every poll while the agent runs (the harness takes
    its snapshots there). ``on_started(name)`` receives the container or process id.
    """

    cancel: threading.Event = field(default_factory=threading.Event)
    heartbeat: Callable[[], None] | None = None
    heartbeat_interval_s: float = 30.0
    poll_s: float = 0.2
    on_tick: Callable[[float], None] | None = None
    on_started: Callable[[str], None] | None = None


@dataclass
class BackendResult:
    """What the backend saw. Times are ``time.time()`` epochs (``None``: never happened)."""

    outcome: Outcome
    exit_code: int | None
    create_requested_at: float
    started_at: float | None = None
    exited_at: float | None = None
    detail: str = ""


class Backend(Protocol):
    """An execution backend: runs ``spec`` with ``dirs`` mounted, until exit/limit/cancel."""

    name: str

    def run(
        self, spec: RunSpec, dirs: RunDirs, control: RunControl, sink: LogSink
    ) -> BackendResult: ...


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
    backend's agent sees it), the run's identity and time limit, then the spec's own."""
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
    env.update(spec.env)
    return env


class StopReason:
    EXITED = "exited"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"


def watch(
    exited: threading.Event,
    started_monotonic: float,
    time_limit_s: float | None,
    control: RunControl,
) -> str:
    """Wait until the agent exits, its time is up or the run is cancelled.

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
) -> Stop:
    """Look after an agent the backend has just started, until it is over; return how.

    ``read_output()`` gives the agent's output as it comes (copied into ``sink`` on a
    thread); ``wait()`` blocks until the agent exits and returns its status (on another
    thread); ``kill()`` stops the agent and must accept one that is already gone. The
    agent is killed unless it exited by itself, and even then with ``kill_after_exit``
    (what it left behind goes too). ``watch`` runs meanwhile; an exception in a control
    callback propagates once the agent is killed. ``what`` names the agent's kind
    ("process", "container") in messages.
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
    try:
        stop.reason = watch(exited, started_monotonic, spec.time_limit_s, control)
    finally:
        if kill_after_exit or stop.reason != StopReason.EXITED or not exited.is_set():
            kill()
            exited.wait(30)
        pump_thread.join(timeout=10)
    return stop
