"""Real worker processes for tests: the environment and command line of a Celery worker
that shares the test's database, broker and folders."""

import os
import sys
from pathlib import Path

from django.conf import settings

REPO_ROOT = Path(__file__).resolve().parents[2]


def database_url_for_worker() -> str:
    """The test database as a URL another process can open."""
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return (
        f"postgresql://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"
    )


def worker_env(**extra: str) -> dict[str, str]:
    """The environment of a real worker process: the test's database, broker and folders."""
    return {
        **os.environ,
        "DATABASE_URL": database_url_for_worker(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "MLEBOARD_DATA_DIR": str(settings.MLEBOARD_DATA_DIR),
        "MLEBOARD_MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "MLEBOARD_VAR_DIR": str(settings.VAR_DIR),
        "PYTHONPATH": str(REPO_ROOT),
        **extra,
    }


def worker_argv(queues: str, concurrency: int, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "webapp",
        "worker",
        *extra,
        "-Q",
        queues,
        "--concurrency",
        str(concurrency),
        "--pool",
        "prefork",
        "--loglevel",
        "INFO",
        "--without-gossip",
        "--without-mingle",
    ]
