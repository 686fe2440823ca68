"""Provenance, disclosure and comparability on the site: what an upload discloses (its
metadata, its archive's disclosure.yaml), publishing refused with what is missing (API,
page, admin), the leaderboard's class column and filters, and the old ``?source=verified``
links."""

import csv
import io
import json
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

import benchmark
from benchmark import disclosure as fields
from benchmark.published import entries_from_yaml
from tests.support import archive_builders as ab
from tests.support.factories import FULL_DISCLOSURE
from webapp.competitions.services import catalogue_sync
from webapp.core import roles
from webapp.results.disclosure import disclosure_update
from webapp.results.models import Experiment, Upload
from webapp.results.services import published_entries_store
from webapp.results.uploads.services import upload_process

pytestmark = pytest.mark.django_db

COMPETITIONS = ["spaceship-titanic", "aerial-cactus-identification"]


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


def token_client(user) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


@pytest.fixture
def api(alice):
    return token_client(alice)


@pytest.fixture
def publisher(django_user_model):
    user = django_user_model.objects.create_user("pia", password="pw-pia-12345")
    user.groups.add(Group.objects.get(name=roles.OPERATORS))
    return user


def archive(seeds: int = 3, extra: dict[str, bytes] | None = None, tag: str = "x") -> bytes:
    """Run groups of ``seeds`` seeds; another ``tag``, another archive (the site knows a
    sent archive again by its checksum)."""
    files = {}
    for seed in range(seeds):
        files |= ab.run_group_files(f"2024-10-0{seed + 1}_run-group_{tag}", COMPETITIONS)
    return ab.zip_bytes(files | (extra or {}))


def upload(api, data: bytes, **metadata) -> Upload:
    response = api.post(
        "/api/uploads/",
        {
            "archive": SimpleUploadedFile("runs.zip", data),
            "metadata": json.dumps({"scaffold": "aide", "model": "gpt-4o", **metadata}),
        },
    )
    assert response.status_code == 202, response.content
    upload_process(response.json()["id"])
    return Upload.objects.get(pk=response.json()["id"])


def test_an_upload_with_its_conditions_is_canonical(api, media):
    experiment = upload(api, archive(), disclosure=FULL_DISCLOSURE).experiment
    assert experiment.comparability_class == fields.CANONICAL
    assert experiment.disclosed() == FULL_DISCLOSURE
    body = api.get(f"/api/experiments/{experiment.pk}/").json()
    assert body["provenance"] == "graded" and body["source"] == "graded"
    assert body["comparability"] == {"class": "canonical", "reasons": [], "undisclosed": []}
    assert body["disclosure"]["models"] == ["gpt-4o"]


def test_an_upload_without_them_is_accepted_and_says_what_it_did_not_disclose(api, media):
    experiment = upload(api, archive(seeds=2)).experiment
    assert experiment.comparability_class == fields.BEYOND
    # What the upload itself shows is a fact: two seeds, under MLE-bench's three.
    assert experiment.seeds == 2
    assert experiment.comparability["reasons"] == ["2 seeds"]
    assert "GPUs" in experiment.comparability["undisclosed"]


def test_the_archive_discloses_in_its_disclosure_yaml_and_the_metadata_wins(api, media):
    yaml_text = b"gpus: 2\ngpu_model: H100 80GB\nhours: 36\nmodels: [o3, gpt-4.1]\n"
    data = archive(extra={"disclosure.yaml": yaml_text})
    experiment = upload(api, data, disclosure={"hours": 24}).experiment
    assert experiment.gpus == 2 and experiment.runtime_hours == 24
    assert experiment.models_used == ["o3", "gpt-4.1"]
    reasons = experiment.comparability["reasons"]
    assert "2 GPUs" in reasons and "ensemble of 2 models" in reasons
    assert not any(r.endswith(" h") for r in reasons)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"gpus: many\n", "gpus: must be a whole number"),
        (b"- a list\n", "must hold field: value lines"),
        (b"gpus: [1\n", "not valid YAML"),
        (b"colour: blue\n", "not a disclosure field"),
        (b"\xff\xfe", "not UTF-8"),
        (b"models: [" + b"a, " * 40_000 + b"b]\n", "at most 65,536"),
    ],
)
def test_a_bad_disclosure_yaml_fails_the_upload_with_its_reason(api, media, content, said):
    up = upload(api, archive(seeds=1, extra={"disclosure.yaml": content}))
    assert up.status == Upload.Status.FAILED
    assert said in up.error and "disclosure.yaml" in up.error
    assert Experiment.objects.count() == 0


