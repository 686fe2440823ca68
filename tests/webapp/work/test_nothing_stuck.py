"""Every upload, grading run and agent run reaches an end: the outbox and the sweeper
(``webapp.work``, ``webapp.ops.sweeper``), honest retries, re-sent archives, figures that
follow the data and the curation. The process kills on real services are in
``test_worker.py`` and ``perf/drill/``."""

import datetime as dt

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerDown
from rest_framework.authtoken.models import Token

from benchmark.demo import DEMO_COMPETITIONS
from tests.support import archive_builders as ab
from tests.support.demo_builds import build_demo
from webapp.competitions.models import Competition, KnownIssue
from webapp.competitions.services import catalogue_sync
from webapp.liveness.models import ProcessBeat
from webapp.ops.sweeper import sweep
from webapp.results import tasks
from webapp.results.grading.services import run_grade
from webapp.results.models import Experiment, ExperimentAggregate, Run, Upload
from webapp.results.services import agent_get_or_create
from webapp.results.uploads.services import upload_process

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo(tmp_path, settings):
    data = tmp_path / "data"
    build_demo(data)
    settings.MLEBOARD_DATA_DIR = data
    settings.MEDIA_ROOT = tmp_path / "media"
    catalogue_sync()
    return data


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("erin", password="pw-erin-1234")


def _api(user) -> Client:
    token, _ = Token.objects.get_or_create(user=user)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}")


def _archive(demo, name="runs.zip") -> SimpleUploadedFile:
    def sample(cid: str, index: int) -> bytes:
        return (demo / cid / "prepared" / "public" / "sample_submission.csv").read_bytes()

    files = ab.run_group_files("2024-10-01_run-group_s", DEMO_COMPETITIONS, csv=sample)
    return SimpleUploadedFile(name, ab.zip_bytes(files), content_type="application/zip")


@pytest.fixture
def broker_down(monkeypatch):
    """Fault injection at the point of sending: every task send fails as kombu fails
    when the broker is unreachable."""

    def refuse(*args, **kwargs):
        raise BrokerDown("Error 111 connecting to the broker. Connection refused.")

    for task in (tasks.process_upload_task, tasks.grade_run_task):
        monkeypatch.setattr(task, "apply_async", refuse)
    return monkeypatch


def test_broker_down_accepts_the_upload_and_the_sweeper_sends_it_later(demo, user, broker_down):
    response = _api(user).post(
        "/api/uploads/", {"archive": _archive(demo), "metadata": '{"scaffold": "s", "model": "m"}'}
    )
    assert response.status_code == 202, response.content
    upload = Upload.objects.get(pk=response.json()["id"])
    assert upload.status == Upload.Status.QUEUED and upload.dispatched_at is None
    assert sweep().sent == {}  # still down: nothing recorded as sent
    broker_down.undo()
    sent = []
    broker_down.setattr(tasks.process_upload_task, "apply_async", lambda a, **k: sent.append(a))
    assert sweep().sent == {"upload": 1} and sent == [(upload.pk,)]
    upload.refresh_from_db()
    assert upload.dispatched_at is not None and upload.dispatch_count == 1


def test_waiting_work_is_said_to_wait_for_a_worker(demo, user, broker_down, settings):
    response = _api(user).post(
        "/api/uploads/", {"archive": _archive(demo), "metadata": '{"scaffold": "s", "model": "m"}'}
    )
    upload_id = response.json()["id"]
    Upload.objects.filter(pk=upload_id).update(
        created_at=timezone.now() - dt.timedelta(seconds=settings.MLEBOARD_STALE_AFTER_S + 5)
    )
    # No grading worker has ever said it is alive (webapp.liveness): the page says so.
    progress = _api(user).get(f"/api/uploads/{upload_id}/").json()
    assert progress["waiting_for_worker"] is True
    assert progress["no_worker"] == "no grading worker has answered yet"
    assert progress["message"].startswith("no grading worker has answered yet")
    page = _page(user).get(f"/uploads/{upload_id}/").content.decode()
    assert "no grading worker has answered yet" in page
    # A grading worker beats, yet nothing picked the upload up (its message was lost).
    now = timezone.now()
    ProcessBeat.objects.create(
        name="grading@alive", kind="worker", hostname="h", pid=1, queues=["grading"],
        started_at=now, beat_at=now,
    )  # fmt: skip
    progress = _api(user).get(f"/api/uploads/{upload_id}/").json()
    assert progress["waiting_for_worker"] is True and progress["no_worker"] == ""
    assert progress["message"].startswith("waiting for a worker")


