"""The site says when work has no worker: each worker and beat writes its own heartbeat
(``webapp.liveness``), the status page and ``GET /api/status/`` list them with each
queue's depth and oldest waiting item and the media folder's free space, and pages of
waiting work say "no grading worker has answered for N s". Heartbeats are backdated; no
test waits for time to pass."""

import datetime as dt
import math
import re
import subprocess

import pytest
from django.test import Client
from django.utils import timezone

from tests.support.hosts import beat, make_runs
from tests.support.polling import wait_until
from tests.support.users import member_of
from tests.support.workers import REPO_ROOT, worker_argv, worker_env
from webapp.liveness.models import ProcessBeat
from webapp.liveness.services import GRADING_QUEUE, ProcessHeartbeat, no_worker_note, worker_silence
from webapp.results.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def workers_not_inline(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.MLEBOARD_STALE_AFTER_S = 120


def says_silent_for(text: str, who: str, age_s: int) -> bool:
    """``text`` says no ``who`` has answered for N s, N counted from a heartbeat backdated
    ``age_s`` (N grows with the seconds the test itself takes: bounded, not equal)."""
    found = re.search(rf"[Nn]o {re.escape(who)} has answered for (\d+) s", text)
    return bool(found) and age_s <= int(found.group(1)) < age_s + 60


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_queue_without_any_worker_has_never_been_answered(workers_not_inline):
    assert worker_silence(GRADING_QUEUE) == math.inf
    assert no_worker_note(GRADING_QUEUE) == "no grading worker has answered yet"


def test_a_worker_silent_past_the_stale_time_is_named_with_its_silence(workers_not_inline):
    now = timezone.now()
    beat("grading@a", ["grading", "default"], age_s=300, now=now)
    assert no_worker_note(GRADING_QUEUE, now) == "no grading worker has answered for 300 s"
    # The run queues have their own workers: none of these answers them.
    assert no_worker_note("runs.cpu", now) == "no run worker (runs.cpu) has answered yet"


def test_one_live_worker_answers_its_queue(workers_not_inline):
    beat("grading@a", ["grading"], age_s=300)
    beat("grading@b", ["grading"], age_s=10)
    assert worker_silence(GRADING_QUEUE) is None and no_worker_note(GRADING_QUEUE) == ""


def test_a_worker_stopped_cleanly_answers_no_more(workers_not_inline):
    now = timezone.now()
    beat("grading@a", ["grading"], age_s=5, stopped=True, now=now)
    assert no_worker_note(GRADING_QUEUE, now) == "no grading worker has answered for 5 s"


def test_inline_tasks_need_no_worker(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert no_worker_note(GRADING_QUEUE) == ""


@pytest.mark.django_db(transaction=True)  # the heartbeat thread writes on its own connection
def test_a_heartbeat_registers_beats_and_says_it_stopped(workers_not_inline, settings):
    # The thread's own beats come every quarter of the stale time: a long one here, so
    # this test sees the registration and the stop, both written by the calls it makes.
    settings.MLEBOARD_STALE_AFTER_S = 3600
    heart = ProcessHeartbeat("grading@here", "worker", ["grading"]).start()
    try:
        row = ProcessBeat.objects.get(name="grading@here")
        assert row.queues == ["grading"] and row.stopped_at is None
        assert no_worker_note(GRADING_QUEUE) == ""
    finally:
        heart.stop()
    assert ProcessBeat.objects.get(name="grading@here").stopped_at is not None


def test_status_api_lists_processes_queues_and_the_media_space(
    workers_not_inline, django_user_model, media
):
    operator = member_of(django_user_model, "operators", "otto")
    beat("grading@a", ["grading"], age_s=400)
    beat("beat@a", [], age_s=3, kind=ProcessBeat.Kind.BEAT)
    runs = make_runs(2)
    old = timezone.now() - dt.timedelta(minutes=30)
    type(runs[0]).objects.filter(pk=runs[0].pk).update(created_at=old)
    body = client_for(operator).get("/api/status/").json()
    states = {p["name"]: p["state"] for p in body["processes"]}
    assert states == {"grading@a": "silent", "beat@a": "alive"}
    queues = {q["queue"]: q for q in body["queues"]}
    assert queues["runs.cpu"]["depth"] == 2
    assert queues["runs.cpu"]["oldest_waiting_s"] == pytest.approx(1800, abs=60)
    assert queues["runs.cpu"]["no_worker"] == "no run worker (runs.cpu) has answered yet"
    assert says_silent_for(queues["grading"]["no_worker"], "grading worker", 400)
    assert queues["runs.gpu"]["depth"] == 0 and queues["runs.gpu"]["oldest_waiting_at"] is None
    assert body["media"]["free_bytes"] > 0 and body["media"]["total_bytes"] > 0


def test_status_is_for_those_holding_its_permission(
    workers_not_inline, django_user_model, staff_without_permissions, alice
):
    operator = member_of(django_user_model, "operators", "otto")
    assert client_for(operator).get("/api/status/").status_code == 200
    page = client_for(operator).get("/status/")
    assert page.status_code == 200 and b'id="media-space"' in page.content
    assert b'href="/status/"' in page.content  # the staff navigation links it
    for user in (alice, staff_without_permissions):
        assert client_for(user).get("/api/status/").status_code == 403
        assert client_for(user).get("/status/").status_code == 403
        assert b'href="/status/"' not in client_for(user).get("/").content
    assert Client().get("/api/status/").status_code in (401, 403)
    assert Client().get("/status/").status_code == 302  # to the login page


def test_status_is_documented_in_the_openapi_schema():
    schema = Client().get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/status/"]["get"]
    output = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    name = output.rsplit("/", 1)[1]
    assert {"processes", "queues", "media"} <= set(
        schema["components"]["schemas"][name]["properties"]
    )


def test_the_launch_and_run_pages_say_no_run_worker_has_answered(workers_not_inline, alice):
    beat("runs@a", ["runs.cpu"], age_s=900)
    run = make_runs(1, owner=alice)[0]
    client = client_for(alice)
    launch = client.get(f"/api/launches/{run.launch_id}/").json()
    assert says_silent_for(launch["runs"][0]["no_worker"], "run worker (runs.cpu)", 900)
    page = client.get(f"/runs/{run.launch_id}/").content.decode()
    assert says_silent_for(page, "run worker (runs.cpu)", 900)
    run_page = client.get(f"/runs/agent/{run.pk}/").content.decode()
    assert says_silent_for(run_page, "run worker (runs.cpu)", 900)
    # A live worker: the run simply waits its turn.
    beat("runs@b", ["runs.cpu"], age_s=1)
    assert client.get(f"/api/launches/{run.launch_id}/").json()["runs"][0]["no_worker"] == ""


def test_the_run_page_says_no_grading_worker_has_answered(workers_not_inline, alice):
    beat("grading@a", ["grading"], age_s=250)
    run = make_runs(1, owner=alice)[0]
    graded = Run.objects.create(
        experiment=run.launch.experiment, competition=run.competition, seed=0
    )
    type(run).objects.filter(pk=run.pk).update(status="completed", result_run=graded)
    page = client_for(alice).get(f"/runs/result/{graded.pk}/").content.decode()
    assert says_silent_for(page, "grading worker", 250)


def test_a_runs_worker_answers_through_its_run_host(workers_not_inline):
    from tests.support.hosts import make_host

    host = make_host("gpu-node", gpus=("0",), beat_age_s=600)  # runs.cpu and runs.gpu
    assert says_silent_for(no_worker_note("runs.gpu"), "run worker (runs.gpu)", 600)
    host.heartbeat_at = timezone.now()
    host.save()
    assert no_worker_note("runs.gpu") == "" and no_worker_note("runs.cpu") == ""
    assert no_worker_note(GRADING_QUEUE) == "no grading worker has answered yet"


@pytest.mark.django_db(transaction=True)
def test_a_real_grading_worker_beats_and_says_it_stopped(settings, tmp_path):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    log = tmp_path / "worker.log"
    proc = subprocess.Popen(
        worker_argv("grading,default", 1, "-n", "grading@status-test"),
        cwd=REPO_ROOT,
        env=worker_env(),
        stdout=open(log, "w"),
        stderr=subprocess.STDOUT,
    )
    try:
        row = wait_until(lambda: ProcessBeat.objects.filter(name="grading@status-test").first())
        assert row.queues == ["default", "grading"] and row.pid == proc.pid
        assert no_worker_note(GRADING_QUEUE) == ""
        proc.terminate()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    row.refresh_from_db()
    assert row.stopped_at is not None, log.read_text()[-3000:]
    assert no_worker_note(GRADING_QUEUE).startswith("no grading worker has answered for")
