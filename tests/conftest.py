"""Test-wide set-up. With MLEBOARD_REQUIRE_SERVICES=1 (CI), the services the integration
tests need must be the real ones - PostgreSQL, Redis, a Docker engine, Chromium - and a
missing one fails the run instead of being skipped or silently replaced."""

import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
REQUIRE_SERVICES = os.environ.get("MLEBOARD_REQUIRE_SERVICES", "") == "1"


def pytest_sessionstart(session):
    if not REQUIRE_SERVICES:
        return
    problems = []
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        problems.append("DATABASE_URL must point at PostgreSQL")
    if not os.environ.get("CELERY_BROKER_URL", "").startswith("redis://"):
        problems.append("CELERY_BROKER_URL must point at Redis")
    if shutil.which("chromium") is None and not Path("/usr/bin/chromium").exists():
        problems.append("chromium is not installed")
    if problems:
        raise pytest.UsageError("MLEBOARD_REQUIRE_SERVICES=1 but: " + "; ".join(problems))


@pytest.fixture(scope="session")
def shared_mlebench() -> Path:
    """MLE-bench facts and a checkout shipped beside the repository (third-party material
    the project reads at test time but does not copy)."""
    path = Path(
        os.environ.get("MLEBOARD_SHARED_MLEBENCH", REPO_ROOT.parent / "shared" / "mlebench")
    )
    assert path.is_dir(), f"MLE-bench material not found at {path}; set MLEBOARD_SHARED_MLEBENCH"
    return path
