"""Waiting in tests for something another process does: poll a condition until a
deadline. The one place (with the few the house rule ``fixed-sleep-in-tests`` allows) where a
test may call ``time.sleep``: a fixed sleep standing in for time passing is banned."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float = 60.0, interval: float = 0.2) -> T:
    """The first truthy value of ``predicate()``, polled every ``interval`` seconds;
    AssertionError once ``timeout`` seconds have passed without one."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met in {timeout} s")
        time.sleep(interval)


# An agent that writes its submission, then waits until the test lets it go on: it never
# stands in for time passing with a sleep of its own. ``release(name)`` in the agent makes
# the named pipe ``name`` in its submission folder and reads it: its open blocks until the
# test, once it has seen what it waits for, opens the pipe to write, and its read ends when
# the test closes it (an agent left waiting is ended by the run's time limit).
RELEASE = (
    "import os\n"
    "def release(name):\n"
    "    path = os.path.join(os.environ['SUBMISSION_DIR'], name)\n"
    "    os.mkfifo(path)\n"
    "    with open(path) as pipe:\n"
    "        pipe.read()\n"
    "    os.remove(path)\n"
    "submission = os.path.join(os.environ['SUBMISSION_DIR'], 'submission.csv')\n"
)


def opened_for_writing(pipe: Path) -> int | None:
    """A descriptor of the named pipe ``pipe`` opened to write, once a reader has it open;
    None before (not made yet, or nobody reading it)."""
    try:
        return os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENXIO):
            return None
        raise
