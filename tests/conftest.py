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
def mlebench_checkout(tmp_path_factory) -> Path:
    """An MLE-bench checkout as a fresh clone has it (every leaderboard an LFS pointer),
    built from the catalogue, MLE-bench's split lists and the shipped published leaderboard
    (its README table)."""
    from benchmark.published import entries_from_yaml
    from tests.mlebench_material import build_checkout

    shipped = REPO_ROOT / "benchmark" / "data" / "published_results.yaml"
    entries = entries_from_yaml(shipped.read_text(encoding="utf-8"))
    return build_checkout(tmp_path_factory.mktemp("mle-bench"), entries)


@pytest.fixture(scope="session", autouse=True)
def fast_password_hashing():
    """Tests make and sign in hundreds of users: a deliberately slow hash (the site's
    PBKDF2) would be most of their set-up. The test-only MD5 hasher keeps them quick;
    the site's own setting is untouched."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield
