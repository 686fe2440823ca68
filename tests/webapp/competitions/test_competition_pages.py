"""The competition pages: scores and thresholds without float noise, agents' scores best
first in the metric's direction, the catalogue's total broken down by where it comes from."""

import re

import pytest
from django.urls import reverse

from webapp.competitions.models import Competition, PrivateLeaderboard
from webapp.competitions.services import catalogue_sync
from webapp.results.models import GradeReport

pytestmark = pytest.mark.django_db

# A score as float arithmetic leaves it: 0.137555 with noise in the last digits.
NOISY = 0.13755499999999998


def _board(competition, **thresholds):
    values = {"gold": 0.9, "silver": 0.8, "bronze": 0.7, "median": 0.5, **thresholds}
    board = PrivateLeaderboard.objects.create(
        competition=competition,
        version=1,
        source_format="mlebench",
        n_teams=10,
        lower_is_better=competition.lower_is_better,
        **{f"{k}_threshold": v for k, v in values.items()},
    )
    board.entries.bulk_create(
        [
            board.entries.model(leaderboard=board, position=i + 1, score=1 - i / 10)
            for i in range(10)
        ]
    )
    return board


def test_scores_and_thresholds_print_without_float_noise(client, imported):
    report = GradeReport.objects.filter(is_current=True, score__isnull=False).first()
    report.score = NOISY
    report.median_threshold = NOISY
    report.save()
    competition = report.competition
    _board(competition, median=NOISY)
    for url in (
        reverse("competition-detail", args=[competition.slug]),
        reverse("experiment-detail", args=[report.experiment_id]),
    ):
        # Figure data (JSON for Plotly) keeps raw values; what people read does not.
        html = re.sub(r"<script.*?</script>", "", client.get(url).content.decode(), flags=re.S)
        assert "0.13755499999999998" not in html, url
        assert "0.137555" in html, url
    # The API stays raw.
    api = client.get(reverse("api-experiment-reports", args=[report.experiment_id]))
    assert api.status_code == 200
    assert "0.13755499999999998" in api.content.decode()


# Agent scores on a competition page: best first, in the metric's direction.


@pytest.mark.parametrize("lower_is_better", [False, True])
def test_agent_scores_are_sorted_by_score(client, imported, lower_is_better):
    report = GradeReport.objects.filter(is_current=True).first()
    competition = report.competition
    Competition.objects.filter(pk=competition.pk).update(lower_is_better=lower_is_better)
    reports = GradeReport.objects.filter(competition=competition, is_current=True)
    for i, r in enumerate(reports.order_by("pk")):
        r.score = None if i == 0 else [0.5, 0.9, 0.1, 0.7, 0.3][i % 5]
        r.save()
    html = client.get(reverse("competition-detail", args=[competition.slug])).content.decode()
    table = re.search(r'<table class="data" id="agent-scores">.*?</table>', html, re.S).group(0)
    rows = re.findall(r"<tr><td><a .*?</tr>", table, re.S)
    shown = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[2].strip() for row in rows]
    scores = [float(c) for c in shown if not c.startswith("<")]
    assert scores == sorted(scores, reverse=not lower_is_better)
    assert len(scores) == reports.count() - 1
    assert "no submission" in shown[-1] or "invalid" in shown[-1]  # no score: last


# The competitions page says how its total divides: MLE-bench's 75 + 7 dev + 4 demo.


def test_competitions_page_shows_the_split_of_the_total(client):
    catalogue_sync()
    html = client.get(reverse("competition-list")).content.decode()
    text = re.sub(
        r"<[^>]+>", "", re.search(r'<p id="catalogue-breakdown">(.*?)</p>', html, re.S).group(1)
    )
    total = Competition.objects.count()
    assert text.startswith(f"{total} competitions: MLE-bench's 75 (22 low, 38 medium, 15 high")
    assert "+ 7 dev" in text
    if Competition.objects.filter(splits__slug="demo").exists():
        assert "+ 4 demo" in text
        assert total == 75 + 7 + 4
