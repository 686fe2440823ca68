"""Waiting in tests for something another process does: poll a condition until a
deadline. The one place (with the few listed in tests/test_banned_patterns.py) where a
test may call ``time.sleep``: a fixed sleep standing in for time passing is banned."""

from __future__ import annotations

import time
from collections.abc import Callable
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
