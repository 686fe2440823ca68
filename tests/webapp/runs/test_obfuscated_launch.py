"""Launching agents on MLE-bench's obfuscated descriptions: the choice reaches the
experiment (its flag) and each run's spec (the obfuscated text the agent reads); a
competition without one is refused with what to do."""

import json

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from rest_framework.authtoken.models import Token

from benchmark.demo import demo_task, obfuscated_description, write_prepared
from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync
from webapp.results.management.commands.load_demo import store_demo_descriptions
from webapp.runs.models import Launch

pytestmark = pytest.mark.django_db
COMPETITIONS = ("demo-wine", "demo-digits")


@pytest.fixture
def demo_site(tmp_path, settings, unisolated):
    """The demo's two smallest competitions, prepared, with their descriptions stored as
    ``load_demo`` stores them."""
    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MEDIA_ROOT.mkdir()
    for competition_id in COMPETITIONS:
        write_prepared(demo_task(competition_id), settings.MLEBOARD_DATA_DIR)
    catalogue_sync(include_demo=True)
    store_demo_descriptions()


@pytest.fixture
def api(django_user_model):
    user = django_user_model.objects.create_user("olga", password="pw-olga-1234")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


def post(api, **body):
    return api.post("/api/launches/", json.dumps(body), content_type="application/json")


def test_the_demo_has_obfuscated_descriptions_without_its_identity(demo_site):
    competition = Competition.objects.get(slug="demo-wine")
    assert competition.description_obfuscated == obfuscated_description("demo-wine")
    assert "demo-wine" not in competition.description_obfuscated
    assert "scikit-learn" not in competition.description_obfuscated


def test_a_launch_on_obfuscated_descriptions_flags_its_experiment_and_spec(
    demo_site, api, monkeypatch
):
    response = post(
        api, agent="dummy", competitions=["demo-wine"], obfuscated_descriptions=True, seeds=1
    )
    assert response.status_code == 201, response.content
    launch = Launch.objects.get(pk=response.json()["id"])
    assert launch.experiment.obfuscated_descriptions is True

    import runner.harness

    seen = {}
    real = runner.harness.spec_for_agent

    def spy(*args, **kwargs):
        seen["obfuscated"] = kwargs.get("obfuscated_description")
        return real(*args, **kwargs)

    monkeypatch.setattr(runner.harness, "spec_for_agent", spy)
    from webapp.runs.tasks import execute_agent_run_task

    execute_agent_run_task.apply(args=(launch.runs.get().pk,))
    assert seen["obfuscated"] == obfuscated_description("demo-wine")


def test_a_competition_without_an_obfuscated_description_is_refused(demo_site, api):
    Competition.objects.filter(slug="demo-digits").update(description_obfuscated="")
    response = post(
        api,
        agent="dummy",
        competitions=["demo-wine", "demo-digits"],
        obfuscated_descriptions=True,
    )
    assert response.status_code == 400
    assert "no obfuscated description for demo-digits" in response.content.decode()
    assert post(api, agent="dummy", competitions=["demo-digits"]).status_code == 201
