"""The reports API as a client needs it: each report carries its run's id and absolute
URLs to the run's page, files and trajectory, and no path of the server's disk (stored
reports' absolute submission paths are rewritten by a migration). The compare and
leaderboard parameters are refused exactly when the schema says they are invalid."""

import dataclasses
import importlib
import random

import pytest
from django.apps import apps

from tests.support.factories import synthetic_report
from tests.support.run_page_fixtures import aide_upload
from webapp.competitions.services import catalogue_sync
from webapp.results.models import GradeReport
from webapp.results.services import (
    ReportedRunGroup,
    agent_get_or_create,
    experiment_create_from_reports,
    report_store,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


@pytest.fixture
def graded_run(alice, media):
    """An uploaded run graded as the grader stores it: with the absolute path of the
    submission in the extracted archive."""
    run = aide_upload(alice)
    GradeReport.objects.filter(run=run).delete()
    report = synthetic_report(run.competition.slug, random.Random(1), run.seed)
    report_store(run, dataclasses.replace(report, submission_path=run.submission_path))
    assert run.submission_path.startswith("/")
    return run


def test_each_report_leads_to_its_run_page_files_and_trajectory(client, alice, graded_run):
    client.force_login(alice)
    reports = client.get(f"/api/experiments/{graded_run.experiment_id}/reports/").json()
    assert len(reports) == 1
    report = reports[0]
    assert report["run_id"] == graded_run.pk
    assert report["run_url"] == f"http://testserver/runs/result/{graded_run.pk}/"
    assert report["files_url"] == f"http://testserver/api/runs/{graded_run.pk}/"
    assert report["trajectory_url"] == f"http://testserver/api/runs/{graded_run.pk}/trajectory/"
    assert report["submission_path"] == "submission/submission.csv"
    assert client.get(report["run_url"]).status_code == 200
    files = client.get(report["files_url"]).json()["files"]
    assert "submission/submission.csv" in {f["path"] for f in files}
    assert "nodes" in client.get(report["trajectory_url"]).json()


def test_others_reach_neither_the_reports_nor_the_runs(client, bob, graded_run):
    client.force_login(bob)
    assert client.get(f"/api/experiments/{graded_run.experiment_id}/reports/").status_code == 404
    assert client.get(f"/api/runs/{graded_run.pk}/").status_code == 404


def test_imported_reports_have_a_run_page_and_no_files(client, alice):
    experiment = experiment_create_from_reports(
        name="reported",
        agent=agent_get_or_create("aide", "gpt-4o"),
        run_groups=[
            ReportedRunGroup(
                "rg",
                0,
                [
                    dataclasses.replace(
                        synthetic_report("spaceship-titanic", random.Random(2), 0),
                        submission_path="/home/someone/runs/x/submission/submission.csv",
                    )
                ],
            )
        ],
        owner=alice,
        is_published=True,
    )
    (report,) = client.get(f"/api/experiments/{experiment.pk}/reports/").json()
    assert report["files_url"] is None and report["trajectory_url"] is None
    assert client.get(report["run_url"]).status_code == 200
    assert report["submission_path"] == "submission/submission.csv"


def test_the_migration_makes_stored_absolute_paths_relative(graded_run):
    GradeReport.objects.filter(run=graded_run).update(
        submission_path="/srv/mleboard/media/uploads/3/rg/x_1/submission/submission.csv"
    )
    migration = importlib.import_module(
        "webapp.results.migrations.0012_report_submission_paths_relative"
    )
    migration.relative_paths(apps, None)
    assert GradeReport.objects.get(run=graded_run).submission_path == "submission/submission.csv"


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("", 400),
        ("experiments=", 400),
        ("experiments=1", 400),
        ("experiments=a,b", 400),
        ("experiments=999999,999998", 404),
    ],
)
def test_compare_refuses_what_its_schema_refuses(client, query, status):
    assert client.get(f"/api/compare/?{query}").status_code == status


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("until=2024-13-01", 400),
        ("until=yesterday", 400),
        ("since=20240101", 400),
        ("internet_access=maybe", 400),
        ("integrity=dirty", 400),
        ("until=2024-10-01&since=2024-01-01&internet_access=no", 200),
        ("", 200),
    ],
)
def test_the_leaderboard_refuses_invalid_filters(client, query, status):
    assert client.get(f"/api/leaderboard/?{query}").status_code == status
