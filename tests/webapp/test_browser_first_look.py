"""What a new user meets on the site ``make run`` starts (the demo and MLE-bench's published
leaderboard), in a real browser at the width each page was found wanting, with
screenshots in test-artifacts/."""

import pytest

from webapp.results.models import Experiment

from .conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def _references():
    return Experiment.objects.filter(source=Experiment.Source.REFERENCE).order_by("pk")


def test_synthetic_references_are_apart_from_the_agents(page, live_server, demo_and_published):
    page.set_viewport_size(LAPTOP)
    page.goto(live_server.url + "/")
    page.wait_for_selector("#leaderboard-dots[data-rendered=true]", timeout=15000)
    references = {str(e.pk) for e in _references()}
    agents = page.locator("#leaderboard tbody tr[data-experiment]")
    assert agents.count() == Experiment.objects.exclude(source="reference").count()
    assert not {r.get_attribute("data-experiment") for r in agents.all()} & references
    # The chart draws the agents' rows, no reference.
    drawn = page.evaluate("document.getElementById('leaderboard-dots').data[0].y")
    assert len(drawn) == agents.count()
    assert not [name for name in drawn if name.startswith("Demo reference")]
    # The references: a section of their own, unranked, said to be synthetic.
    section = page.locator("#references")
    assert "Synthetic references, not agents" in section.locator("h2").inner_text()
    rows = section.locator("#references-table tbody tr[data-experiment]")
    assert {r.get_attribute("data-experiment") for r in rows.all()} == references
    assert set(rows.locator("td:nth-child(2)").all_inner_texts()) == {"—"}
    section.scroll_into_view_if_needed()
    shot(page, "first-look-references-apart")
    assert page.console_errors == []


def test_the_integrity_column_says_what_its_number_counts(page, live_server, demo_and_published):
    from webapp.results.models import ExperimentAggregate

    best = Experiment.objects.exclude(published_figures={}).order_by("pk").first()
    ExperimentAggregate.objects.update_or_create(experiment=best, defaults={"runs_checked": 8})
    page.set_viewport_size(LAPTOP)
    page.goto(live_server.url + "/")
    cell = page.locator(f'#leaderboard tr[data-experiment="{best.pk}"] td.integrity')
    assert cell.inner_text().strip() == "8 checked"
