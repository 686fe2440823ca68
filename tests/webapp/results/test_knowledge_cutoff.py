"""An experiment's model knowledge cutoff: given with an upload's metadata, a launch (form
and API) or the admin; refused with a clear message when it is not a date; shown on the
experiment's page and in its API."""

import datetime as dt
import json

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.support import archive_builders as ab
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment, Upload
from webapp.results.uploads.services import upload_process

pytestmark = pytest.mark.django_db
METADATA = {"scaffold": "aide", "model": "gpt-4o"}


@pytest.fixture
def api(alice):
    alice.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync(include_demo=True)


def upload(api, metadata):
    reports = [ab.competition_report_dict("spaceship-titanic")]
    archive = SimpleUploadedFile("r_grading_report.json", ab.grading_report_bytes(reports))
    return api.post("/api/uploads/", {"archive": archive, "metadata": json.dumps(metadata)})


def test_an_upload_states_the_cutoff_and_the_experiment_shows_it(api, media):
    response = upload(api, {**METADATA, "knowledge_cutoff": "2023-10-01"})
    assert response.status_code == 202, response.content
    upload_process(response.json()["id"])
    experiment = Upload.objects.get().experiment
    assert experiment.knowledge_cutoff == dt.date(2023, 10, 1)
    detail = api.get(f"/api/experiments/{experiment.pk}/").json()
    assert detail["knowledge_cutoff"] == "2023-10-01"
    api.force_login(experiment.owner)  # the page is private to its owner
    page = api.get(experiment.get_absolute_url()).content.decode()
    assert "knowledge cutoff: 2023-10-01" in page


def test_without_a_cutoff_it_is_not_stated(api, media):
    response = upload(api, METADATA)
    upload_process(response.json()["id"])
    experiment = Upload.objects.get().experiment
    assert experiment.knowledge_cutoff is None
    assert api.get(f"/api/experiments/{experiment.pk}/").json()["knowledge_cutoff"] is None
    api.force_login(experiment.owner)
    page = api.get(experiment.get_absolute_url()).content.decode()
    assert "knowledge cutoff: not stated" in page


@pytest.mark.parametrize(
    "value",
    [
        "2023-13-01",
        "October 2023",
        "01/10/2023",
        "2023-10-01T00:00:00",
        20231001,
        {"date": "2023-10-01"},
        ["2023-10-01"],
        "2023-10-01\x00",
        "２０２３-１０-０１",
    ],
)
def test_a_malformed_cutoff_is_refused_with_what_to_write(api, media, value):
    response = upload(api, {**METADATA, "knowledge_cutoff": value})
    assert response.status_code == 400
    error = response.json()["error"]
    assert "knowledge_cutoff" in error and "YYYY-MM-DD" in error, error
    assert Upload.objects.count() == 0 and Experiment.objects.count() == 0


def test_a_launch_states_the_cutoff_through_the_api_and_the_form(
    api, tmp_path, settings, unisolated
):
    from benchmark.demo import demo_task, write_prepared

    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    write_prepared(demo_task("demo-wine"), settings.MLEBOARD_DATA_DIR)
    body = {"agent": "dummy", "competitions": ["demo-wine"], "knowledge_cutoff": "2024-04-30"}
    refused = api.post(
        "/api/launches/",
        json.dumps({**body, "knowledge_cutoff": "last spring"}),
        content_type="application/json",
    )
    assert refused.status_code == 400 and "knowledge_cutoff" in refused.content.decode()
    response = api.post("/api/launches/", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    launched = Experiment.objects.get()
    assert launched.knowledge_cutoff == dt.date(2024, 4, 30)

    api.force_login(launched.owner)
    form = api.get("/runs/new/").content.decode()
    assert 'name="knowledge_cutoff"' in form
    posted = api.post(
        "/runs/new/",
        {
            "agent": "dummy",
            "competitions": "demo-wine",
            "seeds": 1,
            "gpus": 0,
            "knowledge_cutoff": "2022-01-31",
        },
    )
    assert posted.status_code == 302, posted.content.decode()[-2000:]
    assert Experiment.objects.filter(knowledge_cutoff=dt.date(2022, 1, 31)).count() == 1
