"""Bad input never reaches a 500: each input that once did (some only on PostgreSQL)
answers a 4xx with a message a person can act on and leaves nothing half-written; then
hypothesis throws text with NUL, unicode and huge numbers at the pages' query parameters."""

import json
import math
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token

from tests.support import archive_builders as ab
from tests.support.routes import site_routes
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment, GradeReport, Upload
from webapp.results.uploads.services import upload_process
from webapp.runs.models import Launch

pytestmark = pytest.mark.django_db

METADATA = {"scaffold": "aide", "model": "gpt-4o"}
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


@pytest.fixture
def alice(django_user_model):
    user = django_user_model.objects.create_user("alice", password="pw-alice-123")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    return user


@pytest.fixture
def api(alice):
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")


@pytest.fixture
def admin_client_logged_in(django_user_model):
    django_user_model.objects.create_superuser("root", password="pw-root-12345")
    browser = Client()
    browser.login(username="root", password="pw-root-12345")
    return browser


def upload(api, metadata, data: bytes | None = None, name: str = "runs.zip"):
    archive = SimpleUploadedFile(
        name, data or ab.zip_bytes(ab.run_group_files("rg", ["spaceship-titanic"]))
    )
    raw = metadata if isinstance(metadata, str) else json.dumps(metadata)
    return api.post("/api/uploads/", {"archive": archive, "metadata": raw})


def files_in(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def error_of(response) -> str:
    if response["Content-Type"].startswith("application/json"):
        return json.dumps(response.json())
    return response.content.decode()


# --- NUL in the address -------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/?scaffold=%00",
        "/?model=a%00b&format=json",
        "/competitions/%00/",
        "/competitions/?q=%00",
        "/compare/?experiments=1,2&split=%00",
        "/api/leaderboard/?scaffold=%00",
        "/api/leaderboard/?source=%00",
        "/api/competitions/?category=%00",
        "/api/competitions/%00/",
        "/api/compare/?experiments=%00",
        # the admin's changelist searches and filters (signed in as a superuser)
        "/admin/results/experiment/?q=%00",
        "/admin/results/experiment/?source__exact=%00",
        "/admin/competitions/competition/?q=a%00",
        "/admin/auth/user/?q=%00",
    ],
)
def test_a_nul_in_the_address_is_a_400_that_says_so(admin_client_logged_in, url):
    response = admin_client_logged_in.get(url)
    assert response.status_code == 400
    assert "NUL" in error_of(response)


# --- ids ------------------------------------------------------------------------------


def test_non_ascii_digits_are_not_experiment_ids(client):
    page = client.get("/compare/", {"experiments": "²,1"})
    assert page.status_code == 400
    assert "Pick two or more experiments" in page.content.decode()
    api = client.get("/api/compare/", {"experiments": "²,١,1"})
    assert api.status_code == 400
    assert "two or more experiments" in api.json()["error"]


# --- JSON nested past what Python reads -------------------------------------------------


def test_deeply_nested_upload_metadata_is_a_400(api, media):
    response = upload(api, DEEP)
    assert response.status_code == 400
    assert "nested" in response.json()["error"]
    assert Upload.objects.count() == 0 and files_in(media) == []


def test_deeply_nested_seeds_are_a_400(api, media):
    response = upload(api, json.dumps(METADATA)[:-1] + ', "seeds": {"rg": ' + DEEP + "}}")
    assert response.status_code == 400
    assert "nested" in response.json()["error"]
    shallow = upload(api, {**METADATA, "seeds": {"rg": [[[0]]]}})
    assert shallow.status_code == 400 and "seeds" in shallow.json()["error"]
    assert Upload.objects.count() == 0 and files_in(media) == []


def test_deeply_nested_seeds_in_the_upload_form_are_refused(alice, media, client):
    client.login(username="alice", password="pw-alice-123")
    response = client.post(
        "/uploads/new/",
        {
            "archive": SimpleUploadedFile("runs.zip", ab.zip_bytes({"a.txt": b"x"})),
            "scaffold": "aide",
            "model": "o1",
            "seeds": DEEP,
        },
    )
    assert response.status_code == 400
    assert "nested" in response.content.decode()
    assert Upload.objects.count() == 0 and files_in(media) == []


