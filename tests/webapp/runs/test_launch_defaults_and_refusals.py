"""Launching on this host: the form's defaults fit the worker host; a run that never ran
(too big for every host, refused by the isolation, an agent the site cannot configure)
is not graded, and its log says why."""

import re

import pytest
from django.urls import reverse

from runner.agent_definition import AgentConfigError
from tests.support.launches import api_for, launch
from webapp.results.models import GradeReport

pytestmark = pytest.mark.django_db


# The launch form defaults to what the worker host can give, and says what it has.


def test_launch_form_defaults_fit_the_worker_host(client, django_user_model, settings):
    from django.contrib.auth.models import Permission

    settings.MLEBOARD_HOST_CPUS = 8.0
    settings.MLEBOARD_HOST_MEMORY = 32 * 1024**3
    settings.MLEBOARD_HOST_GPUS = []
    user = django_user_model.objects.create_user("launcher", password="pw-launch-123")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    client.login(username="launcher", password="pw-launch-123")
    html = client.get(reverse("launch-new")).content.decode()
    assert re.search(r'name="cpus" value="8(\.0)?"', html)
    assert 'name="memory" value="32g"' in html
    assert 'name="gpus" value="0"' in html
    assert "440g" not in html and 'value="36"' not in html
    host = re.search(r'<p id="host-resources">(.*?)</p>', html, re.S).group(1)
    assert "8 CPUs" in host and "32 GiB" in host and "no GPU" in host
    # A big host keeps the paper's protocol.
    settings.MLEBOARD_HOST_CPUS = 96.0
    settings.MLEBOARD_HOST_MEMORY = 1024 * 1024**3
    settings.MLEBOARD_HOST_GPUS = ["0", "1"]
    html = client.get(reverse("launch-new")).content.decode()
    assert 'name="memory" value="440g"' in html and 'name="gpus" value="1"' in html
    assert "2 GPUs" in html


# Its log says it never started, and why.


def test_a_capacity_refusal_is_not_counted_and_its_log_says_why(site, runner_user, settings):
    from webapp.results.models import Run
    from webapp.runs.models import AgentRun
    from webapp.runs.services.execution import agent_run_execute

    settings.MLEBOARD_HOST_CPUS = 2
    api = api_for(runner_user)
    launch_id = launch(api, agent="baseline", competitions=["demo-wine"], seeds=1, cpus=36, gpus=0)
    run = AgentRun.objects.get(launch_id=launch_id)
    detail = reverse("api-agent-run-detail", args=[run.pk])
    queued = api.get(detail).json()
    assert queued["log_tail"] == "" and queued["log_note"].startswith("Not started yet")
    agent_run_execute(run.pk, token="t")
    run.refresh_from_db()
    assert run.status == AgentRun.Status.HARNESS_ERROR
    assert "Never started" in run.message and "Not counted" in run.message
    assert run.result_run_id is None
    assert not Run.objects.filter(experiment_id=run.launch.experiment_id).exists()
    assert not GradeReport.objects.filter(experiment_id=run.launch.experiment_id).exists()
    body = api.get(detail).json()
    # The note is the one of a run that never started, and it carries the refusal's reason.
    assert body["log_tail"] == ""
    assert body["log_note"].startswith("This run never started, so it has no log.")
    assert run.message in body["log_note"]
    assert "36 CPUs requested, the host has 2" in body["log_note"]


# What the run's message says for each way of never running.
REASON = {
    "isolation refused": "isolation is the operator's choice",
    "agent unusable": "its image was removed",
}


@pytest.mark.parametrize("why", list(REASON))
def test_a_run_that_never_ran_is_not_graded(site, runner_user, settings, monkeypatch, why):
    """No run that ends without running (refused by the isolation the operator chose after
    the launch, an agent the site cannot configure; too big for every host above) is
    handed to grading: a "no submission" would count as a 0% result."""
    from webapp.results.models import Run
    from webapp.runs.models import AgentRun
    from webapp.runs.services import execution
    from webapp.runs.services.execution import agent_run_execute

    settings.MLEBOARD_HOST_CPUS = 4
    launch_id = launch(
        api_for(runner_user), agent="baseline", competitions=["demo-wine"], seeds=1, cpus=1, gpus=0
    )
    run = AgentRun.objects.get(launch_id=launch_id)
    if why == "isolation refused":
        # The launch asked for docker; the operator has since switched to local runs and
        # not allowed them.
        settings.MLEBOARD_RUN_BACKEND = "local"
        settings.MLEBOARD_ALLOW_UNISOLATED_RUNS = False
    else:

        def unusable(name):
            raise AgentConfigError(f"{name}: its image was removed")

        monkeypatch.setattr(execution, "find_site_agent", unusable)
    agent_run_execute(run.pk, token="t")
    run.refresh_from_db()
    assert run.status == AgentRun.Status.HARNESS_ERROR, run.message
    # Ended for the reason the case names, before the harness was tried: a run that reached
    # the harness (and failed there, e.g. on an image this site never built) has an output
    # folder and says something else.
    assert REASON[why] in run.message, run.message
    assert not run.output_dir and not run.container
    assert run.result_run_id is None
    assert not Run.objects.filter(experiment_id=run.launch.experiment_id).exists()
    assert not GradeReport.objects.filter(experiment_id=run.launch.experiment_id).exists()
