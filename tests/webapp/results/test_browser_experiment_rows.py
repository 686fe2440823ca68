"""The experiment page's per-competition table in a browser, folded (67 seeds) and not
(3 seeds). Screenshots go to test-artifacts/."""

import pytest

from tests.support.browser import shot
from tests.support.factories import import_runs
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def experiments(tmp_path):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"many-seeds": 67, "few-seeds": 3})
    return {e.name: e for e in Experiment.objects.all()}


def test_folded_table_sorts_and_opens_a_competitions_seeds(page, live_server, experiments):
    page.goto(f"{live_server.url}/experiments/{experiments['many-seeds'].pk}/")
    rows = page.locator("#reports tbody tr")
    assert rows.count() == 22
    page.click("#reports th:has-text('Medals')")
    shares = [
        float(v)
        for v in page.locator("#reports tbody td.medal-counts").evaluate_all(
            "cells => cells.map(c => c.dataset.value)"
        )
    ]
    assert shares == sorted(shares, reverse=True)
    assert "of 67 seeds" in rows.first.inner_text()
    shot(page, "experiment-folded")
    rows.first.locator("a.seeds-link").click()
    page.wait_for_selector("#seed-rows")
    assert page.locator("#seed-rows tbody tr").count() == 67
    assert page.locator("#seed-rows a.run-link").count() == 67
    shot(page, "experiment-folded-seeds")
    page.click("#all-competitions")
    assert page.locator("#seed-rows").count() == 0
    assert page.console_errors == []


def test_a_few_seeds_stay_one_row_each(page, live_server, experiments):
    page.goto(f"{live_server.url}/experiments/{experiments['few-seeds'].pk}/")
    assert page.locator("#reports tbody tr").count() == 22 * 3
    assert page.locator("#reports a.run-link").count() == 22 * 3
    shot(page, "experiment-few-seeds")
    assert page.console_errors == []
