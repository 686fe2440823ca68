"""The status page and a launch's page in a browser: an operator reaches /status/ from
the navigation and sees who is alive, who is silent, the queues and the free space; the
launch page (refreshed by its script) says no run worker has answered."""

import pytest

from tests.support.browser import shot
from tests.support.hosts import beat, make_runs
from tests.support.users import member_of
from webapp.liveness.models import ProcessBeat

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_operator_sees_who_is_alive_and_what_waits(page, live_server, settings):
    from django.contrib.auth.models import User

    settings.CELERY_TASK_ALWAYS_EAGER = False
    member_of(User, "operators", "ops", password="pw-ops-123456")
    beat("grading@node-1", ["grading", "default"], age_s=5)
    beat("runs@node-1", ["runs.cpu"], age_s=700)
    beat("beat@node-1", [], age_s=2, kind=ProcessBeat.Kind.BEAT)
    (run,) = make_runs(1)

    page.goto(live_server.url + "/accounts/login/?next=/")
    page.fill("input[name=username]", "ops")
    page.fill("input[name=password]", "pw-ops-123456")
    page.click("form button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    page.click("nav a[href='/status/']")
    page.wait_for_url(live_server.url + "/status/")
    states = {
        row.get_attribute("data-process"): row.get_attribute("data-state")
        for row in page.locator("#processes tbody tr").all()
    }
    assert states == {
        "grading@node-1": "alive",
        "runs@node-1": "silent",
        "beat@node-1": "alive",
    }
    runs_queue = page.locator("#queues tr[data-queue='runs.cpu']")
    assert runs_queue.locator(".queue-depth").inner_text() == "1"
    assert "no run worker (runs.cpu) has answered for" in runs_queue.inner_text()
    assert "answers" in page.locator("#queues tr[data-queue='grading']").inner_text()
    assert "free of" in page.locator("#media-space").inner_text()
    shot(page, "status")

    page.goto(f"{live_server.url}/runs/{run.launch_id}/")
    row = page.locator(f"tr[data-run='{run.pk}']")
    # Rendered by the page, then again by its script from the API.
    page.wait_for_function(
        "() => document.querySelectorAll('.run-message .no-worker').length === 1"
    )
    assert "no run worker (runs.cpu) has answered for" in row.inner_text()
    assert page.console_errors == []
