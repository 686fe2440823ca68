import json
import re
import subprocess
import sys

import pytest
from django.urls import reverse

from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment, GradeReport

pytestmark = pytest.mark.django_db


def test_import_grading_reports_creates_reported_experiments(imported):
    assert Experiment.objects.count() == 2
    aide = Experiment.objects.get(name="aide-o1")
    assert aide.source == Experiment.Source.REPORTED
    assert GradeReport.objects.filter(experiment=aide).count() == 22 * 3
    assert set(GradeReport.objects.filter(experiment=aide).values_list("seed", flat=True)) == {
        0,
        1,
        2,
    }


def test_page_figures_equal_mleboard_aggregate(imported):
    aide = Experiment.objects.get(name="aide-o1")
    reports = sorted(str(p) for p in imported.glob("*aide-o1*/*grading_report.json"))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "aggregate",
            "--reports",
            *reports,
            "--split",
            "low",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    cli = json.loads(out.stdout)
    cli_metrics = cli["metrics"] if "metrics" in cli else cli
    stored = aide.aggregate.figures["splits"]["low"]["metrics"]
    for name in ("any_medal_percentage", "valid_submissions_percentage", "above_median_percentage"):
        for key in ("mean", "standard_error", "ci_lower", "ci_upper"):
            assert stored[name][key] == pytest.approx(cli_metrics[name][key], abs=1e-9)


def test_home_shows_any_medal_per_split(client, imported):
    response = client.get(reverse("home"))
    assert response.status_code == 200
    html = response.content.decode()
    aide = Experiment.objects.get(name="aide-o1")
    mean = aide.aggregate.figures["splits"]["low"]["metrics"]["any_medal_percentage"]["mean"]
    assert "aide-o1" in html and "Low (Lite)" in html
    assert f"{mean:.1f}" in html
    assert "Server-Timing" in response.headers