def test_a_deeply_nested_launch_body_is_a_400(api):
    response = api.post("/api/launches/", DEEP, content_type="application/json")
    assert response.status_code == 400
    assert "nested" in response.json()["detail"]
    assert Launch.objects.count() == 0


def test_a_deeply_nested_grading_report_fails_its_upload_with_the_reason(api, media):
    response = upload(api, METADATA, data=b'{"competition_reports": ' + DEEP.encode() + b"}")
    assert response.status_code == 202
    upload_process(response.json()["id"], token="test")
    stored = Upload.objects.get()
    assert stored.status == Upload.Status.FAILED and "not valid JSON" in stored.error


# --- NUL in a seeds key: nothing stored, no file left behind -------------------------


@pytest.mark.parametrize("key", ["rg\u0000", "\ud800"])
def test_a_seeds_key_postgresql_cannot_store_is_a_400_and_leaves_no_file(api, media, key):
    response = upload(api, json.dumps({**METADATA, "seeds": {key: 0}}))
    assert response.status_code == 400
    assert "seeds" in response.json()["error"]
    assert Upload.objects.count() == 0 and files_in(media) == []


def test_an_upload_whose_row_cannot_be_saved_leaves_no_file(api, media, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("database down")

    monkeypatch.setattr(Upload, "save", fail)
    with pytest.raises(RuntimeError):
        upload(api, METADATA)
    assert files_in(media) == []


# --- a long unicode file name -----------------------------------------------------------


def test_a_600_byte_unicode_file_name_is_kept_shortened(api, media):
    name = "é" * 298 + ".zip"  # 600 bytes in UTF-8
    assert len(name.encode()) == 600
    response = upload(api, METADATA, name=name)
    assert response.status_code == 202, response.content
    stored = Upload.objects.get()
    assert stored.original_name.startswith("ééé") and stored.original_name.endswith(".zip")
    assert len(stored.original_name) <= Upload._meta.get_field("original_name").max_length
    on_disk = Path(stored.archive.path)
    assert on_disk.is_file() and on_disk.name.endswith(".zip")
    assert len(on_disk.name.encode()) <= 255
    assert api.get(f"/api/uploads/{stored.pk}/").json()["original_name"] == stored.original_name


# --- non-finite floats ------------------------------------------------------------------


def test_a_nan_score_is_stored_as_no_score_and_the_api_answers(api, media):
    reports = [
        {**ab.competition_report_dict("spaceship-titanic"), "score": float("nan")},
        ab.competition_report_dict("aerial-cactus-identification", score=0.75),
    ]
    text = json.dumps({"competition_reports": reports}).encode()
    assert b"NaN" in text
    response = upload(api, METADATA, data=text, name="2024_grading_report.json")
    assert response.status_code == 202
    upload_process(response.json()["id"], token="test")
    stored = Upload.objects.get()
    assert stored.status == Upload.Status.GRADED, stored.error
    assert any("NaN" in w for w in stored.warnings)
    experiment = stored.experiment
    scores = dict(GradeReport.objects.values_list("competition__slug", "score"))
    assert scores == {"spaceship-titanic": None, "aerial-cactus-identification": 0.75}
    body = api.get(f"/api/experiments/{experiment.pk}/reports/")
    assert body.status_code == 200
    assert {r["competition_id"]: r["score"] for r in body.json()} == scores


def test_the_api_answers_with_any_stored_float(api, media):
    response = upload(
        api,
        METADATA,
        data=ab.grading_report_bytes([ab.competition_report_dict("spaceship-titanic")]),
        name="grading_report.json",
    )
    upload_process(response.json()["id"], token="test")
    experiment = Experiment.objects.get()
    GradeReport.objects.update(
        score=math.inf, gold_threshold=-math.inf, silver_threshold=math.nan, percentile=math.inf
    )
    Experiment.objects.update(runtime_hours=math.inf, is_published=True)
    for url in (
        f"/api/experiments/{experiment.pk}/reports/",
        f"/api/experiments/{experiment.pk}/",
        "/api/experiments/",
        "/api/leaderboard/",
        f"/experiments/{experiment.pk}/",
        f"/experiments/{experiment.pk}/reports.json",
        f"/experiments/{experiment.pk}/reports.csv",
        "/competitions/spaceship-titanic/",
    ):
        response = api.get(url)
        assert response.status_code == 200, url
    report = api.get(f"/api/experiments/{experiment.pk}/reports/").json()[0]
    assert report["score"] is None and report["gold_threshold"] is None
    assert report["silver_threshold"] is None and report["bronze_threshold"] == 0.7


# --- sizes ------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["memory", "shm"])
@pytest.mark.parametrize("size", ["99999999999999999999999g", "9" * 400, "2048t"])
def test_a_size_past_the_maximum_is_a_400_that_says_the_maximum(api, field, size):
    response = api.post(
        "/api/launches/",
        json.dumps({"agent": "baseline", "competitions": ["spaceship-titanic"], field: size}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "at most 1024t" in response.json()["error"]
    assert Launch.objects.count() == 0


def test_more_gpus_than_the_maximum_is_a_400(api, alice, client):
    body = {"agent": "baseline", "competitions": ["spaceship-titanic"], "gpus": 40_000}
    response = api.post("/api/launches/", json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    assert "less than or equal to 64" in json.dumps(response.json())
    client.login(username="alice", password="pw-alice-123")
    page = client.post("/runs/new/", {**body, "competitions": "spaceship-titanic", "seeds": 1})
    assert page.status_code == 400 and "less than or equal to 64" in page.content.decode()
    assert Launch.objects.count() == 0


@pytest.mark.parametrize(
    "url",
    [
        "/competitions/?split=huge",
        "/api/competitions/?split=huge",
        "/compare/?split=huge",
        "/compare/?experiments=1,2&split=huge",
    ],
)
def test_an_unknown_split_is_a_400_that_lists_the_valid_names(client, url):
    response = client.get(url)
    assert response.status_code == 400
    text = error_of(response)
    assert "unknown split" in text.lower() and "huge" in text
    for name in ("low", "systemcard", "lite", "split75"):
        assert name in text


# --- hypothesis over the pages' query parameters --------------------------------------

PAGE_PARAMS = {
    "/": [
        "scaffold",
        "model",
        "source",
        "since",
        "until",
        "internet_access",
        "known_leakage",
        "clean",
        "format",
    ],
    "/competitions/": ["category", "complexity", "split", "q"],
    "/competitions/spaceship-titanic/": ["split"],
    "/compare/": ["experiments", "split"],
    "/changes/": ["page", "kind"],
    "/api/changes/": ["page", "kind"],
}
HUGE = st.integers(min_value=-(10**40), max_value=10**40).map(str)
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
ID_LISTS = st.lists(st.one_of(HUGE, TEXT), max_size=4).map(",".join)


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    page=st.sampled_from(sorted(PAGE_PARAMS)),
    values=st.lists(st.one_of(TEXT, HUGE, ID_LISTS, st.just("\x00")), min_size=1, max_size=4),
    data=st.data(),
)
def test_page_query_parameters_never_reach_a_500(client, page, values, data):
    names = PAGE_PARAMS[page]
    query = {data.draw(st.sampled_from(names), label="name"): value for value in values}
    response = client.get(page, query)
    assert response.status_code < 500, (page, query)


def test_options_on_every_route_is_never_a_500(admin_client_logged_in):
    """OPTIONS /api/docs/ was a 500 (DRF's metadata answer through an HTML renderer with
    no template for it); every route answers OPTIONS, signed in or not, below 500."""
    routes = site_routes()
    assert "/api/docs/" in routes and len(routes) > 50
    anonymous = Client()
    failures = [
        (who, route, response.status_code)
        for route in routes
        for who, browser in (("anonymous", anonymous), ("admin", admin_client_logged_in))
        for response in [browser.options(route)]
        if response.status_code >= 500
    ]
    assert not failures
