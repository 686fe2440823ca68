"""The upload page sends archives in pieces (tus): a page reloaded mid-upload lists the
unfinished upload, and choosing the same file continues it where it stopped - one upload,
graded by a real worker."""

import json
import os
import re

import pytest

from benchmark.demo import DEMO_COMPETITIONS
from tests.support import archive_builders as ab
from tests.support.browser import shot, sign_in_to
from webapp.results.models import PartialUpload, Upload
from webapp.results.uploads import resumable

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
]


def test_a_reloaded_upload_page_continues_the_upload(
    page,
    live_server,
    demo_leaderboards,
    celery_worker_process,
    django_user_model,
    tmp_path,
    monkeypatch,
):
    monkeypatch.setattr(resumable, "BROWSER_CHUNK_BYTES", 256 * 1024)
    django_user_model.objects.create_user("uma", password="pw-uma-123456")
    group = "2024-10-01T00-00-00-GMT_run-group_linear"
    files = {f"{group}/metadata.json": json.dumps({"run_group": group, "runs": {}}).encode()}
    for index, cid in enumerate(DEMO_COMPETITIONS):
        run = f"{group}/{ab.run_id(cid, index)}"
        files[f"{run}/submission/submission.csv"] = demo_leaderboards.submissions["linear"][0][
            cid
        ].read_bytes()
        files[f"{run}/logs/run.log"] = os.urandom(2 * 1024 * 1024)  # 8 MiB in all: 32 pieces
    archive = ab.write_file(tmp_path / "runs.tar", ab.tar_bytes(files))
    length = archive.stat().st_size
    # The connection drops after a quarter of the pieces: later pieces never reach the site,
    # so the reload lands mid-upload however fast or slow the machine is.
    quarter = (length // 4) // resumable.BROWSER_CHUNK_BYTES + 1
    sent = []

    def network(route):
        if route.request.method != "PATCH":
            route.continue_()
        elif len(sent) < quarter:
            sent.append(1)
            route.continue_()
        else:
            route.abort()

    page.route("**/api/uploads/tus/*/", network)

    def fill_form():
        page.set_input_files("input[name=archive]", str(archive))
        page.fill("input[name=scaffold]", "reference")
        page.fill("input[name=model]", "linear")

    sign_in_to(page, live_server, "uma", "pw-uma-123456")
    page.goto(live_server.url + "/uploads/new/")
    fill_form()
    page.click("#upload-form button[type=submit]")
    page.wait_for_function(f"(window.mleboardUploadOffset || 0) >= {length // 4}", timeout=60000)
    shot(page, "upload-resumable-sending")
    page.reload()
    # The site lists what it has of the upload; the file is chosen again.
    page.wait_for_selector("#unfinished:not([hidden])")
    page.unroute("**/api/uploads/tus/*/")
    page.console_errors.clear()  # the pieces the dropped connection refused
    received = PartialUpload.objects.get().offset
    assert 0 < received < length
    assert "Choose the same file to continue" in page.locator("#unfinished").inner_text()
    shot(page, "upload-resumable-unfinished")
    fill_form()
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/uploads/\d+/$"), timeout=120000)
    page.wait_for_function(
        "document.getElementById('up-status').textContent === 'graded'", timeout=90000
    )
    shot(page, "upload-resumable-graded")
    # One upload, continued (not sent again from the start), graded.
    assert PartialUpload.objects.count() == 1 and Upload.objects.count() == 1
    upload = Upload.objects.get()
    assert upload.size == length and upload.status == "graded"
    assert page.locator("#up-graded").inner_text() == "4"
    assert page.console_errors == []
