"""Agent runs launched from the site: dispatched through Celery (Redis in CI) to a real
worker, run in containers on the real Docker engine, graded, and shown on the site."""

import json
import time

import pytest
from django.test import Client

from runner.reaper import own_containers_filter, own_labels
from tests.support.launches import api_for, launch
from tests.support.polling import wait_until
from webapp.results.models import ExperimentAggregate, GradeReport
from webapp.runs.models import AgentRun, Launch

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def images(agent_dirs):
    import docker

    from runner.agent_definition import find_agent, load_agent
    from runner.images import build_agent_image, build_base_image

    client = docker.from_env()
    client.ping()  # no engine: the test fails here, it is not skipped
    build_base_image(client)
    for agent in (find_agent("baseline"), load_agent(agent_dirs / "sleeper")):
        build_agent_image(client, agent)
    return client


@pytest.mark.slow
def test_baseline_runs_end_to_end_from_the_site(images, site, celery_worker_process, runner_user):
    api = api_for(runner_user)
    launch_id = launch(
        api,
        agent="baseline",
        competitions=["demo-breast-cancer"],
        seeds=1,
        cpus=1,
        memory="2g",
        gpus=0,
        time_limit_s=600,
        backend="docker",
    )
    status = wait_until(
        lambda: (
            (s := api.get(f"/api/launches/{launch_id}/").json())["runs"][0]["grading"] == "graded"
            and s
        ),
        timeout=240,
    )
    run = status["runs"][0]
    assert run["status"] == "completed", (run, celery_worker_process.log_path.read_text()[-3000:])
    # The agent asked the validation service (outside its container) and was answered.
    assert run["validation_counts"]["answered"] >= 1 and run["validation_counts"]["errors"] == 0
    report = GradeReport.objects.get(run__experiment__launch__pk=launch_id, is_current=True)
    assert report.submission_exists and report.valid_submission and report.score > 0.9
    # The experiment is on the site with its funnel (made submission, valid).
    experiment = Launch.objects.get(pk=launch_id).experiment
    wait_until(
        lambda: ExperimentAggregate.objects.filter(
            experiment=experiment, summary__has_key="ran"
        ).exists(),
        timeout=60,
    )
    owner = Client()
    owner.login(username="erin", password="pw-erin-1234")
    page = owner.get(f"/experiments/{experiment.pk}/")
    assert page.status_code == 200 and 'id="funnel-data"' in page.content.decode()
    log = api.get(f"/api/agent-runs/{run['id']}/").json()["log_tail"]
    assert log  # the agent's output was captured
    # Checked after grading: the shipped baseline's code and logs raise nothing.
    from webapp.integrity.models import RunCheck

    check = wait_until(
        lambda: RunCheck.objects.filter(
            run__experiment=experiment, checked_at__isnull=False, due_since__isnull=True
        ).first(),
        timeout=60,
    )
    assert check.status == RunCheck.Status.CLEAN and check.findings == [], check.findings


@pytest.mark.slow
def test_cancelling_a_running_run_stops_its_container_within_seconds(
    images, site, celery_worker_process, runner_user
):
    api = api_for(runner_user)
    launch_id = launch(
        api,
        agent="sleeper",
        competitions=["demo-wine"],
        seeds=1,
        cpus=1,
        memory="512m",
        gpus=0,
        time_limit_s=600,
        backend="docker",
    )
    run = AgentRun.objects.get(launch_id=launch_id)
    wait_until(
        lambda: AgentRun.objects.get(pk=run.pk).status == AgentRun.Status.RUNNING, timeout=120
    )
    wait_until(lambda: images.containers.list(filters=own_containers_filter()), timeout=60)
    asked = time.monotonic()
    response = api.post(f"/api/agent-runs/{run.pk}/cancel/")
    assert response.status_code == 202
    wait_until(
        lambda: AgentRun.objects.get(pk=run.pk).status == AgentRun.Status.CANCELLED, timeout=30
    )
    stopped_after = time.monotonic() - asked
    assert stopped_after < 15, stopped_after
    assert images.containers.list(all=True, sparse=True, filters=own_containers_filter()) == []
    # A cancelled run is still a result: graded as "no submission".
    wait_until(lambda: GradeReport.objects.filter(run__agent_run=run).exists(), timeout=60)
    assert not GradeReport.objects.get(run__agent_run=run).submission_exists