def _page(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_silent_claim_is_taken_back_then_failed_past_the_budget(demo, user, settings):
    settings.MLEBOARD_MAX_ATTEMPTS = 2
    run = _one_run(demo, user)
    silent = timezone.now() - dt.timedelta(seconds=settings.MLEBOARD_STALE_AFTER_S + 1)
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.RUNNING, claimed_by="dead", heartbeat_at=silent, attempts=1
    )
    assert sweep().taken_back == {"grading": 1}
    assert Run.objects.get(pk=run.pk).status == Run.Status.QUEUED
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.RUNNING, claimed_by="dead again", heartbeat_at=silent, attempts=2
    )
    assert sweep().failed == {"grading": 1}
    failed = Run.objects.get(pk=run.pk)
    assert failed.status == Run.Status.FAILED and "interrupted 2 times" in failed.error
    # The run's end counts: its experiment's figures are due (and computed by the worker).
    assert Experiment.objects.get(pk=run.experiment_id).figures_due_since is not None


def test_a_live_claim_is_left_alone(demo, user):
    run = _one_run(demo, user)
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.RUNNING, claimed_by="alive", heartbeat_at=timezone.now()
    )
    assert sweep().taken_back == {} and Run.objects.get(pk=run.pk).claimed_by == "alive"


def test_a_claim_taken_back_while_grading_stores_nothing(demo, user, monkeypatch):
    run = _one_run(demo, user)
    import benchmark.grading

    real = benchmark.grading.grade_submission_run

    def grade_then_lose_the_claim(*args, **kwargs):
        report = real(*args, **kwargs)
        Run.objects.filter(pk=run.pk).update(status=Run.Status.QUEUED, claimed_by="")
        return report

    monkeypatch.setattr(benchmark.grading, "grade_submission_run", grade_then_lose_the_claim)
    assert run_grade(run.pk) is None
    assert Run.objects.get(pk=run.pk).reports.count() == 0


def test_a_bug_fails_the_run_at_once_with_a_reason(demo, user, monkeypatch):
    run = _one_run(demo, user)
    import benchmark.grading

    def bug(*args, **kwargs):
        raise KeyError("oops")

    monkeypatch.setattr(benchmark.grading, "grade_submission_run", bug)
    tasks.grade_run_task.apply(args=(run.pk,))
    failed = Run.objects.get(pk=run.pk)
    assert failed.status == Run.Status.FAILED
    assert "internal error (KeyError: 'oops')" in failed.error and failed.attempts == 1


def test_a_transient_error_is_retried_within_the_budget(demo, user, monkeypatch, settings):
    from django.db import OperationalError

    settings.MLEBOARD_MAX_ATTEMPTS = 3
    run = _one_run(demo, user)
    import benchmark.grading

    calls = []

    def database_blinked(*args, **kwargs):
        calls.append(1)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(benchmark.grading, "grade_submission_run", database_blinked)
    tasks.grade_run_task.apply(args=(run.pk,))  # eager: each retry runs at once
    failed = Run.objects.get(pk=run.pk)
    assert len(calls) == 3 and failed.attempts == 3
    assert failed.status == Run.Status.FAILED and "3 times for a transient reason" in failed.error


def test_resending_a_failed_upload_processes_it_again(demo, user, monkeypatch):
    metadata = '{"scaffold": "s", "model": "m"}'
    first = _api(user).post("/api/uploads/", {"archive": _archive(demo), "metadata": metadata})
    upload_id = first.json()["id"]
    Upload.objects.filter(pk=upload_id).update(status=Upload.Status.FAILED, error="worker lost")
    again = _api(user).post("/api/uploads/", {"archive": _archive(demo), "metadata": metadata})
    body = again.json()
    assert again.status_code == 202 and body["id"] == upload_id
    assert body["duplicate"] is True and body["resumed"] is True
    upload = Upload.objects.get(pk=upload_id)
    assert upload.status == Upload.Status.QUEUED and upload.error == ""
    upload_process(upload_id)
    assert Upload.objects.get(pk=upload_id).experiment is not None
    # A healthy one is handed back as it is, not restarted.
    third = _api(user).post("/api/uploads/", {"archive": _archive(demo), "metadata": metadata})
    assert third.json()["resumed"] is False


