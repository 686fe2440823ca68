"""Fixtures shared by the benchmark tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def shared_mlebench() -> Path:
    """The shared MLE-bench material (competition facts, split lists, a checkout).

    Found through MLEBOARD_SHARED_MLEBENCH, else ``../shared/mlebench`` next to the
    repository. Missing material is a failure, not a skip: these tests must run.
    """
    path = Path(
        os.environ.get("MLEBOARD_SHARED_MLEBENCH", REPO_ROOT.parent / "shared" / "mlebench")
    )
    assert (path / "checkout").is_dir(), (
        f"the shared MLE-bench material is not at {path}: set MLEBOARD_SHARED_MLEBENCH"
    )
    return path


@pytest.fixture(scope="session")
def mlebench_checkout(shared_mlebench: Path) -> Path:
    """An MLE-bench checkout as a fresh clone has it: every leaderboard an LFS pointer."""
    return shared_mlebench / "checkout"
