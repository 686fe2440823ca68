"""Following agent runs in a browser: the launch form on a site without a model endpoint,
what a local agent can read, a launch followed live (cancel gone once its runs finished,
the log panel naming its run), /runs/ with status and progress, the run page."""

import pytest
from django.contrib.auth.models import Permission

from runner.local_confinement import local_confinement
from tests.support.browser import shot, sign_in_to
from webapp.runs.models import AgentRun
from webapp.work import send

pytestmark = [
    pytest.mark.browser,
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
]


@pytest.fixture
def no_endpoint(monkeypatch):
    for name in ("MLEBOARD_LLM_BASE_URL", "MLEBOARD_LLM_API_KEY", "MLEBOARD_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_following_a_local_launch(
    page, live_server, demo_leaderboards, unisolated, no_endpoint, django_user_model, request
):
    user = django_user_model.objects.create_user("kim", password="pw-kim-123456")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    sign_in_to(page, live_server, "kim", "pw-kim-123456")
    page.goto(live_server.url + "/runs/new/")
    # No model endpoint here: the scaffolds needing one are offered disabled, with the
    # reason, and are not the default.
    agent = page.locator("select[name=agent]")
    assert agent.input_value() == "baseline"
    for name in ("aide", "openhands"):
        option = page.locator(f"select[name=agent] option[value={name}]")
        assert option.is_disabled() and "MLEBOARD_LLM_BASE_URL" in option.inner_text()
    # What a local agent can read of this host, exactly, behind the warning's summary.
    summary = local_confinement().summary
    page.click("#unisolated-details summary")
    assert page.locator("#run-confinement-site").inner_text() == summary
    shot(page, "follow-launch-form")

    agent.select_option("dummy")
    page.fill("input[name=competitions]", "demo-wine demo-digits")
    page.fill("input[name=cpus]", "1")
    page.fill("input[name=memory]", "1g")
    page.fill("input[name=gpus]", "0")
    page.fill("input[name=time_limit_s]", "120")
    page.click("#launch-form button[type=submit]")
    page.wait_for_url("**/runs/*/")
    # No worker yet: both runs are queued and may be cancelled.
    assert page.locator(".cancel-run").count() == 2
    shot(page, "follow-launch-queued")

    # The worker starts on an empty queue (its fixture purges it): the runs are sent again,
    # as the sweeper would send work whose nudge was lost.
    request.getfixturevalue("celery_worker_process")
    for run in AgentRun.objects.all():
        assert send("agent_run", run.pk)
    page.wait_for_function(
        "Array.from(document.querySelectorAll('.run-grading'))"
        ".every(td => td.textContent.trim() === 'graded')",
        timeout=180000,
    )
    # Finished runs lose their cancel button without a reload.
    assert page.locator(".cancel-run").count() == 0
    assert page.locator(".run-status").all_inner_texts() == ["completed", "completed"]
    runs = list(AgentRun.objects.order_by("competition__slug"))
    page.locator(f'tr[data-run="{runs[1].pk}"] .show-log').click()
    which = page.locator("#run-log-which")
    assert which.inner_text() == f"of demo-wine seed 0 (run {runs[1].pk})"
    page.wait_for_function(
        "!['Pick a run\\'s “log”.', 'Loading…'].includes(document.getElementById('run-log').textContent)"
    )
    shot(page, "follow-launch-finished")

    page.goto(live_server.url + "/runs/")
    row = page.locator("#launches tbody tr").first
    assert row.locator(".launch-status").inner_text() == "finished"
    progress = row.locator(".launch-progress").inner_text()
    assert "2/2 finished · 2 graded" in progress and "2 completed" in progress
    assert row.locator("progress").get_attribute("value") == "2"
    shot(page, "follow-runs-list")

    page.goto(live_server.url + f"/runs/agent/{runs[1].pk}/")
    assert summary in page.locator("#run-confinement").inner_text()
    shot(page, "follow-run-page")
    assert page.console_errors == []
