"""Child processes of a drill, each in its own process group and stopped by it alone, on
exit too; and the small waits and ports every part of a drill uses."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class DrillAbort(RuntimeError):
    """The drill cannot go on (a process it needs exited)."""


def wait_for(what: str, predicate: Callable[[], object], timeout: float, every: float = 0.2):
    """Poll ``predicate`` until it returns something true; raise TimeoutError after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except DrillAbort:
            raise
        except Exception:  # a service still starting
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


STARTED: list[Proc] = []


class Proc:
    """A child process in its own process group (``start_new_session``), its output
    appended to ``log_path``; killed and stopped by that group only."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_path: Path):
        self.name, self.argv, self.env, self.log_path = name, argv, env, log_path
        self.popen: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as out:
            self.popen = subprocess.Popen(
                self.argv,
                cwd=REPO,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.starts += 1
        if self not in STARTED:
            STARTED.append(self)

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def signal_group(self, sig: int) -> None:
        if self.popen is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def kill(self) -> None:
        """SIGKILL the whole process group (main process and its children)."""
        self.signal_group(signal.SIGKILL)
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=10)

    def stop(self, grace: float = 10) -> None:
        if self.popen is None:
            return
        # The main process first (a warm shutdown of its own children), then the group.
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        # The main process may be gone while children of its group remain: kill the group.
        self.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)


def stop_all() -> None:
    for proc in reversed(STARTED):
        with contextlib.suppress(Exception):
            proc.stop(grace=5)
    STARTED.clear()


atexit.register(stop_all)


def exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)
