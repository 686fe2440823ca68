"""What every execution backend shares: its result type, the run control, the watch loop.

A backend starts the agent, streams its output into a ``LogSink`` and returns a
``BackendResult``; the harness (``runner.harness``) does everything around it. The watch
loop here is where the harness - not the agent - enforces the time limit and honours a
cancel request, and where the heartbeat and periodic work (snapshots) are driven from.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

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
