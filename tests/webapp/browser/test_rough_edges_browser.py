"""Rough edges where layout matters, in a real browser, with screenshots in test-artifacts/."""

import pytest

from tests.support.browser import shot
from webapp.competitions.models import Competition, PrivateLeaderboard
from webapp.results.models import Experiment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _overlap(a, b) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def test_close_medal_lines_have_labels_that_do_not_overlap(page, live_server, site):
    board = PrivateLeaderboard.objects.get(competition__slug="spaceship-titanic", is_current=True)
    # Medal lines a few teams apart, as on many real leaderboards.
    PrivateLeaderboard.objects.filter(pk=board.pk).update(
        gold_threshold=0.8460,
        silver_threshold=0.8454,
        bronze_threshold=0.8440,
        median_threshold=0.13755499999999998,
    )
    page.goto(live_server.url + "/competitions/spaceship-titanic/")
    page.wait_for_selector("#leaderboard-distribution[data-rendered=true]", timeout=15000)
    labels = page.locator("#leaderboard-distribution .annotation")
    assert labels.count() == 4
    boxes = [labels.nth(i).bounding_box() for i in range(4)]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not _overlap(a, b), (a, b)
    assert "0.13755499999999998" not in page.locator("#thresholds").inner_text()
    shot(page, "rough-competition-medal-labels")
    assert page.console_errors == []


def test_rough_edge_pages_render(page, live_server, site):
    experiment = Experiment.objects.get(name="aide-o1")
    aggregate = experiment.aggregate
    metric = aggregate.figures["splits"]["low"]["metrics"]["any_medal_percentage"]
    metric.update({"ci_lower": 1.3, "ci_upper": 132.0})
    aggregate.save()
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/?split=low")
    assert "95% CI 1.3–100.0" in page.locator("#headline").inner_text()
    shot(page, "rough-experiment-clipped-ci")
    page.goto(live_server.url + "/")
    page.wait_for_selector("#leaderboard-dots[data-rendered=true]", timeout=15000)
    assert page.locator("#leaderboard-dots .point").count() >= 1
    shot(page, "rough-leaderboard-dots")
    page.goto(live_server.url + "/competitions/")
    assert "MLE-bench's 75" in page.locator("#catalogue-breakdown").inner_text()
    shot(page, "rough-competitions-breakdown")
    page.goto(live_server.url + "/no/such/page/")
    shot(page, "rough-404")
    page.console_errors.clear()  # the 404 itself
    page.goto(live_server.url + "/api/schema/")
    assert page.locator("#api-links").count() == 1
    shot(page, "rough-api-schema")
    page.goto(live_server.url + "/api/redoc/")
    assert page.locator("#site-bar").count() == 1
    page.goto(live_server.url + "/api/docs/")
    page.wait_for_selector(".swagger-ui", timeout=15000)
    shot(page, "rough-swagger")
    assert Competition.objects.exists()
    assert page.console_errors == []
