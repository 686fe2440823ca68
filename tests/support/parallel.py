"""The suite on several processes (pytest-xdist's ``-n``, ``make test TEST_WORKERS=N``): each
worker process gets a broker database, a var folder and a Docker instance name
(``$MLEBOARD_INSTANCE``) of its own before Django reads its settings, so one worker's Celery
processes never take another's tasks, no cache, media, data or broker file is shared, and
no worker counts or reaps another's run containers. The test database is already each
worker's own (pytest-django suffixes its name with the worker's id). Each worker starts with
its share of the tests marked ``slow`` (``dealt``). Loaded with ``-p tests.support.parallel``
(pyproject.toml); on a single process it changes nothing."""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from fnmatch import fnmatch
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# Redis serves databases 0-15 unless configured otherwise.
REDIS_DATABASES = 16


def worker_number() -> int | None:
    """0, 1, … in an xdist worker process (``gw0``, ``gw1``, …); None otherwise."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker.removeprefix("gw")) if worker.startswith("gw") else None


def own_redis_database(url: str, n: int) -> str:
    """The Redis URL ``url`` with the database ``n`` places after its own (wrapping)."""
    parts = urlsplit(url)
    base = int(parts.path.lstrip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(base + n) % REDIS_DATABASES}"))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    n = worker_number()
    if n is None:
        return
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if broker.startswith(("redis://", "rediss://")):
        os.environ["CELERY_BROKER_URL"] = own_redis_database(broker, n)
    var = Path(os.environ.get("MLEBOARD_VAR_DIR") or REPO_ROOT / "var") / f"test-worker-{n}"
    var.mkdir(parents=True, exist_ok=True)
    os.environ["MLEBOARD_VAR_DIR"] = str(var)
    # Its run containers carry a name of its own: its tests and sweepers count and reap
    # only those, never another worker's on the same engine.
    os.environ["MLEBOARD_INSTANCE"] = f"{os.environ.get('MLEBOARD_INSTANCE') or 'mleboard'}-gw{n}"
    # Folders set on their own follow the worker too (by default they are under var).
    for name in ("MLEBOARD_MEDIA_ROOT", "MLEBOARD_DATA_DIR"):
        if os.environ.get(name):
            os.environ[name] = str(Path(os.environ[name]) / f"test-worker-{n}")


def shared_folder(tmp_path_factory, name: str, make) -> Path:
    """A folder ``make(folder)`` fills once per test run: under xdist the first worker to
    ask makes it (the others wait on a lock and reuse it); on a single process, a folder of
    the session's. ``make`` writes into the folder it is given; a folder is used only once
    ``make`` has returned."""
    if worker_number() is None:
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    # The workers of one run share the parent of their own base folders (popen-gwN).
    root = tmp_path_factory.getbasetemp().parent
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """The main process rewrites the test modules' asserts once, before the workers start:
    each worker of a fresh checkout would otherwise rewrite all of them (~6 s of CPU each)
    at the same moment, finding no cached copy yet."""
    config = session.config
    if worker_number() is not None or not config.getoption("numprocesses", None):
        return
    if not sys.dont_write_bytecode:
        rewrite_test_modules(config)


def rewrite_test_modules(config) -> int:
    """Rewrite and cache, as pytest's import hook does on import, every test module and
    conftest under the test paths that has no current cached copy. Returns how many."""
    from _pytest.assertion import rewrite

    state = config.stash.get(rewrite.assertstate_key, None)
    if state is None or state.mode != "rewrite":
        return 0
    patterns = [*config.getini("python_files"), "conftest.py"]
    made = 0
    for testpath in config.getini("testpaths"):
        for path in sorted((config.rootpath / testpath).rglob("*.py")):
            if not any(fnmatch(path.name, pattern) for pattern in patterns):
                continue
            cache = rewrite.get_cache_dir(path)
            pyc = cache / (path.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(path, pyc) is not None or not rewrite.try_makedirs(cache):
                continue
            source_hash, code = rewrite._rewrite_test(path, config)
            rewrite._write_pyc(state, code, source_hash, pyc)
            made += 1
    return made


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    """The order xdist's ``worksteal`` deals the tests in (before xdist's own hook)."""
    if worker_number() is None:
        return  # one process: the suite's own order
    items[:] = dealt(items, config.workerinput["workercount"])


def dealt(items: list, workers: int) -> list:
    """``items`` ordered so that each worker's first share holds as many of the tests
    marked ``slow`` as the others', at its front. ``worksteal`` cuts the collection into
    ``workers`` contiguous shares at the start (the i-th holds ``len(left) // (workers -
    i)`` tests) and later moves tests from the end of a long queue to an idle worker: the
    long tests start at once, spread over the workers, and the short ones, kept in the
    order of their modules, fill in and are moved where time is left."""
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    fast = [item for item in items if item.get_closest_marker("slow") is None]
    ordered, left = [], len(items)
    for i in range(workers):
        size = left // (workers - i)
        share = slow[i::workers]
        filler = max(0, size - len(share))
        ordered += share + fast[:filler]
        fast = fast[filler:]
        left -= size
    return ordered + fast
