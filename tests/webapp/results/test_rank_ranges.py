"""Intervals, rank ranges and P(A > B) on the site: computed when the figures are stored
(webapp/results/grading/replicates.py), read and ranked per request (the leaderboard's
rank ranges, compare's P(A > B)), ``?split=`` on the leaderboard and its API."""

import csv
import io
import re

import numpy as np
import pytest

from benchmark import intervals
from tests.support.factories import import_runs
from webapp.competitions.services import catalogue_sync
from webapp.results.grading.aggregates import experiment_aggregate_refresh
from webapp.results.grading.replicates import split_replicates
from webapp.results.models import Experiment, ExperimentAggregate, FigureReplicates
from webapp.results.services import agent_get_or_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_imported(tmp_path):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"aide-o1": 3, "mlab-gpt4o": 2})
    return Experiment.objects.get(name="aide-o1"), Experiment.objects.get(name="mlab-gpt4o")


def _row(cid: str, runs: int, medals: int, above: int = 0, valid: int = 0) -> dict:
    return {
        "competition_id": cid,
        "runs": runs,
        "any_medal": medals,
        "above_median": above,
        "valid_submission": valid,
    }


# --- made when the figures are stored -------------------------------------------------------


def test_refresh_stores_replicates_and_writes_the_intervals(two_imported):
    aide, _ = two_imported
    aide.refresh_from_db()
    low = aide.aggregate.figures["splits"]["low"]
    bootstrap = low["bootstrap"]
    assert bootstrap["replicates"] == intervals.REPLICATES and bootstrap["level"] == 0.95
    assert set(bootstrap["intervals"]) == {
        "any_medal_percentage",
        "above_median_percentage",
        "valid_submissions_percentage",
    }
    for name, found in bootstrap["intervals"].items():
        assert 0 <= found["lower"] <= low["metrics"][name]["mean"] <= found["upper"] <= 100
    summary = aide.aggregate.summary["low"]
    any_medal = bootstrap["intervals"]["any_medal_percentage"]
    assert (summary["interval_lower"], summary["interval_upper"]) == (
        any_medal["lower"],
        any_medal["upper"],
    )
    stored = FigureReplicates.objects.get(experiment=aide, split="low", clean=False)
    values = intervals.from_bytes(bytes(stored.values))
    assert len(values) == intervals.REPLICATES
    assert intervals.interval(values) == pytest.approx((any_medal["lower"], any_medal["upper"]))
    assert FigureReplicates.objects.filter(experiment=aide, split="low", clean=True).exists()


def test_a_refresh_draws_the_same_replicates_again(two_imported):
    aide, _ = two_imported
    before = bytes(FigureReplicates.objects.get(experiment=aide, split="low", clean=False).values)
    experiment_aggregate_refresh(aide.pk)
    after = FigureReplicates.objects.filter(experiment=aide, split="low", clean=False)
    assert after.count() == 1 and bytes(after.get().values) == before


def test_known_small_cases():
    every = [_row(f"c{i}", 3, 3, 3, 3) for i in range(5)]
    none = [_row(f"c{i}", 3, 0) for i in range(5)]
    for rows, figure in ((every, 100.0), (none, 0.0)):
        found = split_replicates(
            {"per_competition": rows}, split="low", clean=False, experiment_id=1
        )
        assert set(found["any_medal_percentage"].tolist()) == {figure}
    assert (
        split_replicates({"per_competition": []}, split="low", clean=False, experiment_id=1) == {}
    )


def test_a_single_seed_varies_only_with_the_competitions_drawn():
    rows = [_row("a", 1, 1), _row("b", 1, 0)]
    found = split_replicates({"per_competition": rows}, split="x", clean=False, experiment_id=1)
    # One run per competition: a draw of its seeds is that run, so each replicate is the
    # share of draws that picked "a".
    draws = intervals.competition_resamples(2, split="x")
    expected = (draws == 0).mean(axis=1) * 100
    assert np.allclose(found["any_medal_percentage"], expected)


def test_a_competition_without_runs_counts_as_no_medal():
    rows = [_row("a", 0, 0), _row("b", 2, 2)]
    found = split_replicates({"per_competition": rows}, split="x", clean=False, experiment_id=1)
    draws = intervals.competition_resamples(2, split="x")
    assert np.allclose(found["any_medal_percentage"], (draws == 1).mean(axis=1) * 100)


