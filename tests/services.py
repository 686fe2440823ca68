"""What a test does when something it needs is not here (PostgreSQL while the suite runs
on SQLite, the right to mount a filesystem): with ``MLEBOARD_REQUIRE_SERVICES=1`` (CI) it
fails, so a missing service is never a quiet pass; on a developer's embedded defaults it
is skipped with the reason. The one place a test may skip (tests/test_banned_patterns.py)."""

from __future__ import annotations

from typing import NoReturn

import pytest

from config import env


def missing(what: str) -> NoReturn:
    """Stop the test: ``what`` the test needs is not here."""
    if env("MLEBOARD_REQUIRE_SERVICES"):
        pytest.fail(f"MLEBOARD_REQUIRE_SERVICES=1 but {what}")
    pytest.skip(what)
