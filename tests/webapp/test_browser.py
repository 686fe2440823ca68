"""The pages in a real browser (Playwright driving the system Chromium): charts render,
no console errors, filters work. Screenshots go to test-artifacts/ for a person to look at."""

import os
from pathlib import Path

import pytest
from django.core.management import call_command

from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync, leaderboard_store
from webapp.results.models import Experiment

from .factories import write_runs_folder

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

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; the ORM calls of the test
    # itself are synchronous and safe, so tell Django not to refuse them.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
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


@pytest.fixture
def site(tmp_path):
    from benchmark.leaderboard import PrivateLeaderboard

    catalogue_sync()
    runs = write_runs_folder(tmp_path / "runs", {"aide-o1": 3})
    call_command("import_grading_reports", str(runs), experiments=runs / "run_group_experiments.csv", publish=True)
    comp = Competition.objects.get(slug="spaceship-titanic")
    scores = tuple(round(0.85 - i * 0.002, 5) for i in range(150))
    leaderboard_store(
        comp,
        PrivateLeaderboard(scores, (None,) * 150, (None,) * 150, (None,) * 150, "mlebench", False),
        source_name="test",
    )
    return Experiment.objects.get(name="aide-o1")


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_home_and_experiment_funnel_render(page, live_server, site):
    page.goto(live_server.url + "/")
    assert "aide-o1" in page.locator("#leaderboard").inner_text()
    shot(page, "home")
    page.click("#leaderboard td a")
    page.wait_for_selector("#funnel[data-rendered=true]", timeout=15000)
    assert page.locator("#funnel .bars, #funnel g.trace.bars").count() >= 1
    shot(page, "experiment")
    assert page.console_errors == []


def test_competition_page_draws_leaderboard_and_medal_lines(page, live_server, site):
    page.goto(live_server.url + "/competitions/spaceship-titanic/")
    page.wait_for_selector("#leaderboard-distribution[data-rendered=true]", timeout=15000)
    # The four lines (gold, silver, bronze, median) are drawn as shapes.
    assert page.locator("#leaderboard-distribution .shapelayer path").count() == 4
    assert "Human teams" in page.locator("#leaderboard-distribution").inner_text()
    shot(page, "competition")
    assert page.console_errors == []


def test_competition_list_filter(page, live_server, site):
    page.goto(live_server.url + "/competitions/")
    assert "86 competitions" in page.locator("#competition-count").inner_text()
    page.select_option("select[name=split]", "low")
    page.click("#competition-filters button[type=submit]")
    page.wait_for_url("**split=low**")
    assert "22 competitions" in page.locator("#competition-count").inner_text()
    shot(page, "competitions")
    assert page.console_errors == []