def test_every_experiment_of_a_split_is_drawn_on_the_same_competitions():
    # Competitions in any order: lined up by id. With one seed nothing else is drawn, so
    # the same outcomes give the same replicates whoever ran them.
    rows = [_row(f"c{i}", 1, i % 2) for i in range(10)]
    a = split_replicates({"per_competition": rows}, split="low", clean=False, experiment_id=1)
    b = split_replicates({"per_competition": rows[::-1]}, split="low", clean=False, experiment_id=2)
    assert np.array_equal(a["any_medal_percentage"], b["any_medal_percentage"])
    clean = split_replicates({"per_competition": rows}, split="low", clean=True, experiment_id=1)
    assert not np.array_equal(a["any_medal_percentage"], clean["any_medal_percentage"])


# --- ranked per request ---------------------------------------------------------------------


def _stored_entry(name: str, replicates: list[float], mean: float) -> Experiment:
    """A published experiment whose figures on low are ``mean`` and whose stored
    replicates are ``replicates`` repeated to the bootstrap's count."""
    experiment = Experiment.objects.create(
        name=name, agent=agent_get_or_create(f"s-{name}", f"m-{name}"), is_published=True
    )
    summary = {
        "low": {
            "mean": mean,
            "standard_error": 1.0,
            "n_seeds": 3,
            "n_competitions": 22,
            # As a refresh stores them, from these replicates.
            "interval_lower": min(replicates),
            "interval_upper": max(replicates),
        }
    }
    ExperimentAggregate.objects.create(experiment=experiment, summary=summary, n_reports=66)
    values = np.resize(np.array(replicates, dtype=np.float32), intervals.REPLICATES)
    FigureReplicates.objects.create(
        experiment=experiment,
        split="low",
        metric="any_medal_percentage",
        values=intervals.to_bytes(values),
    )
    return experiment


@pytest.fixture
def three_stored():
    catalogue_sync()
    return (
        _stored_entry("ahead", [90.0], 90.0),
        _stored_entry("close-one", [50.0, 40.0], 45.0),
        _stored_entry("close-two", [40.0, 50.0], 45.0),
    )


def test_rank_ranges_show_entries_that_cannot_be_told_apart_as_tied(client, three_stored):
    ahead, one, two = three_stored
    entries = {e["id"]: e for e in client.get("/api/leaderboard/").json()["entries"]}
    assert (entries[ahead.pk]["rank_low"], entries[ahead.pk]["rank_high"]) == (1, 1)
    assert not entries[ahead.pk]["tied"]
    for e in (one, two):
        assert (entries[e.pk]["rank_low"], entries[e.pk]["rank_high"]) == (2, 3)
        assert entries[e.pk]["tied"]
        assert entries[e.pk]["interval"]["split"] == "low"
        assert entries[e.pk]["interval"]["method"].startswith("hierarchical bootstrap")
    assert entries[ahead.pk]["interval"]["lower"] == entries[ahead.pk]["interval"]["upper"] == 90
    html = client.get("/").content.decode()
    for e, shown in ((ahead, "1"), (one, "2–3"), (two, "2–3")):
        row = re.search(rf'<tr data-experiment="{e.pk}">.*?</tr>', html, re.S).group(0)
        assert re.search(rf'<td class="num" data-value="\d+" title="[^"]*"[^>]*>{shown}</td>', row)
    assert 'id="rank-ranges-note"' in html and "(2 of 3 here)" in html


def test_figures_without_stored_replicates_are_ranked_from_their_mean_and_sem(client, three_stored):
    # Being recomputed (the migration marks figures stored before replicates due).
    ahead, one, two = three_stored
    FigureReplicates.objects.filter(experiment=one).delete()
    entries = {e["id"]: e for e in client.get("/api/leaderboard/").json()["entries"]}
    assert entries[one.pk]["interval"]["method"].startswith("normal")
    assert entries[one.pk]["interval"]["lower"] < 45 < entries[one.pk]["interval"]["upper"]
    assert entries[ahead.pk]["rank_low"] == 1


def test_published_figures_get_an_interval_wider_than_their_sem(client, three_stored):
    published = Experiment.objects.create(
        name="published",
        agent=agent_get_or_create("pub-s", "pub-m"),
        source=Experiment.Source.REPORTED,
        is_published=True,
        published_figures={"low": {"mean": 60.0, "standard_error": 1.0}},
    )
    entries = {e["id"]: e for e in client.get("/api/leaderboard/").json()["entries"]}
    found = entries[published.pk]["interval"]
    assert found["method"].startswith("normal")
    assert found["lower"] < 60 - 1.96 and found["upper"] > 60 + 1.96
    assert entries[published.pk]["splits"]["low"]["interval_lower"] == found["lower"]
    assert entries[published.pk]["rank_low"] <= 2 <= entries[published.pk]["rank_high"]


