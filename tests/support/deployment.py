"""A fresh shell's environment (none of the test configuration) and ``manage.py check``
run in it."""

import os
import subprocess
import sys
from pathlib import Path

from tests.support.workers import REPO_ROOT


def bare_env(var_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED and not k.startswith("SECURE_")}
    env.pop("MLEBOARD_BEHIND_TLS_PROXY", None)
    env.pop("CSRF_TRUSTED_ORIGINS", None)
    # Set by the browser tests' Playwright fixture in this process; never in a deployment.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return {**env, "MLEBOARD_VAR_DIR": str(var_dir), **extra}


def manage_check(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# What a fresh shell has: none of the test configuration's or the developer's settings.
_CLEARED = (
    "SECRET_KEY",
    "DEBUG",
    "DATABASE_URL",
    "CELERY_BROKER_URL",
    "CACHE_URL",
    "MLEBOARD_MEDIA_ROOT",
    "MLEBOARD_DATA_DIR",
    "MLEBOARD_RUN_SLOTS",
)