def test_bad_disclosure_in_the_metadata_is_a_400_naming_the_field(api, media):
    response = api.post(
        "/api/uploads/",
        {
            "archive": SimpleUploadedFile("runs.zip", archive(seeds=1)),
            "metadata": json.dumps(
                {"scaffold": "a", "model": "b", "disclosure": {"vcpus": "²", "selection": "top"}}
            ),
        },
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert "vcpus: must be a whole number" in error and "selection: must be pass@1" in error
    assert Upload.objects.count() == 0


def test_publishing_is_refused_with_what_is_missing_then_allowed(api, alice, publisher, media):
    experiment = upload(api, archive(seeds=3)).experiment
    operator = token_client(publisher)
    refused = operator.post(f"/api/experiments/{experiment.pk}/publish/", {}, "application/json")
    assert refused.status_code == 400
    missing = refused.json()["missing"]
    assert set(missing) == {"gpus", "vcpus", "ram_gib", "hours", "models", "internet"} | {
        "test_labels",
        "selection",
        "source_url",
    }
    assert "GPUs" in refused.json()["error"]
    # The owner states the conditions; they may not publish.
    patch = api.patch(
        f"/api/experiments/{experiment.pk}/disclosure/",
        {k: v for k, v in FULL_DISCLOSURE.items() if k != "seeds"},
        "application/json",
    )
    assert patch.status_code == 200 and patch.json()["comparability"]["class"] == "canonical"
    assert api.post(f"/api/experiments/{experiment.pk}/publish/").status_code == 403
    done = operator.post(f"/api/experiments/{experiment.pk}/publish/", {}, "application/json")
    assert done.status_code == 200 and done.json()["is_published"] is True


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"gpus": -1}, 400, "gpus"),
        ({"hours": 1e9, "gpus": 1}, 400, "hours: must be more than 0 and at most 1,000 h"),
        ({"gpu_model": "x" * 20_000, "gpus": 1}, 400, "gpu_model: is 20,000 characters"),
        ({"gpus": "1e3"}, 400, "whole number"),
        ({"models": "x" * 500}, 400, "models"),
        ({"nested": {"a": {"b": [1]}}}, 400, "not a disclosure field"),
        ({"gpu_model": "A10\x00"}, 400, "NUL"),
        ([1, 2], 400, "object"),
        ({"gpus": None}, 200, ""),
    ],
)
def test_disclosure_patches_answer_400_with_the_reason(api, media, body, status, said):
    experiment = upload(api, archive(seeds=1)).experiment
    response = api.patch(
        f"/api/experiments/{experiment.pk}/disclosure/", json.dumps(body), "application/json"
    )
    assert response.status_code == status, response.content
    assert said in response.content.decode()
    if status == 400:
        # Nothing of a refused body is stored, not even its valid fields.
        assert Experiment.objects.get(pk=experiment.pk).disclosed() == experiment.disclosed()


def test_someone_elses_experiment_cannot_be_disclosed(api, bob, media):
    experiment = upload(api, archive(seeds=1)).experiment
    other = token_client(bob)
    response = other.patch(
        f"/api/experiments/{experiment.pk}/disclosure/", {"gpus": 1}, "application/json"
    )
    # Private: as if it did not exist.
    assert response.status_code == 404
    assert Experiment.objects.get(pk=experiment.pk).gpus is None


def test_the_pages_say_the_class_state_the_conditions_and_refuse_publishing(
    client, alice, publisher, media, api
):
    experiment = upload(api, archive(seeds=3)).experiment
    client.force_login(alice)
    page = client.get(experiment.get_absolute_url()).content.decode()
    assert 'id="conditions"' in page and "Publishing needs: GPUs" in page
    form = client.get(f"/experiments/{experiment.pk}/conditions/")
    assert form.status_code == 200 and 'name="disclosure-gpus"' in form.content.decode()
    bad = client.post(f"/experiments/{experiment.pk}/conditions/", {"disclosure-vcpus": "lots"})
    assert bad.status_code == 400 and "must be a whole number of vCPUs" in bad.content.decode()
    sent = {f"disclosure-{k}": v for k, v in FULL_DISCLOSURE.items()}
    sent |= {"disclosure-models": "gpt-4o", "disclosure-internet": "no"}
    sent |= {"disclosure-test_labels": "no", "disclosure-gpus": "2"}
    saved = client.post(f"/experiments/{experiment.pk}/conditions/", sent)
    assert saved.status_code == 302
    experiment.refresh_from_db()
    assert experiment.comparability_class == "beyond"
    assert experiment.comparability["reasons"] == ["2 GPUs"]

    client.force_login(publisher)
    disclosure_update(experiment, {"source_url": ""})
    answer = client.post(f"/experiments/{experiment.pk}/publish/", {"publish": "1"}, follow=True)
    assert "Not published" in answer.content.decode() and "Source code" in answer.content.decode()
    assert not Experiment.objects.get(pk=experiment.pk).is_published


