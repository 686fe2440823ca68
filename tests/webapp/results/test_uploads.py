"""Uploads through the API and the form: refusals with their messages, nothing
half-created, duplicates recognised, and who may see or touch what."""

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from tests.support import archive_builders as ab
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment, GradeReport, Run, Upload
from webapp.results.uploads.services import upload_process

pytestmark = pytest.mark.django_db

METADATA = {
    "scaffold": "aide",
    "model": "gpt-4o",
    "hardware": "1xA10",
    "runtime_hours": 24,
    "internet_access": False,
}


@pytest.fixture
def api(alice):
    token = Token.objects.create(user=alice)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}")


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


def post(api, data: bytes, name: str = "runs.zip", metadata=METADATA):
    payload = {"archive": SimpleUploadedFile(name, data)}
    if metadata is not None:
        payload["metadata"] = json.dumps(metadata) if isinstance(metadata, dict) else metadata
    return api.post("/api/uploads/", payload)


def stored_files(media: Path) -> set[str]:
    return {str(p.relative_to(media)) for p in media.rglob("*") if p.is_file()}


def snapshot():
    return (Experiment.objects.count(), Run.objects.count(), GradeReport.objects.count())


def test_anonymous_users_cannot_upload(client, media):
    response = client.post(
        "/api/uploads/", {"archive": SimpleUploadedFile("a.zip", b"x"), "metadata": "{}"}
    )
    assert response.status_code in (401, 403)
    page = client.get("/uploads/new/")
    assert page.status_code == 302 and "/accounts/login/" in page["Location"]
    assert Upload.objects.count() == 0


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (None, '"metadata" field is required'),
        ("{not json", "not valid JSON"),
        ({"scaffold": "x"}, "model"),
        ({"scaffold": "x", "model": "y", "runtime_hours": -1}, "runtime_hours"),
    ],
)
def test_bad_metadata_is_a_400_with_the_reason(api, media, metadata, message):
    response = post(api, ab.zip_bytes({"a.txt": b"x"}), metadata=metadata)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert Upload.objects.count() == 0


MALICIOUS = {
    "traversal": (lambda: ab.zip_with_member("../../etc/evil.csv"), "runs.zip", ".."),
    "absolute": (lambda: ab.zip_with_member("/etc/evil.csv"), "runs.zip", "absolute"),
    "symlink": (lambda: ab.tar_symlink(), "runs.tar", "link"),
    "hardlink": (lambda: ab.tar_hardlink(), "runs.tar", "link"),
    "device": (lambda: ab.tar_device(), "runs.tar", "device"),
    "fifo": (lambda: ab.tar_fifo(), "runs.tar", ""),
    "corrupt": (lambda: ab.truncated(ab.zip_bytes({"a.csv": b"x" * 5000})), "runs.zip", ""),
    "not an archive": (lambda: b"\x00\x01\x02 binary junk", "runs.zip", ""),
}


@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_malicious_archive_is_refused_and_only_the_original_is_kept(api, media, case):
    build, name, needle = MALICIOUS[case]
    before = snapshot()
    response = post(api, build(), name=name)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert needle.lower() in error.lower()
    upload = Upload.objects.get()
    assert upload.status == Upload.Status.FAILED and upload.error == error
    assert snapshot() == before
    # Nothing but the stored original: no extracted files anywhere.
    assert stored_files(media) == {upload.archive.name}


@override_settings(UPLOAD_MAX_MEMBERS=10)
def test_too_many_members(api, media):
    response = post(api, ab.zip_many_members(50))
    assert response.status_code == 400 and "members" in response.json()["error"]


@override_settings(UPLOAD_MAX_TOTAL_BYTES=200_000, UPLOAD_MAX_RATIO=1e9)
def test_total_uncompressed_size(api, media):
    files = {f"f{i}.csv": b"1," * 20_000 for i in range(10)}
    response = post(api, ab.zip_bytes(files))
    assert response.status_code == 400 and "uncompressed" in response.json()["error"]


@override_settings(UPLOAD_MAX_FILE_BYTES=100_000, UPLOAD_MAX_RATIO=1e9)
def test_single_csv_over_the_limit(api, media):
    response = post(api, ab.zip_bytes({"big.csv": b"0," * 100_000}))
    assert response.status_code == 400 and "big.csv" in response.json()["error"]


def test_zip_bomb_by_ratio(api, media, tmp_path):
    bomb = ab.write_zip_bomb(tmp_path / "bomb.zip", 50 * 1024**2)
    response = post(api, bomb.read_bytes(), name="bomb.zip")
    assert response.status_code == 400 and "compression bomb" in response.json()["error"]


def test_unknown_competition_fails_the_upload_with_nothing_created(api, media):
    files = ab.run_group_files(
        "2024-10-01_run-group_aide", ["spaceship-titanic", "no-such-competition-at-all"]
    )
    response = post(api, ab.zip_bytes(files))
    assert response.status_code == 202
    upload = Upload.objects.get()
    upload_process(upload.pk)
    upload.refresh_from_db()
    assert upload.status == Upload.Status.FAILED
    assert "no-such-competition-at-all" in upload.error
    assert snapshot() == (0, 0, 0)
    assert stored_files(media) == {upload.archive.name}


