"""The paper's scaffolds as agents: AIDE and OpenHands launched from the site, run by a
real Celery worker in containers with no network on the real Docker engine, reaching a
fake LLM (``tests/support/fake_llm.py``, a scripted server, not a model) through the
socket bridge, and graded on demo-wine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from rest_framework.authtoken.models import Token

from runner.agent_definition import find_agent, load_agent
from tests.support.fake_llm import FakeLLM
from tests.support.polling import wait_until

pytestmark = [
    pytest.mark.services,
    pytest.mark.docker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
]

API_KEY = "sk-mleboard-test-0123456789abcdef"


@pytest.fixture
def fake_llm():
    with FakeLLM() as server:
        yield server


@pytest.fixture
def scaffold_dirs(tmp_path, docker_client):
    """Copies of the shipped scaffolds that stop after a few steps, as site agents. Only
    their host-side ``agent.yaml`` differs (the number of steps), so the shipped image is
    theirs too: it is tagged with the copy's content tag instead of being built again."""
    from runner.images import agent_image_ref, build_agent_image, build_base_image

    build_base_image(docker_client)
    folder = tmp_path / "agents"
    for name, steps in (
        ("aide", ("AIDE_STEPS", "2")),
        ("openhands", ("OPENHANDS_MAX_ITERATIONS", "10")),
    ):
        shipped = find_agent(name)
        built = build_agent_image(docker_client, shipped)
        copy = folder / name
        shutil.copytree(shipped.directory, copy)
        text = (copy / "agent.yaml").read_text()
        key, value = steps
        text = text.replace(f'{key}: "{shipped.env[key]}"', f'{key}: "{value}"')
        (copy / "agent.yaml").write_text(text)
        assert load_agent(copy).env[key] == value
        repository, tag = agent_image_ref(load_agent(copy)).rsplit(":", 1)
        docker_client.images.get(built.ref).tag(repository, tag)
    return folder


