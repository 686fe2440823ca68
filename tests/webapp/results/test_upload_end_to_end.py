"""An archive of the 75 competitions x 3 seeds (synthetic data the test builds) uploaded
through the API, graded by a real worker over the configured broker and database,
aggregated, and shown on the experiment page."""

import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

import graders
from benchmark.catalogue import competitions_in_split
from benchmark.leaderboard import LeaderboardTable
from tests.support import archive_builders as ab
from tests.support.catalogue_data import build_catalogue, submission_variant
from tests.support.polling import wait_until
from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync, leaderboard_store
from webapp.results.models import Experiment, ExperimentAggregate, GradeReport

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SEEDS = 3


def synthetic_leaderboard(comp, facts) -> LeaderboardTable:
    """A population of 150 scores spread evenly from the sample's score to the perfect one."""
    worst = graders.grade_submission(
        comp.sample_submission, comp.competition_id, comp.data_dir
    ).score
    best = graders.grade_submission(
        comp.perfect_submission, comp.competition_id, comp.data_dir
    ).score
    if worst is None or best is None or worst != worst or best != best or abs(best) == float("inf"):
        worst, best = (1.0, 0.0) if facts.lower_is_better else (0.0, 1.0)
    scores = tuple(round(best + (worst - best) * i / 149, 5) for i in range(150))
    none = (None,) * 150
    return LeaderboardTable(scores, none, none, none, "synthetic", facts.lower_is_better)


@pytest.fixture
def paths(tmp_path, settings):
    # Set before the worker starts: it reads them from its environment.
    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()


def test_75_competitions_x_3_seeds_upload(
    tmp_path, settings, paths, celery_worker_process, django_user_model
):
    catalogue_sync()
    facts = {f.id: f for f in competitions_in_split("all")}
    built = build_catalogue(settings.MLEBOARD_DATA_DIR, list(facts))
    for cid, comp in built.items():
        leaderboard_store(
            Competition.objects.get(slug=cid),
            synthetic_leaderboard(comp, facts[cid]),
            is_synthetic=True,
        )

    files = {}
    for seed in range(SEEDS):
        group = f"2024-10-0{seed + 1}T00-00-00-GMT_run-group_synthetic"
        runs = {}
        for index, (cid, comp) in enumerate(sorted(built.items())):
            run = ab.run_id(cid, index, group)
            runs[run] = {"success": True}
            if (index + seed) % 25 == 0:
                continue  # a run that made no submission: a result, not an error
            quality = ((index * 7 + seed * 13) % 10) / 9
            path = submission_variant(
                comp, tmp_path / "subs" / f"{seed}-{cid}.csv", quality=quality, seed=seed
            )
            files[f"{group}/{run}/submission/submission.csv"] = path.read_bytes()
            files[f"{group}/{run}/logs/run.log"] = b"log\n"
        files[f"{group}/metadata.json"] = json.dumps({"run_group": group, "runs": runs}).encode()
    archive = ab.zip_bytes(files)

    user = django_user_model.objects.create_user("grace", password="pw-grace-123")
    api = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    started = time.monotonic()
    response = api.post(
        "/api/uploads/",
        {
            "archive": SimpleUploadedFile("runs.zip", archive),
            "metadata": json.dumps(
                {"scaffold": "synthetic", "model": "none", "hardware": "CPU", "runtime_hours": 0.1}
            ),
        },
    )
    assert response.status_code == 202, response.content
    upload_id = response.json()["id"]
    progress = wait_until(
        lambda: (
            (p := api.get(f"/api/uploads/{upload_id}/").json())["status"] in ("graded", "failed")
            and p
        ),
        timeout=600,
        interval=1.0,
    )
    elapsed = time.monotonic() - started
    assert progress["status"] == "graded", progress["error"]
    assert progress["runs_total"] == 75 * SEEDS and progress["runs_graded"] == 75 * SEEDS
    print(f"\n75 x {SEEDS} upload: {elapsed:.1f} s wall, {75 * SEEDS / elapsed:.1f} runs graded/s")

    experiment_id = progress["experiment"]
    reports = GradeReport.objects.filter(experiment_id=experiment_id, is_current=True)
    assert reports.count() == 75 * SEEDS
    assert reports.filter(submission_exists=False).count() == 9  # (index + seed) % 25 == 0
    assert reports.filter(submission_exists=True, valid_submission=False).count() == 0
    assert reports.filter(any_medal=True).exists() and reports.filter(above_median=False).exists()
    # Figures are refreshed after grading, and one may have been computed while the upload
    # was still being graded: wait for the refresh that saw every report.
    aggregate = wait_until(
        lambda: (
            Experiment.objects.filter(pk=experiment_id, figures_due_since=None).exists()
            and ExperimentAggregate.objects.filter(
                experiment_id=experiment_id, summary__has_key="all", n_reports=75 * SEEDS
            ).first()
        ),
        timeout=60,
    )
    made = aggregate.figures["splits"]["all"]["metrics"]["submission_exists_percentage"]["mean"]
    assert made == pytest.approx(100 * (75 * SEEDS - 9) / (75 * SEEDS))
    owner = Client()
    owner.login(username="grace", password="pw-grace-123")
    page = owner.get(f"/experiments/{experiment_id}/").content.decode()
    assert 'id="funnel-data"' in page and page.count("<tr>") >= 75 * SEEDS
