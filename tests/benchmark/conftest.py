"""Fixtures of the benchmark tests (``shared_mlebench`` comes from tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def mlebench_checkout(shared_mlebench: Path) -> Path:
    """An MLE-bench checkout as a fresh clone has it: every leaderboard an LFS pointer."""
    path = shared_mlebench / "checkout"
    assert (path / "mlebench" / "competitions").is_dir(), f"no MLE-bench checkout at {path}"
    return path