def test_the_csv_has_the_ranges_and_intervals(client, three_stored):
    ahead, one, _ = three_stored
    rows = {
        int(r["id"]): r
        for r in csv.DictReader(io.StringIO(client.get("/", {"format": "csv"}).content.decode()))
    }
    assert (rows[ahead.pk]["rank_low"], rows[ahead.pk]["rank_high"]) == ("1", "1")
    assert (rows[one.pk]["rank_low"], rows[one.pk]["rank_high"]) == ("2", "3")
    assert float(rows[one.pk]["low_interval_lower"]) == 40.0


# --- ?split= ---------------------------------------------------------------------------------


def test_the_split_asked_for_picks_what_ranks(client, two_imported):
    aide, mlab = two_imported
    for name in ("low", "lite", "LOW", "low.txt"):
        body = client.get("/api/leaderboard/", {"split": name}).json()
        ranked = [e for e in body["entries"] if e["rank"]]
        assert {e["ranked_on"] for e in ranked} == {"low"}, name
        assert all(e["interval"]["split"] == "low" for e in ranked)
        assert all(e["rank_low"] <= e["rank"] <= e["rank_high"] for e in ranked)
    # A split nobody has figures on: every entry listed, none ranked.
    body = client.get("/api/leaderboard/", {"split": "high"}).json()
    assert {e["rank"] for e in body["entries"]} == {None}
    page = client.get("/", {"split": "lite"}).content.decode()
    assert "Ranked on Any Medal % on Low (Lite)" in page
    assert re.search(r'<option value="low" selected>Low \(Lite\)</option>', page)


@pytest.mark.parametrize("url", ["/", "/api/leaderboard/", "/?format=json"])
@pytest.mark.parametrize("name", ["nope", "ran", "spaceship-titanic"])
def test_an_unknown_split_is_a_400_naming_the_valid_ones(client, two_imported, url, name):
    response = client.get(url, {"split": name})
    assert response.status_code == 400
    text = response.content.decode()
    assert "split" in text and "lite" in text and "medium" in text
    if url.startswith("/api/"):
        body = response.json()
        assert "low" in body["valid"] and "ran" not in body["valid"]


# --- compare ---------------------------------------------------------------------------------


def test_compare_gives_p_a_greater_from_the_paired_replicates(client, two_imported):
    aide, mlab = two_imported
    body = client.get("/api/compare/", {"experiments": f"{aide.pk},{mlab.pk}"}).json()
    (comparison,) = body["comparisons"]
    found = comparison["probability_greater"]
    a, b = (
        intervals.from_bytes(
            bytes(FigureReplicates.objects.get(experiment=e, split="low", clean=False).values)
        )
        for e in (aide, mlab)
    )
    assert found["value"] == pytest.approx(intervals.probability_greater(a, b))
    assert found["paired"] and found["replicates"] == intervals.REPLICATES
    page = client.get("/compare/", {"experiments": f"{aide.pk},{mlab.pk}"}).content.decode()
    assert f"P(aide-o1 &gt; mlab-gpt4o) {found['text']}" in page
    # The other way round, the complement.
    back = client.get("/api/compare/", {"experiments": f"{mlab.pk},{aide.pk}"}).json()
    assert back["comparisons"][0]["probability_greater"]["value"] == pytest.approx(
        1 - found["value"]
    )


def test_p_a_greater_is_said_without_false_certainty(client, three_stored):
    from webapp.results.selectors import _probability_greater

    ahead, one, _ = three_stored
    by_split = {
        ahead.pk: {"low": {"mean": 90.0, "standard_error": 1.0, "source": "reports"}},
        one.pk: {"low": {"mean": 45.0, "standard_error": 1.0, "source": "reports"}},
    }
    stored = {e.pk: FigureReplicates.objects.get(experiment=e).values for e in (ahead, one)}
    assert _probability_greater(ahead, one, "low", by_split, stored)["text"] == "> 0.99"
    assert _probability_greater(one, ahead, "low", by_split, stored)["text"] == "< 0.01"


# --- the experiment's API ---------------------------------------------------------------------


def test_the_experiment_api_carries_the_intervals(client, two_imported):
    aide, _ = two_imported
    figures = client.get(f"/api/experiments/{aide.pk}/").json()["figures"]
    found = figures["low"]["bootstrap"]["intervals"]["any_medal_percentage"]
    assert found["lower"] <= figures["low"]["metrics"]["any_medal_percentage"]["mean"]
    assert found["upper"] >= figures["low"]["metrics"]["any_medal_percentage"]["mean"]
    page = client.get(f"/experiments/{aide.pk}/").content.decode()
    assert 'id="any-medal-bootstrap"' in page