def test_experiment_page_has_funnel_and_reports(client, imported):
    aide = Experiment.objects.get(name="aide-o1")
    response = client.get(reverse("experiment-detail", args=[aide.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    figure = json.loads(
        re.search(
            r'<script id="funnel-data" type="application/json">(.*?)</script>', html, re.S
        ).group(1)
    )
    labels = figure["data"][0]["x"]
    assert labels[:3] == ["Made submission", "Valid", "Above median"]
    assert len(figure["data"][1]["y"]) == 4 * 3  # every seed's value of every stage
    assert html.count("<tr>") >= 22 * 3


def test_unpublished_experiment_is_hidden_from_others(client, imported, django_user_model):
    aide = Experiment.objects.get(name="aide-o1")
    aide.is_published = False
    aide.owner = django_user_model.objects.create_user("owner", password="pw-123456")
    aide.save()
    assert client.get(reverse("experiment-detail", args=[aide.pk])).status_code == 404
    assert client.get(f"/api/experiments/{aide.pk}/").status_code == 404
    client.login(username="owner", password="pw-123456")
    assert client.get(reverse("experiment-detail", args=[aide.pk])).status_code == 200


def test_competition_list_filters(client):
    catalogue_sync()
    html = client.get(reverse("competition-list"), {"split": "low"}).content.decode()
    assert "22 competitions" in html
    html = client.get(reverse("competition-list"), {"complexity": "high"}).content.decode()
    assert "15 competitions" in html
    html = client.get(
        reverse("competition-list"), {"category": "Tabular", "split": "all"}
    ).content.decode()
    assert re.search(r"\d+ competitions?", html)


def test_api_schema_and_docs_without_cdn(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    docs = client.get("/api/docs/").content.decode()
    assert "cdn" not in docs.lower() and "/static/drf_spectacular_sidecar/" in docs


def test_api_leaderboard_and_compare_give_the_page_figures(client, imported):
    aide, mlab = Experiment.objects.get(name="aide-o1"), Experiment.objects.get(name="mlab-gpt4o")
    entries = client.get("/api/leaderboard/").json()["entries"]
    by_name = {e["name"]: e for e in entries}
    low = aide.aggregate.figures["splits"]["low"]["metrics"]["any_medal_percentage"]
    assert by_name["aide-o1"]["splits"]["low"]["mean"] == low["mean"]
    assert by_name["aide-o1"]["splits"]["low"]["standard_error"] == low["standard_error"]
    assert client.get("/", {"format": "json"}).json()["entries"] == entries
    csv_text = client.get("/", {"format": "csv"}).content.decode()
    assert csv_text.splitlines()[0].startswith("rank,scaffold,model") and "aide-o1" in csv_text
    result = client.get(
        "/api/compare/", {"experiments": f"{aide.pk},{mlab.pk}", "split": "low"}
    ).json()
    comparison = result["comparisons"][0]
    assert comparison["n_competitions"] == 22 and "95% CI" in comparison["sentence"]
    page = client.get(
        "/compare/", {"experiments": f"{aide.pk},{mlab.pk}", "split": "low"}
    ).content.decode()
    assert comparison["sentence"].split(" (")[0] in page.replace("&#x27;", "'")
    assert client.get("/api/compare/", {"experiments": str(aide.pk)}).status_code == 400


def test_regrade_keeps_the_old_report_and_records_the_grader_version(tmp_path, settings):
    from tests.support.demo_builds import build_demo
    from webapp.competitions.models import Competition
    from webapp.results.grading.services import run_grade
    from webapp.results.models import Run
    from webapp.results.services import agent_get_or_create
    from webapp.results.uploads.services import experiment_regrade

    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    build = build_demo(settings.MLEBOARD_DATA_DIR, seeds=1, competitions=("demo-wine",))
    catalogue_sync()
    experiment = Experiment.objects.create(
        name="e", agent=agent_get_or_create("s", "m"), source=Experiment.Source.GRADED
    )
    run = Run.objects.create(
        experiment=experiment,
        competition=Competition.objects.get(slug="demo-wine"),
        seed=0,
        submission_path=str(build.submissions["linear"][0]["demo-wine"]),
    )
    first = run_grade(run.pk)
    assert first.grader_version and first.valid_submission
    assert experiment_regrade(experiment) == 1
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED
    second = run_grade(run.pk)
    first.refresh_from_db()
    assert not first.is_current and second.is_current and second.score == first.score
    assert GradeReport.objects.filter(run=run).count() == 2
    reported = Experiment.objects.create(
        name="r", agent=experiment.agent, source=Experiment.Source.REPORTED
    )
    with pytest.raises(ValueError, match="reported"):
        experiment_regrade(reported)


def test_leaderboard_has_one_agent_cell_and_folds_the_flags(client, imported):
    """One cell names the agent (scaffold × model, linked to the experiment), the name only
    when it says more; the flags are one Conditions cell, explained by a legend."""
    from webapp.results.pages.leaderboard import CONDITIONS

    aide = Experiment.objects.get(name="aide-o1")
    Experiment.objects.filter(pk=aide.pk).update(
        name="aide-o1 with tuned prompts",
        internet_access=True,
        test_feedback=None,
        known_leakage=False,
        source_available=False,
    )
    mlab = Experiment.objects.get(name="mlab-gpt4o")
    scaffold, model = mlab.agent.scaffold.name, mlab.agent.model.name
    Experiment.objects.filter(pk=mlab.pk).update(name=f"{scaffold} × {model}")
    html = client.get(reverse("home")).content.decode()
    head = re.search(r"<thead>.*?</thead>", html, re.S).group(0)
    headers = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>.*?</th>", head)]
    assert headers[:3] == ["", "#", "Agent"]
    assert headers[-5:] == ["Seeds", "Class", "Run", "Conditions", "Integrity"]
    for gone in ("Experiment", "Hours", "Hardware", "Date", "Net", "Test fb", "Leak", "Reports"):
        assert gone not in headers
    rows = {
        pk: re.search(rf'<tr data-experiment="{pk}">.*?</tr>', html, re.S).group(0)
        for pk in (aide.pk, mlab.pk)
    }
    cells = re.findall(r"<td[^>]*>.*?</td>", rows[mlab.pk], re.S)
    assert len(cells) == len(headers)
    agent = cells[2]
    assert f'href="{reverse("experiment-detail", args=[mlab.pk])}"' in agent
    assert scaffold in agent and model in agent and "experiment-name" not in agent
    assert html.count(f"{scaffold} <span") == 1  # once, in the agent cell only
    # A name that says more than scaffold × model is shown under it.
    aide_agent = re.findall(r"<td[^>]*>.*?</td>", rows[aide.pk], re.S)[2]
    assert 'experiment-name">aide-o1 with tuned prompts</div>' in aide_agent
    conditions = re.search(r'<td class="conditions"[^>]*>.*?</td>', rows[aide.pk], re.S).group(0)
    assert 'data-flag="internet_access"' in conditions and ">net<" in conditions
    assert 'data-flag="test_feedback"' in conditions and "fb?" in conditions
    assert 'data-flag="source_available"' not in conditions  # no: no mark
    assert 'data-flag="known_leakage"' not in conditions
    # The tooltips are written in the browser from the marks and what each means, sent
    # once (tests/webapp/edge/test_page_weight.py draws them).
    assert "title=" not in conditions
    assert '"internet_access": "Internet access during the run"' in html
    legend = re.search(r'<p [^>]*id="conditions-legend">.*?</p>', html, re.S).group(0)
    for _, abbr, _meaning in CONDITIONS:
        assert f">{abbr}<" in legend


def test_leaderboard_cells_are_escaped(client, imported):
    aide = Experiment.objects.get(name="aide-o1")
    Experiment.objects.filter(pk=aide.pk).update(
        name="<b>bold</b> extra", hardware="<i>GPU</i>", source_url="https://x.example/?a=1&b=2"
    )
    html = client.get(reverse("home")).content.decode()
    row = html[html.index(f'<tr data-experiment="{aide.pk}">') :]
    row = row[: row.index("</tr>")]
    assert "<b>" not in row and "&lt;b&gt;bold&lt;/b&gt; extra" in row
    assert "<i>" not in row and "&lt;i&gt;GPU&lt;/i&gt;" in row
