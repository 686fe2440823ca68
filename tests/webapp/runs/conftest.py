"""Fixtures of the agent runs' tests: a site with the demo and a sleeper agent, a person
who may launch."""

import pytest
from django.contrib.auth.models import Permission

from tests.support.demo_builds import demo_site
from tests.support.launches import SLEEPER_DOCKERFILE, SLEEPER_YAML


@pytest.fixture
def agent_dirs(tmp_path):
    folder = tmp_path / "agents" / "sleeper"
    folder.mkdir(parents=True)
    (folder / "agent.yaml").write_text(SLEEPER_YAML)
    (folder / "Dockerfile").write_text(SLEEPER_DOCKERFILE)
    return tmp_path / "agents"


@pytest.fixture
def site(tmp_path, settings, agent_dirs, monkeypatch):
    settings.MLEBOARD_AGENT_DIRS = [agent_dirs]
    monkeypatch.setenv("MLEBOARD_AGENT_DIRS", str(agent_dirs))
    monkeypatch.setenv("MLEBOARD_RUN_BACKEND", "docker")
    return demo_site(tmp_path, settings)


@pytest.fixture
def runner_user(django_user_model):
    user = django_user_model.objects.create_user("erin", password="pw-erin-1234")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    return user
