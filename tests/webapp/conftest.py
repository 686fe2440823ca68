import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.live_requests import LIVE_REQUESTS
from tests.polling import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]


def _database_url_for_worker() -> str:
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
        "DATABASE_URL": _database_url_for_worker(),
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


@pytest.fixture
def alice(django_user_model):
    """A signed-up user (tests that need her with more rights define their own)."""
    return django_user_model.objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def bob(django_user_model):
    """Another user, who must not see alice's private things."""
    return django_user_model.objects.create_user("bob", password="pw-bob-123")


def member_of(django_user_model, group: str, username: str, password: str = "", **fields):
    """A user in one of the site's groups (``webapp.core.roles``), with nothing else."""
    from django.contrib.auth.models import Group

    password = password or f"pw-{username}-123"
    user = django_user_model.objects.create_user(username, password=password, **fields)
    user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def reviewer(django_user_model):
    """A reviewer (the reviewers group): not staff, no other right."""
    return member_of(django_user_model, "reviewers", "rita")


@pytest.fixture
def operator(django_user_model):
    """An operator (the operators group): not staff, no other right."""
    return member_of(django_user_model, "operators", "otto")


@pytest.fixture
def staff_without_permissions(django_user_model):
    """The admin's staff flag and nothing else: may act on nothing."""
    return django_user_model.objects.create_user("stan", password="pw-stan-123", is_staff=True)


@pytest.fixture
def demo_leaderboards(tmp_path, settings):
    """The four demo competitions built (one seed of each reference agent), in the
    catalogue and with their leaderboards; the build (its submissions) is returned."""
    from tests.demo_builds import demo_site

    return demo_site(tmp_path, settings)


@pytest.fixture
def media(tmp_path, settings):
    """An empty MEDIA_ROOT of the test's own."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    return settings.MEDIA_ROOT


# Poll a condition until a deadline (tests/polling.py).
wait_for = wait_until


# --- the browser (Playwright driving the system Chromium) ------------------------

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; the ORM calls of the test
    # itself are synchronous and safe, so tell Django not to refuse them.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda msg: msg.type == "error" and page.console_errors.append(msg.text))
    page.on("pageerror", lambda exc: page.console_errors.append(str(exc)))
    yield page
    context.close()
    # Requests the page sent before it closed finish before the test's database is emptied.
    LIVE_REQUESTS.wait_idle()


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.fixture
def unisolated(monkeypatch, settings):
    """A site whose operator runs agents as local processes (the demo's choice), for this
    process and for worker processes started after it."""
    monkeypatch.setenv("MLEBOARD_RUN_BACKEND", "local")
    monkeypatch.setenv("MLEBOARD_ALLOW_UNISOLATED_RUNS", "1")
    settings.MLEBOARD_RUN_BACKEND = "local"
    settings.MLEBOARD_ALLOW_UNISOLATED_RUNS = True


@pytest.fixture
def demo_and_published(tmp_path, settings, monkeypatch, django_user_model):
    """What ``make run`` loads (the demo's competitions, leaderboards and reference agents,
    graded here over one seed) and MLE-bench's published leaderboard, with an admin (ada)
    and a user (uma)."""
    from django.core.management import call_command

    from tests.demo_builds import build_demo
    from webapp.competitions.services import catalogue_sync
    from webapp.results.management.commands import load_demo

    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    # The session's shared build (a real one, trained once) instead of training again.
    monkeypatch.setattr(load_demo, "build_demo", build_demo)
    catalogue_sync()
    call_command("load_demo", data_dir=settings.MLEBOARD_DATA_DIR, seeds=1)
    call_command("load_published_results")
    django_user_model.objects.create_superuser("ada", "ada@example.org", "pw-ada-12345")
    django_user_model.objects.create_user("uma", password="pw-uma-12345")


def sign_in(page, live_server, username: str, password: str) -> None:
    """Sign in through the site's form; returns when the page says who is signed in."""
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("main form button[type=submit]")
    page.wait_for_selector("header.top button.link", state="attached", timeout=10000)