def test_a_stalled_upload_is_read_once_after_its_claim_is_taken_back(demo, user, settings):
    metadata = '{"scaffold": "s", "model": "m"}'
    upload_id = (
        _api(user)
        .post("/api/uploads/", {"archive": _archive(demo), "metadata": metadata})
        .json()["id"]
    )
    silent = timezone.now() - dt.timedelta(seconds=settings.MLEBOARD_STALE_AFTER_S + 1)
    Upload.objects.filter(pk=upload_id).update(
        status=Upload.Status.PROCESSING, claimed_by="dead", heartbeat_at=silent, attempts=1
    )
    assert sweep().taken_back == {"upload": 1}
    upload_process(upload_id)
    upload_process(upload_id)  # a duplicate send: nothing happens twice
    assert Experiment.objects.filter(upload__pk=upload_id).count() == 1
    assert Run.objects.filter(experiment__upload__pk=upload_id).count() == len(DEMO_COMPETITIONS)


def test_spool_files_of_cut_off_requests_are_removed(settings, tmp_path):
    import os
    import time

    settings.MEDIA_ROOT = tmp_path
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "incoming")
    (tmp_path / "incoming").mkdir()
    ours, djangos = tmp_path / "upload-old", tmp_path / "incoming" / "tmpab12.upload.zip"
    fresh = tmp_path / "upload-fresh"
    for path in (ours, djangos, fresh):
        path.write_bytes(b"x" * 100)
    long_ago = time.time() - 3600
    for path in (ours, djangos):
        os.utime(path, (long_ago, long_ago))
    assert sweep().spool_removed == 2
    assert not ours.exists() and not djangos.exists() and fresh.exists()


def test_a_known_issue_makes_the_figures_due_and_the_refresh_applies_it(demo, user):
    run = _one_run(demo, user)
    run_grade(run.pk)
    experiment = Experiment.objects.get(pk=run.experiment_id)
    tasks.refresh_experiment_aggregate_task.apply(args=(experiment.pk,))
    assert ExperimentAggregate.objects.get(experiment=experiment).clean_summary
    Experiment.objects.filter(pk=experiment.pk).update(figures_due_since=None)
    KnownIssue.objects.create(competition=run.competition, kind="leakage", note="leaks")
    assert Experiment.objects.get(pk=experiment.pk).figures_due_since is not None
    tasks.refresh_experiment_aggregate_task.apply(args=(experiment.pk,))
    refreshed = Experiment.objects.get(pk=experiment.pk)
    assert refreshed.figures_due_since is None
    assert ExperimentAggregate.objects.get(experiment=experiment).clean_summary == {}


def test_retiring_a_competition_makes_the_figures_due(demo, user):
    run = _one_run(demo, user)
    run_grade(run.pk)
    Experiment.objects.filter(pk=run.experiment_id).update(figures_due_since=None)
    competition = Competition.objects.get(pk=run.competition_id)
    competition.name = competition.name + " "  # not a curation change
    competition.save()
    assert Experiment.objects.get(pk=run.experiment_id).figures_due_since is None
    competition.retired = True
    competition.save()
    assert Experiment.objects.get(pk=run.experiment_id).figures_due_since is not None


def test_sweeper_knobs_come_from_the_environment():
    import subprocess
    import sys

    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='webapp.project.settings'; "
        "django.setup(); from django.conf import settings as s; "
        "print(s.MLEBOARD_STALE_AFTER_S, s.MLEBOARD_REAPER_INTERVAL_S, "
        "s.CELERY_BEAT_SCHEDULE['sweep']['schedule'])"
    )
    import os

    env = {**os.environ, "MLEBOARD_STALE_AFTER_S": "20", "MLEBOARD_REAPER_INTERVAL_S": "5"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.stdout.split() == ["20", "5", "5.0"], done.stderr


def _one_run(demo, user) -> Run:
    experiment = Experiment.objects.create(
        name="sweep test",
        owner=user,
        source=Experiment.Source.GRADED,
        agent=agent_get_or_create("s", "m"),
    )
    competition = Competition.objects.get(slug="demo-wine")
    return Run.objects.create(
        experiment=experiment,
        competition=competition,
        seed=0,
        submission_path=str(demo / "demo-wine" / "prepared" / "public" / "sample_submission.csv"),
    )


@override_settings()
def test_nothing_here_reads_the_old_reaper_settings():
    from django.conf import settings

    assert not hasattr(settings, "GRADING_STUCK_AFTER")
    assert not hasattr(settings, "MLEBOARD_RUN_HEARTBEAT_STALE_S")
