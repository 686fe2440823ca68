"""A launch the site cannot run is refused at once, and a run the harness failed is no
result: an agent needing a model endpoint on a site without one, an infrastructure failure
during the run. And a local run says what its agent could read of the host."""

import json
import shutil

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils.html import escape

from runner.local_confinement import local_confinement
from webapp.results.models import Run
from webapp.runs.models import AgentRun, Launch

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

NO_ENDPOINT = ("MLEBOARD_LLM_BASE_URL", "MLEBOARD_LLM_API_KEY", "MLEBOARD_LLM_MODEL")


@pytest.fixture
def launcher(django_user_model) -> Client:
    user = django_user_model.objects.create_user("lee", password="pw-lee-123456")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def no_endpoint(monkeypatch):
    for name in NO_ENDPOINT:
        monkeypatch.delenv(name, raising=False)


def post_launch(client: Client, **body):
    return client.post("/api/launches/", json.dumps(body), content_type="application/json")


def test_a_model_agent_is_refused_and_not_offered_without_an_endpoint(
    demo_leaderboards, unisolated, no_endpoint, launcher
):
    refused = post_launch(launcher, agent="aide", competitions=["demo-wine"], cpus=1, gpus=0)
    assert refused.status_code == 400, refused.content
    assert "MLEBOARD_LLM_BASE_URL" in refused.json()["error"]
    assert not Launch.objects.exists()
    page = launcher.get("/runs/new/").content.decode()
    aide = page[page.index('value="aide"') - 20 : page.index('value="aide"') + 300]
    assert "disabled" in aide and "MLEBOARD_LLM_BASE_URL" in aide
    # The default is an agent this site can run, not the first one (aide).
    selected = page[: page.index(" selected")].rsplit("<option", 1)[1]
    assert 'value="baseline"' in selected
    sent = launcher.post(
        "/runs/new/",
        {"agent": "openhands", "competitions": "demo-wine", "seeds": 1, "cpus": 1, "gpus": 0},
    )
    assert sent.status_code == 400 and not Launch.objects.exists()


def test_a_model_agent_is_offered_with_an_endpoint(
    demo_leaderboards, unisolated, monkeypatch, launcher
):
    monkeypatch.setenv("MLEBOARD_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MLEBOARD_LLM_API_KEY", "k")
    page = launcher.get("/runs/new/").content.decode()
    aide = page[page.index('value="aide"') - 20 : page.index('value="aide"') + 60]
    assert "disabled" not in aide


def test_a_harness_error_during_the_run_is_not_a_result(
    demo_leaderboards, unisolated, settings, launcher
):
    from webapp.runs.services.execution import agent_run_execute

    made = post_launch(launcher, agent="dummy", competitions=["demo-wine"], cpus=1, gpus=0)
    assert made.status_code == 201, made.content
    run = AgentRun.objects.get(launch_id=made.json()["id"])
    # The infrastructure fails between the launch and the run: its data is gone.
    shutil.rmtree(settings.MLEBOARD_DATA_DIR / "demo-wine" / "prepared" / "public")
    finished = agent_run_execute(run.pk, token="t")
    assert finished.status == AgentRun.Status.HARNESS_ERROR, finished.message
    assert finished.result_run_id is None
    assert not Run.objects.filter(experiment_id=finished.launch.experiment_id).exists()


def test_a_local_run_says_what_its_agent_could_read(
    demo_leaderboards, unisolated, settings, launcher
):
    from webapp.runs.services.execution import agent_run_execute

    made = post_launch(launcher, agent="dummy", competitions=["demo-wine"], cpus=1, gpus=0)
    run = AgentRun.objects.get(launch_id=made.json()["id"])
    summary = local_confinement().summary
    assert escape(summary) in launcher.get("/runs/new/").content.decode()
    finished = agent_run_execute(run.pk, token="t")
    assert finished.status == AgentRun.Status.COMPLETED, (finished.message, finished.detail)
    assert finished.confinement == summary
    page = launcher.get(f"/runs/agent/{run.pk}/").content.decode()
    assert 'id="run-confinement"' in page and escape(summary) in page
    assert launcher.get(f"/api/agent-runs/{run.pk}/").json()["confinement"] == summary
