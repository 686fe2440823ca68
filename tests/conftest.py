"""Test-wide set-up. With MLEBOARD_REQUIRE_SERVICES=1 (CI), the services the integration
tests need must be the real ones - PostgreSQL, Redis, a Docker engine, Chromium - and a
missing one fails the run instead of being skipped or silently replaced."""

import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support import template_database
from tests.support.live_requests import LIVE_REQUESTS
from tests.support.parallel import shared_folder
from tests.support.polling import wait_until
from tests.support.workers import (
    database_url_for_worker,
    worker_argv,
    worker_env,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
REQUIRE_SERVICES = os.environ.get("MLEBOARD_REQUIRE_SERVICES", "") == "1"


# The Plotly bundle the pages load (web/package-lock.json), which collectstatic collects.
PLOTLY_BUNDLE = REPO_ROOT / "web" / "node_modules" / "plotly.js-basic-dist-min"


def pytest_sessionstart(session):
    if not PLOTLY_BUNDLE.is_dir():
        raise pytest.UsageError(
            f"{PLOTLY_BUNDLE.relative_to(REPO_ROOT)} is missing: the pages load it. "
            "Run `bash scripts/test-deps.sh` (or `npm ci --prefix web`)."
        )
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


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist: each worker makes its test database from this run's template."""
    node.workerinput[template_database.WORKERINPUT_KEY] = template_database.run_token(node.config)


@pytest.fixture(scope="session")
def django_db_setup(
    request, django_test_environment, django_db_blocker, django_db_modify_db_settings
):
    """On PostgreSQL, the test database is a copy of the run's migrated template
    (tests/support/template_database.py) instead of a migration of its own; on SQLite,
    pytest-django's set-up."""
    from django.test.utils import setup_databases, teardown_databases

    verbosity = request.config.option.verbose
    with django_db_blocker.unblock():
        if template_database.on_postgresql():
            made = template_database.set_up(template_database.run_token(request.config), verbosity)
        else:
            made = setup_databases(verbosity=verbosity, interactive=False, serialized_aliases=set())
    yield
    with django_db_blocker.unblock():
        teardown_databases(made, verbosity=verbosity)


def pytest_unconfigure(config):
    """The main process drops the run's template, once every worker has ended."""
    if hasattr(config, "workerinput") or template_database.TOKEN not in config.stash:
        return
    from django.conf import settings
    from pytest_django.plugin import blocking_manager_key

    if not settings.configured or not template_database.on_postgresql():
        return
    with config.stash[blocking_manager_key].unblock():
        template_database.drop(config.stash[template_database.TOKEN])


@pytest.fixture(scope="session")
def postgres(django_db_blocker):
    """Where the scripts that measure PostgreSQL make their databases: beside the test
    database when the suite runs on PostgreSQL, else on a cluster of the session's own
    (``initdb`` and ``pg_ctl``, as the drill makes one). Returns ``url(suffix)``. Also
    what tests of PostgreSQL itself use, whichever database the suite runs on."""
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        from django.db import connection

        test_database = database_url_for_worker()
        made = set()

        def url(suffix: str) -> str:
            made.add(f"{settings.DATABASES['default']['NAME']}_{suffix}")
            return f"{test_database}_{suffix}"

        yield url
        # What the scripts made there goes with the test database.
        with django_db_blocker.unblock(), connection.creation._nodb_cursor() as cursor:
            for name in sorted(made):
                cursor.execute(
                    f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)} WITH (FORCE)"
                )
        return
    sys.path.insert(0, str(REPO_ROOT / "perf"))
    try:
        from drill.database import PrivatePostgres
    finally:
        sys.path.remove(str(REPO_ROOT / "perf"))
    cluster = PrivatePostgres()
    try:
        cluster.init()
        cluster.start()
        yield lambda suffix: f"postgresql://postgres@127.0.0.1:{cluster.port}/mleboard_{suffix}"
    finally:
        cluster.remove()


