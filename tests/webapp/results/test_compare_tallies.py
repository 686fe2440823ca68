"""The compare page's per-competition counts are those the split's stored figures were
computed from (``webapp.results.grading.aggregates``): each experiment's medal rates average to
its Any Medal % on the split, the verdicts are counted from the levels and scores shown,
and the page and /api/compare/ agree."""

import pytest

from benchmark.compare import level_of, tally
from benchmark.reports import CompetitionReport
from tests.support.factories import import_runs
from webapp.competitions.services import catalogue_sync
from webapp.results.grading.aggregates import counted_reports
from webapp.results.models import Experiment

pytestmark = pytest.mark.django_db


def test_comparison_counts_are_the_figures_counts(client, tmp_path):
    from benchmark.compare import SeedResult

    catalogue_sync()
    import_runs(tmp_path / "runs", {"a": 4, "b": 3}, seed=11)
    a, b = Experiment.objects.order_by("pk")
    api = client.get(f"/api/compare/?experiments={a.pk},{b.pk}&split=low").json()
    (comparison,) = api["comparisons"]
    assert comparison["kind"] == "paired" and api["split"] == "low"
    by_split = api["any_medal_by_split"]
    assert comparison["a_any_medal_percentage"] == pytest.approx(by_split[str(a.pk)]["low"]["mean"])
    assert comparison["b_any_medal_percentage"] == pytest.approx(by_split[str(b.pk)]["low"]["mean"])

    # Each row: the experiment's seeds of that competition, counted one by one.
    def seeds_of(experiment) -> dict[str, list[CompetitionReport]]:
        out: dict[str, list] = {}
        for report in counted_reports(experiment.pk):
            out.setdefault(report.competition_id, []).append(report)
        return out

    def expected(reports):
        return tally(
            [
                SeedResult(
                    any_medal=bool(r.gold_medal or r.silver_medal or r.bronze_medal),
                    level=level_of(r),
                    score=r.score,
                )
                for r in reports
            ]
        )

    seeds_a, seeds_b = seeds_of(a), seeds_of(b)
    verdicts = {"win": 0, "tie": 0, "loss": 0}
    for row in comparison["per_competition"]:
        want_a, want_b = (
            expected(seeds_a[row["competition_id"]]),
            expected(seeds_b[row["competition_id"]]),
        )
        assert row["a_medal_rate"] == want_a.medals / want_a.seeds
        assert row["b_level"] == pytest.approx(want_b.mean_level)
        assert row["a_score"] == pytest.approx(want_a.mean_score)
        verdicts[row["result"]] += 1
    assert (comparison["wins"], comparison["ties"], comparison["losses"]) == (
        verdicts["win"],
        verdicts["tie"],
        verdicts["loss"],
    )


def test_compare_page_and_api_agree(client, tmp_path):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"a": 7, "b": 6}, seed=12)
    a, b = Experiment.objects.order_by("pk")
    api = client.get(f"/api/compare/?experiments={a.pk},{b.pk}").json()
    (comparison,) = api["comparisons"]
    assert comparison["kind"] == "paired"
    page = client.get(f"/compare/?experiments={a.pk},{b.pk}").content.decode()
    assert comparison["sentence"].replace("'", "&#x27;") in page
    # The rule that decides a competition is said, and each row says what decided it.
    assert comparison["decision_rule"].replace("'", "&#x27;") in page
    for row in comparison["per_competition"]:
        assert f'data-competition="{row["competition_id"]}" data-result="{row["result"]}"' in page
    # The figures shown are those of the compared split.
    assert 'id="compare-funnels"' in page and 'id="compare-pass-at-k"' in page


def test_figures_stored_before_the_levels_are_compared_once_recomputed(client, tmp_path):
    """Figures stored by an earlier version carry no outcome levels: compare says they are
    being recomputed (the migration marked them due) instead of guessing a verdict."""
    from webapp.results.grading.aggregates import experiment_aggregate_refresh
    from webapp.results.models import ExperimentAggregate

    catalogue_sync()
    import_runs(tmp_path / "runs", {"a": 2, "b": 2}, seed=13)
    a, b = Experiment.objects.order_by("pk")
    aggregate = ExperimentAggregate.objects.get(experiment=a)
    for row in aggregate.figures["splits"]["low"]["per_competition"]:
        del row["level_sum"], row["mean_score"]
    aggregate.save()
    query = {"experiments": f"{a.pk},{b.pk}", "split": "low"}
    (comparison,) = client.get("/api/compare/", query).json()["comparisons"]
    assert "being recomputed" in comparison["error"]
    assert client.get("/compare/", query).status_code == 200
    experiment_aggregate_refresh(a.pk)
    (comparison,) = client.get("/api/compare/", query).json()["comparisons"]
    assert "error" not in comparison and comparison["kind"] == "paired"
