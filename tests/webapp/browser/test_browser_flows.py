"""Flows a person goes through in the browser: signing in, uploading an archive and
watching it graded live by a real worker; the agent-run pages."""

import json
import re

import pytest
from django.contrib.auth.models import Permission

from benchmark.demo import DEMO_COMPETITIONS
from tests.support import archive_builders as ab
from tests.support.browser import shot, sign_in_to

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
]


def test_upload_form_and_live_progress(
    page, live_server, demo_leaderboards, celery_worker_process, django_user_model, tmp_path
):
    django_user_model.objects.create_user("ivy", password="pw-ivy-12345")
    group = "2024-10-01T00-00-00-GMT_run-group_linear"
    files = {f"{group}/metadata.json": json.dumps({"run_group": group, "runs": {}}).encode()}
    for index, cid in enumerate(DEMO_COMPETITIONS):
        files[f"{group}/{ab.run_id(cid, index)}/submission/submission.csv"] = (
            demo_leaderboards.submissions["linear"][0][cid].read_bytes()
        )
    archive = ab.write_file(tmp_path / "runs.zip", ab.zip_bytes(files))

    sign_in_to(page, live_server, "ivy", "pw-ivy-12345")
    page.goto(live_server.url + "/uploads/new/")
    page.set_input_files("input[name=archive]", str(archive))
    page.fill("input[name=scaffold]", "reference")
    page.fill("input[name=model]", "none")
    page.select_option("select[name=disclosure-internet]", "no")
    shot(page, "upload-form")
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/uploads/\d+/$"), timeout=120000)
    # The page updates itself (no reload) until every run is graded.
    page.wait_for_function(
        "document.getElementById('up-status').textContent === 'graded'", timeout=90000
    )
    assert (
        page.locator("#up-graded").inner_text() == "4"
        and page.locator("#up-total").inner_text() == "4"
    )
    assert page.locator("#up-experiment").is_visible()
    shot(page, "upload-progress")
    assert page.console_errors == []


def test_agent_run_pages(
    page, live_server, demo_leaderboards, unisolated, celery_worker_process, django_user_model
):
    user = django_user_model.objects.create_user("jon", password="pw-jon-123456")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    sign_in_to(page, live_server, "jon", "pw-jon-123456")
    page.goto(live_server.url + "/runs/new/")
    page.select_option("select[name=agent]", "dummy")
    page.select_option("select[name=split]", "demo")
    page.fill("input[name=cpus]", "1")
    page.fill("input[name=memory]", "1g")
    page.fill("input[name=gpus]", "0")
    page.fill("input[name=time_limit_s]", "120")
    assert "not in containers" in page.locator("#unisolated-banner").inner_text()
    shot(page, "launch-form")
    page.click("#launch-form button[type=submit]")
    page.wait_for_url("**/runs/*/")
    assert page.locator("#agent-runs tbody tr").count() == 4
    # Statuses update live; the dummy agent copies the sample submission.
    page.wait_for_function(
        "Array.from(document.querySelectorAll('.run-grading')).every(td => td.textContent.trim() === 'graded')",
        timeout=120000,
    )
    assert page.locator(".run-status").first.inner_text() == "completed"
    page.locator(".show-log").first.click()
    page.wait_for_function(
        "document.getElementById('run-log').textContent !== 'Pick a run’s “log”.'", timeout=10000
    )
    shot(page, "launch-status")
    assert page.console_errors == []
