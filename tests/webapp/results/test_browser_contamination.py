"""The contamination views in a real browser (Playwright, the system Chromium): the date
view on the demo (its competitions never ran on Kaggle: no deadlines, said so) and on an
experiment imported over MLE-bench's real competitions with a knowledge cutoff; the
familiarity view after measuring against the named fake endpoint; compare with two
experiments; a competition's page with its deadline and familiarity. Screenshots go to
test-artifacts/."""

import datetime as dt

import pytest
from django.core.management import call_command

from tests.support import demo_builds
from tests.support.browser import ARTIFACTS, shot
from tests.support.contamination_fixtures import import_experiment
from tests.support.fake_base_model import FakeBaseModel
from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment
from webapp.results.pages import contamination

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.slow]


def section_shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#contamination").screenshot(path=str(ARTIFACTS / f"{name}.png"))


def no_horizontal_overflow(page) -> bool:
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
        .slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className)"""
    )
    assert wide == [], wide
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


@pytest.fixture
def imported(tmp_path, settings):
    """Two experiments over the 75 competitions, one with its model's knowledge cutoff,
    and every competition's familiarity measured against the fake endpoint (on short
    made-up descriptions: the real ones are MLE-bench's, imported with it)."""
    catalogue_sync(include_demo=True)
    first = import_experiment(tmp_path, "aide-gpt-4o", "gpt-4o-2024-08-06")
    Experiment.objects.filter(pk=first.pk).update(knowledge_cutoff=dt.date(2023, 10, 1))
    second = import_experiment(tmp_path, "aide-o1-preview", "o1-preview", bias=0.01)
    with FakeBaseModel() as fake:
        settings.MLEBOARD_FAMILIARITY_BASE_URL = fake.base_url
        settings.MLEBOARD_FAMILIARITY_MODEL = "fake-base (a test fake, not a model)"
        for competition in Competition.objects.filter(is_demo=False):
            competition.description = (
                f"{competition.name}: a {competition.category.lower()} competition scored by "
                f"{competition.metric}."
            )
            competition.save(update_fields=["description"])
        call_command("compute_familiarity")
    return first, second


def test_the_date_view_on_the_demo_says_there_are_no_deadlines(
    page, live_server, tmp_path, settings, monkeypatch
):
    monkeypatch.setattr(
        "webapp.results.management.commands.load_demo.build_demo", demo_builds.build_demo
    )
    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    call_command("load_demo", "--seeds", "1")
    demo = Experiment.objects.filter(source=Experiment.Source.REFERENCE).order_by("name").first()
    page.goto(f"{live_server.url}{demo.get_absolute_url()}")
    empty = page.locator("#contamination-dates-empty")
    assert empty.is_visible() and empty.inner_text() == contamination.NO_DEADLINES
    assert page.locator("#contamination-dates").count() == 0
    assert "0 of 4" in page.locator("#contamination-dates-table").inner_text()
    assert page.locator("#contamination-familiarity-empty").is_visible()
    section_shot(page, "contamination-demo")
    page.goto(f"{live_server.url}/competitions/demo-wine/")
    assert "never held on Kaggle" in page.locator("#deadline").inner_text()
    assert page.console_errors == []


def test_the_views_of_imported_experiments_compare_and_a_competition(page, live_server, imported):
    """One set-up (two imported experiments, familiarity measured) for the three pages."""
    first, second = imported
    page.goto(f"{live_server.url}{first.get_absolute_url()}")
    page.wait_for_selector("#contamination-dates[data-rendered=true]", timeout=20000)
    points = page.locator("#contamination-dates g.trace.scatter").first.locator("path.point")
    assert points.count() == 75
    legend = page.locator("#contamination-dates .legend").text_content()
    assert "aide-gpt-4o (ρ = -0." in legend and "n = 75" in legend
    assert "knowledge cutoff 2023-10-01" in page.locator("#contamination-dates").text_content()
    table = page.locator("#contamination-dates-table").inner_text()
    assert "75 of 75" in table and "95% CI" in table and "Welch's t-test" in table
    page.wait_for_selector("#contamination-familiarity-medals[data-rendered=true]")
    assert "r = " in page.locator("#contamination-familiarity-medals .legend").text_content()
    assert page.locator("#contamination-familiarity-percentile-empty").is_visible()
    assert no_horizontal_overflow(page)
    section_shot(page, "contamination-imported")
    shot(page, "contamination-imported-page")
    assert page.console_errors == []

    page.goto(f"{live_server.url}/compare/?experiments={first.pk},{second.pk}")
    page.wait_for_selector("#contamination-dates[data-rendered=true]", timeout=20000)
    legend = page.locator("#contamination-dates .legend").text_content()
    assert "aide-gpt-4o" in legend and "aide-o1-preview" in legend
    rows = page.locator("#contamination-dates-table tbody tr")
    assert rows.count() == 2
    assert "no cutoff stated" in rows.nth(1).inner_text()
    assert no_horizontal_overflow(page)
    section_shot(page, "contamination-compare")
    assert page.console_errors == []

    page.goto(f"{live_server.url}/competitions/leaf-classification/")
    assert "2017-02-28" in page.locator("#deadline").inner_text()
    assert "leaderboard" in page.locator("#deadline-source").inner_text()
    assert "fake-base" in page.locator("#familiarity").inner_text()
    assert no_horizontal_overflow(page)
    shot(page, "competition-deadline-familiarity")
    assert page.console_errors == []