@pytest.fixture(scope="session")
def mlebench_checkout(tmp_path_factory) -> Path:
    """An MLE-bench checkout as a fresh clone has it (every leaderboard an LFS pointer),
    built from the catalogue, MLE-bench's split lists and the shipped published leaderboard
    (its README table)."""
    from benchmark.published import entries_from_yaml
    from tests.support.mlebench_material import build_checkout

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


@pytest.fixture(scope="session", autouse=True)
def collected_static(tmp_path_factory):
    """The static files as `make setup` collects them, in a folder of the session's: hashed
    names, their manifest (which {% static %} reads: without it a page fails to render) and
    compressed copies. Pages link the hashed names and whitenoise serves them, as on a site.
    Collected once per run, whatever the number of worker processes (only read after)."""
    from django.core.management import call_command
    from django.test import override_settings

    def collect(folder: Path) -> None:
        with override_settings(STATIC_ROOT=folder):
            call_command("collectstatic", interactive=False, verbosity=0)

    folder = shared_folder(tmp_path_factory, "staticfiles", collect)
    with override_settings(STATIC_ROOT=folder), static_files_listed_once():
        yield


@contextmanager
def static_files_listed_once():
    """WhiteNoise lists STATIC_ROOT (731 files, ~40 ms of CPU) when its middleware is made:
    once per process on a site, but once per test client here, since each client loads the
    middleware again. Within this, a listing is made once per folder and configuration and
    reused; the collected folder is only read after collection, and its manifest's time is
    part of the key all the same."""
    from whitenoise.base import WhiteNoise

    listed: dict[tuple, dict] = {}
    original = WhiteNoise.update_files_dictionary

    def update_files_dictionary(self, root, prefix):
        manifest = Path(root) / "staticfiles.json"
        key = (
            root,
            prefix,
            manifest.stat().st_mtime_ns if manifest.exists() else None,
            type(self),
            self.max_age,
            self.allow_all_origins,
            self.charset,
            self.add_headers_function,
            self.index_file,
            self.__dict__.get("immutable_file_test"),  # set only when the settings name one
            tuple(sorted(self.media_types.types_map.items())),
        )
        if self.files:  # not a first listing into an empty table: nothing reused
            original(self, root, prefix)
        elif key in listed:
            self.files.update(listed[key])
        else:
            original(self, root, prefix)
            listed[key] = dict(self.files)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(WhiteNoise, "update_files_dictionary", update_files_dictionary)
        yield


@pytest.fixture(scope="session")
def live_server(request, collected_static):
    """pytest-django's live server, with the static files served by the site itself
    (whitenoise, from the collected files) rather than by its default handler, which looks
    names up in the source folders and so finds no hashed name."""
    from pytest_django.live_server_helper import LiveServer

    addr = (
        request.config.getvalue("liveserver")
        or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS")
        or "localhost"
    )
    server = LiveServer(addr, start=False)
    server.thread.static_handler = _served_by_the_site
    server.start()
    yield server
    server.stop()


def _served_by_the_site(application):
    """A live server's static handler that hands every request to the site, counting the
    requests it is serving (``LIVE_REQUESTS``)."""
    return LIVE_REQUESTS.wrap(application)


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A real Celery worker process on the configured broker, sharing the test database.
    Yields the Popen; the worker is stopped (and waited for) afterwards."""
    from webapp.project.celery import app

    app.control.purge()
    log = tmp_path / "worker.log"
    proc = subprocess.Popen(
        worker_argv("grading,runs.cpu,runs.gpu,default", 2),
        cwd=REPO_ROOT,
        env=worker_env(),
        stdout=open(log, "w"),
        stderr=subprocess.STDOUT,
    )

    def ready() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"worker exited at start:\n{log.read_text()}")
        return "ready." in log.read_text()

    try:
        wait_until(ready, timeout=60)
    except AssertionError:
        proc.kill()
        raise AssertionError(f"worker not ready in 60 s:\n{log.read_text()}") from None
    proc.log_path = log
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