@pytest.fixture
def site(tmp_path, settings, scaffold_dirs, fake_llm, monkeypatch):
    """demo-wine on the site, the scaffolds as site agents and the operator's model
    endpoint (the fake LLM) in the environment the worker inherits."""
    from tests.support.demo_builds import demo_site

    settings.MLEBOARD_AGENT_DIRS = [scaffold_dirs]
    monkeypatch.setenv("MLEBOARD_AGENT_DIRS", str(scaffold_dirs))
    monkeypatch.setenv("MLEBOARD_RUN_BACKEND", "docker")
    monkeypatch.setenv("MLEBOARD_LLM_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("MLEBOARD_LLM_API_KEY", API_KEY)
    return demo_site(tmp_path, settings, competitions=("demo-wine",))


@pytest.fixture
def api(django_user_model):
    user = django_user_model.objects.create_user("sam", password="pw-sam-12345")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


def run_on_demo_wine(api, agent: str, worker) -> dict:
    """Launch ``agent`` on demo-wine and wait until its run is graded; the run's status."""
    response = api.post(
        "/api/launches/",
        json.dumps(
            {
                "agent": agent,
                "competitions": ["demo-wine"],
                "seeds": 1,
                "cpus": 1,
                "memory": "2g",
                "gpus": 0,
                "time_limit_s": 600,
            }
        ),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    launch_id = response.json()["id"]
    status = wait_until(
        lambda: (
            (s := api.get(f"/api/launches/{launch_id}/").json())["runs"][0]["grading"]
            in ("graded", "failed")
            and s
        ),
        timeout=300,
    )
    run = status["runs"][0]
    log = api.get(f"/api/agent-runs/{run['id']}/").json().get("log_tail", "")
    assert run["status"] == "completed", (run, log[-3000:], worker.log_path.read_text()[-3000:])
    return run


def check_graded_and_private(run: dict, fake_llm: FakeLLM, kind: str) -> Path:
    """The run's submission is graded valid and good; the key reached the fake LLM and is
    in no file the run left. Returns the run's folder."""
    from webapp.results.models import GradeReport
    from webapp.runs.models import AgentRun

    report = GradeReport.objects.get(run__agent_run__pk=run["id"], is_current=True)
    assert report.submission_exists and report.valid_submission, report.error
    assert report.score is not None and report.score < 0.3  # log loss of a real model
    assert any(r["kind"].startswith(kind) for r in fake_llm.requests)
    assert {r["authorization"] for r in fake_llm.requests} == {f"Bearer {API_KEY}"}
    folder = Path(AgentRun.objects.get(pk=run["id"]).output_dir)
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert API_KEY.encode() not in path.read_bytes(), path
    assert AgentRun.objects.get(pk=run["id"]).egress_granted is False
    # Its experiment names the operator's model (none named here), not "no LLM".
    assert report.experiment.agent.model.name == "the operator's model"
    assert (folder / "code" / "solution.py").is_file()
    return folder


def page_shows(run: dict, text: str) -> bool:
    """Whether the run's page, seen by its owner, holds ``text``."""
    owner = Client()
    owner.login(username="sam", password="pw-sam-12345")
    page = owner.get(f"/runs/agent/{run['id']}/")
    return page.status_code == 200 and text in page.content.decode()


def test_aide_runs_through_the_site_and_its_journal_shows(
    site,
    fake_llm,
    celery_worker_process,
    api,
):
    run = run_on_demo_wine(api, "aide", celery_worker_process)
    folder = check_graded_and_private(run, fake_llm, "aide")
    assert (folder / "logs" / "journal.json").is_file()
    # The run page draws AIDE's search tree from the journal: two nodes, one best path.
    tree = api.get(f"/api/runs/agent/{run['id']}/trajectory/").json()
    assert tree["journal"] == "logs/journal.json"
    assert len(tree["nodes"]) == 2, tree
    assert page_shows(run, "logs/journal.json")
    check_tokens_metered(run, fake_llm, api)


def check_tokens_metered(run: dict, fake_llm: FakeLLM, api) -> None:
    """The bridge counted every request, and the tokens on the run page, in its API and
    on its experiment equal the sum of the usage the endpoint returned."""
    from webapp.results.models import Experiment
    from webapp.results.pages.tokens import experiment_tokens

    served = fake_llm.usage_served
    prompt = sum(u["prompt_tokens"] for u in served)
    completion = sum(u["completion_tokens"] for u in served)
    assert served and len(served) == len(fake_llm.requests)
    usage = api.get(f"/api/runs/agent/{run['id']}/").json()["llm_usage"]
    assert usage["source"] == "metered" and usage["estimated_requests"] == 0, usage
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (prompt, completion), usage
    assert usage["completion_requests"] == len(fake_llm.requests) and usage["errors"] == {}
    assert page_shows(run, f'<strong id="run-tokens-total">{prompt + completion:,}</strong>')
    experiment = Experiment.objects.get(launch__runs__pk=run["id"])
    figures = experiment_tokens(experiment)
    assert figures["source"] == "metered" and figures["total_tokens"] == prompt + completion
    owner = Client()
    owner.login(username="sam", password="pw-sam-12345")
    page = owner.get(experiment.get_absolute_url()).content.decode()
    assert f'id="tokens-total">{prompt + completion:,}<' in page
    print(
        f"AIDE on demo-wine: {len(served)} requests, {prompt} prompt + {completion} completion tokens, {usage['wait_s']} s waiting"
    )


def test_openhands_runs_through_the_site_and_its_events_show(
    site,
    fake_llm,
    celery_worker_process,
    api,
):
    run = run_on_demo_wine(api, "openhands", celery_worker_process)
    folder = check_graded_and_private(run, fake_llm, "openhands")
    check_tokens_metered(run, fake_llm, api)
    # Write the script, run it, look in IPython, finish: four model calls, the events shown
    # as a timeline.
    assert [r["kind"] for r in fake_llm.requests] == ["openhands"] * 4
    events = api.get(
        f"/api/runs/agent/{run['id']}/timeline", {"file": "logs/openhands_events.jsonl"}
    ).json()["events"]
    labels = [e["label"] for e in events]
    assert "action: run" in labels and "action: finish" in labels, labels
    records = [
        json.loads(line)
        for line in (folder / "logs" / "openhands_events.jsonl").read_text().splitlines()
    ]
    assert any(
        r.get("observation") == "run" and "Submission is valid" in r.get("content", "")
        for r in records
    ), records
    assert any(
        r.get("observation") == "run_ipython" and "submission shape (36, 4)" in r.get("content", "")
        for r in records
    ), records
    assert page_shows(run, "logs/openhands_events.jsonl")


def test_a_scaffold_needs_the_operators_endpoint(monkeypatch):
    from runner.agent_definition import AgentConfigError
    from runner.harness import spec_for_agent

    with pytest.raises(AgentConfigError, match="MLEBOARD_LLM_BASE_URL, MLEBOARD_LLM_API_KEY"):
        spec_for_agent(find_agent("aide"), "demo-wine", host_env={})
    spec = spec_for_agent(
        find_agent("aide"),
        "demo-wine",
        host_env={"MLEBOARD_LLM_BASE_URL": "http://127.0.0.1:9/v1", "MLEBOARD_LLM_API_KEY": "k"},
    )
    assert spec.llm_base_url == "http://127.0.0.1:9/v1" and not spec.network.egress
    assert "OPENAI_API_KEY" in spec.secret_env and spec.env["OPENAI_API_KEY"] == "k"


def test_an_unreachable_endpoint_stops_the_run_before_it_starts(tmp_path, demo_data, docker_client):
    from runner.harness import run_agent, spec_for_agent
    from runner.spec import Outcome, Resources

    spec = spec_for_agent(
        find_agent("aide"),
        "demo-breast-cancer",
        resources=Resources(cpus=1, memory=512 * 1024**2, gpus=0),
        time_limit_s=60,
        host_env={
            "MLEBOARD_LLM_BASE_URL": "http://127.0.0.1:9/v1",
            "MLEBOARD_LLM_API_KEY": API_KEY,
        },
    )
    outcome = run_agent(spec, data_dir=demo_data, output_dir=tmp_path / "out", backend="docker")
    assert outcome.outcome is Outcome.HARNESS_ERROR
    assert "not reachable from this host" in outcome.detail and "not started" in outcome.detail
    assert API_KEY not in outcome.logs_path.read_text()