def test_the_leaderboard_filters_by_class_and_provenance_and_reads_old_links(client, api, media):
    canonical = upload(api, archive(), disclosure=FULL_DISCLOSURE).experiment
    beyond = upload(api, archive(seeds=1, tag="y")).experiment
    Experiment.objects.filter(pk__in=[canonical.pk, beyond.pk]).update(is_published=True)

    def ids(**query):
        return {e["id"] for e in client.get("/api/leaderboard/", query).json()["entries"]}

    assert ids(**{"class": "canonical"}) == {canonical.pk}
    assert ids(**{"class": "beyond"}) == {beyond.pk}
    assert ids(provenance="graded") == ids(source="verified") == {canonical.pk, beyond.pk}
    assert ids(provenance="reproduced") == set()
    assert client.get("/api/leaderboard/", {"class": "best"}).status_code == 400
    assert client.get("/api/leaderboard/", {"provenance": "trusted"}).status_code == 400
    entry = next(
        e for e in client.get("/api/leaderboard/").json()["entries"] if e["id"] == beyond.pk
    )
    assert entry["provenance"] == "graded"
    assert entry["comparability"]["class"] == "beyond"
    assert entry["comparability"]["reasons"] == ["1 seed"]
    page = client.get("/", {"source": "verified"}).content.decode()
    assert 'class="badge class-beyond"' in page and "1 seed" in page
    rows = list(csv.DictReader(io.StringIO(client.get("/", {"format": "csv"}).content.decode())))
    by_id = {int(r["id"]): r for r in rows}
    assert by_id[beyond.pk]["comparability_class"] == "beyond"
    assert by_id[beyond.pk]["comparability_reasons"].startswith("1 seed")


def test_the_published_rows_get_their_class_from_the_readme_columns():
    shipped = Path(benchmark.__file__).parent / "data" / "published_results.yaml"
    published_entries_store(entries_from_yaml(shipped.read_text(encoding="utf-8")))
    disarray = Experiment.objects.get(name__startswith="Disarray")
    assert disarray.comparability_class == "beyond"
    assert "ensemble of 4 models" in disarray.comparability["reasons"]
    assert "uses leaked test labels" in disarray.comparability["reasons"]
    # The README does not say the hardware or the seeds: not guessed.
    assert {"GPUs", "vCPUs", "RAM", "seeds"} <= set(disarray.comparability["undisclosed"])
    classes = {e.comparability_class for e in Experiment.objects.all()}
    assert fields.CANONICAL not in classes


def test_compare_warns_when_the_classes_differ(client, api, alice, media):
    canonical = upload(api, archive(), disclosure=FULL_DISCLOSURE).experiment
    beyond = upload(api, archive(tag="y"), disclosure={**FULL_DISCLOSURE, "hours": 36}).experiment
    same = upload(api, archive(tag="z"), disclosure=FULL_DISCLOSURE).experiment
    client.force_login(alice)
    mixed = client.get("/compare/", {"experiments": f"{canonical.pk},{beyond.pk}"})
    text = mixed.content.decode()
    assert 'id="compare-classes"' in text and "is beyond (36 h)" in text
    body = client.get("/api/compare/", {"experiments": f"{canonical.pk},{beyond.pk}"}).json()
    assert body["comparability"][str(beyond.pk)]["reasons"] == ["36 h"]
    assert "not directly comparable" in body["comparability_warning"]
    alike = client.get("/api/compare/", {"experiments": f"{canonical.pk},{same.pk}"}).json()
    assert alike["comparability_warning"] == ""
    page = client.get("/compare/", {"experiments": f"{canonical.pk},{same.pk}"})
    assert 'id="compare-classes"' not in page.content.decode()