def test_launch_needs_the_permission(site, django_user_model):
    user = django_user_model.objects.create_user("frank", password="pw-frank-123")
    response = api_for(user).post(
        "/api/launches/",
        json.dumps({"agent": "baseline", "split": "demo"}),
        content_type="application/json",
    )
    assert response.status_code == 403
    assert Launch.objects.count() == 0


def test_a_run_larger_than_the_host_is_refused_with_the_reason(site, runner_user, settings):
    from webapp.runs.services.execution import agent_run_execute

    settings.MLEBOARD_HOST_CPUS = 2
    launch_id = launch(
        api_for(runner_user), agent="baseline", competitions=["demo-wine"], seeds=1, cpus=36, gpus=0
    )
    run = AgentRun.objects.get(launch_id=launch_id)
    agent_run_execute(run.pk, token="t")
    run.refresh_from_db()
    assert (
        run.status == AgentRun.Status.HARNESS_ERROR
        and "36 CPUs requested, the host has 2" in run.message
    )


def test_sweeper_ends_a_run_whose_heartbeat_stopped_and_removes_its_container(
    images, site, runner_user, settings
):
    import datetime as dt

    from django.utils import timezone

    from runner.images import base_image_ref
    from webapp.ops.sweeper import sweep

    launch_id = launch(
        api_for(runner_user),
        agent="sleeper",
        competitions=["demo-wine"],
        seeds=1,
        cpus=1,
        gpus=0,
        backend="docker",
    )
    run = AgentRun.objects.get(launch_id=launch_id)
    # A container left behind by a worker that died: still running, nobody watching it.
    container = images.containers.run(
        base_image_ref(),
        ["sleep", "600"],
        detach=True,
        network_mode="none",
        labels=own_labels(),
    )
    stale = timezone.now() - dt.timedelta(minutes=30)
    AgentRun.objects.filter(pk=run.pk).update(
        status=AgentRun.Status.RUNNING, heartbeat_at=stale, container=container.name
    )
    settings.MLEBOARD_STALE_AFTER_S = 300
    assert sweep().failed == {"agent_run": 1}
    run.refresh_from_db()
    assert run.status == AgentRun.Status.HARNESS_ERROR and "heartbeat stopped" in run.message
    assert images.containers.list(all=True, sparse=True, filters=own_containers_filter()) == []
    assert run.result_run is not None  # graded as "no submission": a result, not a hole


def test_isolation_is_the_operators_choice(site, runner_user, settings):
    """A launch cannot pick its own isolation: asking for local on a docker site is
    refused, and a local site refuses runs unless the operator allowed unisolated runs."""
    api = api_for(runner_user)
    body = {"agent": "dummy", "competitions": ["demo-wine"], "cpus": 1, "gpus": 0}
    settings.MLEBOARD_RUN_BACKEND = "docker"
    refused = api.post(
        "/api/launches/", {**body, "backend": "local"}, content_type="application/json"
    )
    assert refused.status_code == 400 and "operator" in refused.json()["error"]
    assert not Launch.objects.exists()
    settings.MLEBOARD_RUN_BACKEND = "local"
    settings.MLEBOARD_ALLOW_UNISOLATED_RUNS = False
    refused = api.post("/api/launches/", body, content_type="application/json")
    assert refused.status_code == 400
    assert "MLEBOARD_ALLOW_UNISOLATED_RUNS" in refused.json()["error"]
    settings.MLEBOARD_ALLOW_UNISOLATED_RUNS = True
    browser = Client()
    browser.force_login(runner_user)
    page = browser.get("/runs/new/")
    assert (
        page.status_code == 200
        and "Runs on this site are not in containers" in page.content.decode()
    )
    settings.MLEBOARD_RUN_BACKEND = "docker"
    assert "not in containers" not in browser.get("/runs/new/").content.decode()


def test_a_launch_made_before_the_operator_turned_isolation_on_does_not_run(
    site, runner_user, settings
):
    from webapp.runs.services.execution import agent_run_execute

    settings.MLEBOARD_RUN_BACKEND = "local"
    settings.MLEBOARD_ALLOW_UNISOLATED_RUNS = True
    launch_id = launch(
        api_for(runner_user), agent="dummy", competitions=["demo-wine"], cpus=1, gpus=0
    )
    settings.MLEBOARD_ALLOW_UNISOLATED_RUNS = False
    run = agent_run_execute(AgentRun.objects.get(launch_id=launch_id).pk)
    assert run.status == AgentRun.Status.HARNESS_ERROR and "not isolated" in run.message