def test_run_groups_become_an_experiment_with_no_submission_runs(api, media):
    files = {}
    for seed in range(2):
        files |= ab.run_group_files(
            f"2024-10-0{seed + 1}_run-group_aide",
            ["spaceship-titanic", "aerial-cactus-identification"],
            without_submission=["aerial-cactus-identification"] if seed == 0 else [],
        )
    response = post(api, ab.zip_bytes(files))
    assert response.status_code == 202
    body = response.json()
    upload_process(body["id"])
    upload = Upload.objects.get(pk=body["id"])
    assert upload.status == Upload.Status.PROCESSING and upload.kind == "run_groups"
    experiment = upload.experiment
    assert experiment.source == Experiment.Source.GRADED and not experiment.is_published
    assert experiment.hardware == "1xA10" and experiment.internet_access is False
    runs = Run.objects.filter(experiment=experiment)
    assert runs.count() == 4
    assert set(runs.values_list("seed", flat=True)) == {0, 1}
    no_submission = runs.get(competition__slug="aerial-cactus-identification", seed=0)
    assert no_submission.submission_path == ""
    progress = api.get(f"/api/uploads/{upload.pk}/").json()
    assert progress["runs_total"] == 4 and progress["experiment"] == experiment.pk


def test_reupload_of_the_same_archive_is_recognised(api, media):
    data = ab.zip_bytes(ab.run_group_files("rg", ["spaceship-titanic"]))
    first = post(api, data).json()
    second = post(api, data).json()
    assert second["id"] == first["id"] and second["duplicate"] is True
    assert Upload.objects.count() == 1


def test_reported_grading_reports_are_stored_as_reported(api, media):
    reports = [
        ab.competition_report_dict(cid)
        for cid in ("spaceship-titanic", "aerial-cactus-identification")
    ]
    response = post(api, ab.grading_report_bytes(reports), name="2024_grading_report.json")
    assert response.status_code == 202
    upload_process(response.json()["id"])
    upload = Upload.objects.get()
    assert upload.status == Upload.Status.GRADED and upload.kind == "reports"
    assert upload.experiment.source == Experiment.Source.REPORTED
    assert set(GradeReport.objects.values_list("source", flat=True)) == {
        GradeReport.Source.REPORTED
    }


def test_others_cannot_see_change_or_regrade_an_unpublished_experiment(
    api, media, alice, django_user_model
):
    response = post(api, ab.zip_bytes(ab.run_group_files("rg", ["spaceship-titanic"])))
    upload_process(response.json()["id"])
    upload = Upload.objects.get()
    experiment = upload.experiment
    bob = django_user_model.objects.create_user("bob", password="pw-bob-12345")
    bob_api = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=bob).key}")
    assert bob_api.get(f"/api/uploads/{upload.pk}/").status_code == 404
    assert bob_api.get(f"/api/experiments/{experiment.pk}/").status_code == 404
    assert bob_api.get(f"/api/experiments/{experiment.pk}/reports/").status_code == 404
    assert bob_api.post(f"/api/experiments/{experiment.pk}/regrade/").status_code == 404
    browser = Client()
    browser.login(username="bob", password="pw-bob-12345")
    assert browser.get(f"/experiments/{experiment.pk}/").status_code == 404
    assert browser.get(f"/uploads/{upload.pk}/").status_code == 404
    assert (
        browser.get(
            "/compare/", {"experiments": f"{experiment.pk},{experiment.pk + 1}"}
        ).status_code
        == 400
    )
    # The owner sees it; the public leaderboard does not list it.
    assert api.get(f"/api/experiments/{experiment.pk}/").status_code == 200
    assert experiment.name not in Client().get("/").content.decode()


def test_upload_form_is_csrf_protected(alice, media):
    browser = Client(enforce_csrf_checks=True)
    browser.login(username="alice", password="pw-alice-123")
    response = browser.post(
        "/uploads/new/",
        {"scaffold": "x", "model": "y", "archive": SimpleUploadedFile("a.zip", b"x")},
    )
    assert response.status_code == 403
    assert Upload.objects.count() == 0


def test_upload_form_creates_an_upload(alice, media, client):
    client.login(username="alice", password="pw-alice-123")
    data = ab.zip_bytes(ab.run_group_files("rg", ["spaceship-titanic"]))
    response = client.post(
        "/uploads/new/",
        {
            "archive": SimpleUploadedFile("runs.zip", data),
            "scaffold": "aide",
            "model": "o1",
            "disclosure-internet": "no",
            "disclosure-gpus": "1",
            "disclosure-models": "o1, gpt-4o",
        },
    )
    upload = Upload.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/uploads/{upload.pk}/"
    assert upload.metadata["disclosure"] == {
        "internet": False,
        "gpus": 1,
        "models": ["o1", "gpt-4o"],
    }
    page = client.get(response["Location"]).content.decode()
    assert "runs graded" in page
