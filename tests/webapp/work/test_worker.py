"""The real thing: a Celery worker process on the configured broker (Redis in CI) and
database (PostgreSQL in CI) grades uploads; a worker killed in the middle of grading
loses nothing and grades nothing twice."""

import datetime as dt
import json
import os
import signal
import subprocess

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.utils import timezone
from rest_framework.authtoken.models import Token

from benchmark.demo import DEMO_COMPETITIONS
from tests.support import archive_builders as ab
from tests.support import demo_builds
from tests.support.polling import wait_until
from tests.support.workers import REPO_ROOT, worker_argv, worker_env
from webapp.competitions.models import Competition
from webapp.ops.sweeper import sweep
from webapp.results.models import Experiment, ExperimentAggregate, GradeReport, Run
from webapp.results.services import agent_get_or_create

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def demo_site(tmp_path, settings):
    return demo_builds.demo_site(tmp_path, settings, seeds=2)


def run_group_archive(build, seeds=(0, 1)) -> bytes:
    files = {}
    for seed in seeds:
        group = f"2024-10-0{seed + 1}T00-00-00-GMT_run-group_linear"
        for index, cid in enumerate(DEMO_COMPETITIONS):
            run = ab.run_id(cid, index, group)
            files[f"{group}/{run}/submission/submission.csv"] = build.submissions["linear"][seed][
                cid
            ].read_bytes()
            files[f"{group}/{run}/logs/run.log"] = b"log\n"
        files[f"{group}/metadata.json"] = json.dumps({"run_group": group, "runs": {}}).encode()
    return ab.zip_bytes(files)


def test_upload_is_graded_by_a_real_worker(demo_site, celery_worker_process, django_user_model):
    user = django_user_model.objects.create_user("carol", password="pw-carol-123")
    api = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    response = api.post(
        "/api/uploads/",
        {
            "archive": SimpleUploadedFile("runs.zip", run_group_archive(demo_site)),
            "metadata": json.dumps({"scaffold": "reference", "model": "none", "seeds": {}}),
        },
    )
    assert response.status_code == 202, response.content
    upload_id = response.json()["id"]
    progress = wait_until(
        lambda: (
            (p := api.get(f"/api/uploads/{upload_id}/").json())["status"] in ("graded", "failed")
            and p
        ),
        timeout=120,
    )
    assert progress["status"] == "graded", (
        progress["error"],
        celery_worker_process.log_path.read_text()[-3000:],
    )
    assert progress["runs_total"] == progress["runs_graded"] == 8
    experiment = Experiment.objects.get(pk=progress["experiment"])
    reports = GradeReport.objects.filter(experiment=experiment, is_current=True)
    assert reports.count() == 8 and all(r.valid_submission for r in reports)
    assert all(r.grader_version for r in reports)
    # The aggregate was refreshed by the worker too: the experiment page has its funnel.
    wait_until(
        lambda: ExperimentAggregate.objects.filter(
            experiment=experiment, summary__has_key="demo"
        ).exists(),
        timeout=60,
    )
    owner = Client()
    owner.login(username="carol", password="pw-carol-123")
    page = owner.get(f"/experiments/{experiment.pk}/").content.decode()
    assert 'id="funnel-data"' in page


def pool_children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


FAST_STALE_S = 3


@pytest.fixture
def slow_grading(monkeypatch):
    # Fault injection: the worker sleeps after claiming a run, so it can be killed mid-way;
    # its heartbeat beats as often as a sweeper with FAST_STALE_S needs.
    monkeypatch.setenv("MLEBOARD_GRADING_FAULT_DELAY", "4")
    monkeypatch.setenv("MLEBOARD_STALE_AFTER_S", str(FAST_STALE_S))


def test_worker_killed_mid_grading_ends_with_exactly_one_report(
    demo_site, slow_grading, celery_worker_process, django_user_model
):
    from webapp.results.tasks import grade_run_task

    user = django_user_model.objects.create_user("dave", password="pw-dave-1234")
    experiment = Experiment.objects.create(
        name="kill test",
        owner=user,
        source=Experiment.Source.GRADED,
        agent=agent_get_or_create("s", "m"),
    )
    run = Run.objects.create(
        experiment=experiment,
        competition=Competition.objects.get(slug="demo-wine"),
        seed=0,
        submission_path=str(demo_site.submissions["linear"][0]["demo-wine"]),
    )
    grade_run_task.delay(run.pk)
    wait_until(lambda: Run.objects.get(pk=run.pk).status == Run.Status.RUNNING, timeout=60)
    # SIGKILL the pool process doing the work (both pool children: one is idle).
    for child in pool_children(celery_worker_process.pid):
        os.kill(child, signal.SIGKILL)
    wait_until(lambda: "WorkerLostError" in celery_worker_process.log_path.read_text(), timeout=60)
    fresh = None
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        # The embedded filesystem broker does not re-run a task whose process was killed:
        # the claim goes silent and the sweeper sends the run again. Its heartbeat thread
        # died with the pool process: its last beat is backdated past the stale time. The
        # worker whose pool was killed is stopped whole and a fresh one started, as the drill
        # restarts it: the broker would hand the run sent again to the stopped pool.
        celery_worker_process.terminate()
        celery_worker_process.wait(timeout=30)
        Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING).update(
            heartbeat_at=timezone.now() - dt.timedelta(seconds=FAST_STALE_S + 1)
        )
        with override_settings(MLEBOARD_STALE_AFTER_S=FAST_STALE_S):
            swept = sweep()
        assert swept.taken_back == {"grading": 1} and swept.sent == {"grading": 1}
        fresh = subprocess.Popen(
            worker_argv("grading", 1),
            cwd=REPO_ROOT,
            env=worker_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    # Redis (CI, production) re-delivers the task, which takes its own claim back. Whoever
    # grades it, the outcome is one: graded, with exactly one report, graded a second time
    # (the first attempt died with its process).
    try:
        wait_until(lambda: Run.objects.get(pk=run.pk).status == Run.Status.GRADED, timeout=120)
    finally:
        if fresh is not None:
            fresh.terminate()
            fresh.wait(timeout=30)
    assert GradeReport.objects.filter(run=run).count() == 1
    assert Run.objects.get(pk=run.pk).attempts == 2
