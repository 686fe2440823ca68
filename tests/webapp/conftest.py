"""Fixtures of the site's tests: its people, its demo, media, the browser."""

import os

import pytest

from tests.support.browser import CHROMIUM_ARGS
from tests.support.factories import import_runs
from tests.support.live_requests import LIVE_REQUESTS
from tests.support.planted import plant
from tests.support.users import member_of
from webapp.competitions.services import catalogue_sync


@pytest.fixture
def alice(django_user_model):
    """A signed-up user (tests that need her with more rights define their own)."""
    return django_user_model.objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def bob(django_user_model):
    """Another user, who must not see alice's private things."""
    return django_user_model.objects.create_user("bob", password="pw-bob-123")


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
    from tests.support.demo_builds import demo_site

    return demo_site(tmp_path, settings)


@pytest.fixture
def media(tmp_path, settings):
    """An empty MEDIA_ROOT of the test's own."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    return settings.MEDIA_ROOT


# --- the browser (Playwright driving the system Chromium) ------------------------


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

    from tests.support.demo_builds import build_demo
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


@pytest.fixture
def imported(tmp_path):
    catalogue_sync()
    return import_runs(tmp_path / "runs", {"aide-o1": 3, "mlab-gpt4o": 2})


@pytest.fixture
def planted(django_user_model, media, settings):
    """Private work with markers in every name, file and reference (``tests.support.planted``)."""
    return plant(django_user_model, settings)
