"""The example archive the docs offer (docs/examples/demo-run-groups.zip): it is what
``benchmark.example_archive`` builds from the demo, and a site with the demo grades every
run in it (the API, a real worker over the configured broker and database)."""

import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from benchmark import example_archive
from tests.support.polling import wait_until
from webapp.accounts.tokens import token_create
from webapp.results.models import GradeReport

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "demo-run-groups.zip"


def test_the_docs_example_is_the_demo_build(tmp_path):
    """The same files, and in each submission the same rows with the same values up to the
    last bits a float's training may round differently on another machine's BLAS."""
    from tests.support.demo_builds import build_demo

    build = build_demo(tmp_path / "data", seeds=max(example_archive.SEEDS) + 1)
    fresh = _members(example_archive.example_zip(build))
    shipped = _members(EXAMPLE.read_bytes())
    hint = (
        "docs/examples/demo-run-groups.zip is not what the demo builds: run "
        "`python -m benchmark.example_archive docs/examples/demo-run-groups.zip`"
    )
    assert list(shipped) == list(fresh), hint
    for name, data in fresh.items():
        if not name.endswith(".csv"):
            assert shipped[name] == data, f"{name}: {hint}"
            continue
        ours = pd.read_csv(io.BytesIO(shipped[name]))
        theirs = pd.read_csv(io.BytesIO(data))
        pd.testing.assert_frame_equal(ours, theirs, check_exact=False, rtol=1e-9, atol=1e-12)


def _members(archive: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


@pytest.mark.services
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_site_grades_every_run_of_the_example(
    tmp_path, settings, demo_leaderboards, celery_worker_process, django_user_model
):
    user = django_user_model.objects.create_user("newcomer", password="pw-newcomer-123")
    _, key = token_create(user, name="docs")
    api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    response = api.post(
        "/api/uploads/",
        {
            "archive": SimpleUploadedFile(EXAMPLE.name, EXAMPLE.read_bytes()),
            "metadata": json.dumps({"scaffold": "example", "model": "linear"}),
        },
    )
    assert response.status_code == 202, response.content
    upload_id = response.json()["id"]
    progress = wait_until(
        lambda: (
            (p := api.get(f"/api/uploads/{upload_id}/").json())["status"] in ("graded", "failed")
            and p
        ),
        timeout=300,
        interval=0.5,
    )
    assert progress["status"] == "graded", progress["error"]
    runs = len(example_archive.SEEDS) * 4
    assert progress["runs_total"] == runs and progress["runs_graded"] == runs, progress
    reports = GradeReport.objects.filter(experiment_id=progress["experiment"], is_current=True)
    assert reports.count() == runs
    assert all(r.valid_submission for r in reports), [r.pk for r in reports]
