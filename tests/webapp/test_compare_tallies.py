"""The compare page's medal counts come from the database: the same as counting each
report's outcome in Python, and the page and /api/compare/ agree."""

import pytest

from benchmark.compare import SeedResult, outcome_level, tally
from webapp.competitions.services import catalogue_sync
from webapp.results import selectors
from webapp.results.models import Experiment, GradeReport

from .factories import import_runs

pytestmark = pytest.mark.django_db


def test_medal_tallies_count_what_each_report_says(tmp_path):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"a": 4, "b": 3}, seed=11)
    ids = list(Experiment.objects.order_by("pk").values_list("pk", flat=True))
    expected: dict[int, dict[str, list]] = {i: {} for i in ids}
    for r in GradeReport.objects.filter(is_current=True).select_related("competition"):
        expected[r.experiment_id].setdefault(r.competition.slug, []).append(
            SeedResult(
                any_medal=bool(r.gold_medal or r.silver_medal or r.bronze_medal),
                level=outcome_level(
                    valid=r.valid_submission,
                    above_median=r.above_median,
                    bronze=r.bronze_medal,
                    silver=r.silver_medal,
                    gold=r.gold_medal,
                ),
            )
        )
    tallies = selectors.medal_tallies(ids)
    assert tallies == {
        i: {slug: tally(seeds) for slug, seeds in by_slug.items()}
        for i, by_slug in expected.items()
    }


def test_compare_page_and_api_agree(client, tmp_path):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"a": 7, "b": 6}, seed=12)
    a, b = Experiment.objects.order_by("pk")
    api = client.get(f"/api/compare/?experiments={a.pk},{b.pk}").json()
    (comparison,) = api["comparisons"]
    assert comparison["kind"] == "paired"
    page = client.get(f"/compare/?experiments={a.pk},{b.pk}").content.decode()
    assert comparison["sentence"].replace("'", "&#x27;") in page
    # The figures shown are those of the compared split.
    assert 'id="compare-funnels"' in page and 'id="compare-pass-at-k"' in page
