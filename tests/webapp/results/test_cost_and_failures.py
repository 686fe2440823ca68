"""Tokens per run, per experiment and per medal; why runs fail; uploaded snapshots drawn
against hours; the same agent under other conditions on compare. From an upload that
declares tokens and carries MLE-bench's run records (``cost_cases``)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from benchmark.cost import Price
from tests.support.cost_cases import PLAN, upload_costed_experiment
from webapp.results.models import Experiment, GradeReport, Run
from webapp.results.pages.failures import experiment_failures
from webapp.results.pages.tokens import experiment_tokens
from webapp.results.uploads.input import upload_metadata
from webapp.runs.selectors import time_scaling

pytestmark = pytest.mark.django_db


@pytest.fixture
def costed(tmp_path, settings, alice, media):
    from tests.support.demo_builds import demo_site

    build = demo_site(tmp_path, settings, competitions=("demo-wine", "demo-digits"))
    settings.MLEBOARD_LLM_PRICES = {"gpt-4o": Price(2.5, 10.0)}
    return build, upload_costed_experiment(alice, build)


def owner_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.slow
def test_declared_tokens_per_run_experiment_and_medal(costed, alice):
    _, experiment = costed
    figures = experiment_tokens(experiment)
    prompt = sum(p for p, *_ in PLAN.values())
    completion = sum(c for _, c, *_ in PLAN.values())
    assert figures["source"] == "declared" and figures["runs_with_tokens"] == 6
    assert (figures["prompt_tokens"], figures["completion_tokens"]) == (prompt, completion)
    medals = GradeReport.objects.filter(experiment=experiment, is_current=True, any_medal=True)
    assert figures["medals"] == medals.count() >= 1
    assert figures["per_medal"] == (prompt + completion) / medals.count()
    assert figures["cost"] == pytest.approx((prompt * 2.5 + completion * 10) / 1e6)
    page = owner_client(alice).get(experiment.get_absolute_url()).content.decode()
    assert 'id="tokens-total"' in page and f"{prompt + completion:,}" in page
    assert "declared by the upload, not checked" in page
    assert "cost estimate" in page and "estimate</strong> at the operator's price" in page


def test_a_total_declared_for_the_experiment(tmp_path, settings, alice, media):
    from tests.support.demo_builds import demo_site

    build = demo_site(tmp_path, settings, competitions=("demo-wine", "demo-digits"))
    meta = upload_metadata(
        json.dumps(
            {
                "scaffold": "aide",
                "model": "o1",
                "usage": {"prompt_tokens": 600, "completion_tokens": 60},
            }
        )
    )
    experiment = upload_costed_experiment(alice, build, metadata=meta, grade=False)
    Run.objects.filter(experiment=experiment).update(llm_usage=None)  # no per-run figures
    figures = experiment_tokens(Experiment.objects.get(pk=experiment.pk))
    assert figures["declared_for_experiment"] and figures["per_run"]["total"] == 110
    with pytest.raises(ValueError, match="usage: prompt_tokens must be a whole number"):
        upload_metadata(json.dumps({"scaffold": "a", "model": "m", "usage": {"prompt_tokens": -3}}))


def test_the_failure_table_of_an_upload_and_the_runs_behind_each_figure(costed, alice):
    _, experiment = costed
    table = experiment_failures(experiment)
    modes = {row["key"]: row for row in table["modes"]}
    run = {
        (r.competition.slug, r.seed): r.pk
        for r in Run.objects.filter(experiment=experiment).select_related("competition")
    }
    assert set(modes["never_validated"]["runs"]) == {run["demo-wine", 1], run["demo-digits", 1]}
    assert modes["never_validated"]["of"] == 5  # the harness failure had no chance
    assert modes["validated_still_invalid"]["runs"] == [run["demo-wine", 2]]
    assert set(modes["stopped_early"]["runs"]) == {run["demo-wine", 1]}
    assert modes["harness_error"]["runs"] == [run["demo-digits", 2]]
    assert modes["harness_error"]["of"] == 6 and modes["out_of_memory"]["of"] == 1
    assert modes["no_submission"]["runs"] == [run["demo-digits", 2]]
    classes = {row["key"]: row["runs"] for row in table["invalid_by_class"]}
    assert set(classes["columns"]) == {run["demo-wine", 1], run["demo-wine", 2]}

    client = owner_client(alice)
    page = client.get(experiment.get_absolute_url()).content.decode()
    link = f"/experiments/{experiment.pk}/failures/invalid_columns/"
    assert link in page
    listed = client.get(link).content.decode()
    assert "demo-wine" in listed and f"/runs/result/{run['demo-wine', 2]}/" in listed
    assert "Submission is missing 1 column" in listed
    assert client.get(f"/experiments/{experiment.pk}/failures/nonsense/").status_code == 404
    # Another user sees neither the experiment nor its failures.
    assert Client().get(link).status_code == 404


def test_uploaded_snapshots_are_graded_and_drawn_against_hours(costed, alice):
    _, experiment = costed
    curve = time_scaling(experiment.pk)
    assert [round(p["elapsed_hours"], 3) for p in curve] == [0.167, 0.5]
    assert curve[0]["any_medal_percentage"] == 0
    assert curve[-1]["any_medal_percentage"] == pytest.approx(100 * 2 / 6)
    page = owner_client(alice).get(experiment.get_absolute_url()).content.decode()
    assert 'id="time-scaling-data"' in page


def test_compare_shows_cost_effectiveness_failures_and_twins(costed, alice, tmp_path, settings):
    build, experiment = costed
    longer = upload_costed_experiment(
        alice, build, metadata={"runtime_hours": 4.0, "name": "aide 4 h"}, note="4 h"
    )
    client = owner_client(alice)
    page = client.get(f"/compare/?experiments={experiment.pk},{longer.pk}").content.decode()
    assert 'id="twins"' in page and "time limit differ" in page
    assert "1xA10 · 1 h · original" in page and "1xA10 · 4 h · original" in page
    assert 'id="compare-medal-tokens-data"' in page
    assert 'id="compare-pass-at-k-tokens-data"' in page
    assert 'id="compare-failure-table"' in page
    assert f"/experiments/{longer.pk}/failures/harness_error/" in page
