"""The run hosts page in a browser: a real worker's host is up and beating; it is killed,
its heartbeat goes stale, the sweeper marks it down and releases what it held, and the
page says so."""

import datetime as dt

import pytest
from django.utils import timezone

from tests.support.browser import shot
from tests.support.hosts import GiB, kill_group, make_host, make_runs, start_run_host
from tests.support.polling import wait_until
from tests.support.users import member_of
from webapp.ops.sweeper import sweep
from webapp.runs import capacity
from webapp.runs.models import AgentRun, HostClaim, RunHost

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_hosts_page_shows_a_host_going_down(page, live_server, tmp_path, settings):
    from django.contrib.auth.models import User

    settings.MLEBOARD_STALE_AFTER_S = 4
    member_of(User, "operators", "ops", password="pw-ops-123456")
    proc = start_run_host(
        tmp_path,
        "gpu-node-1",
        "runs.cpu,runs.gpu",
        2,
        MLEBOARD_STALE_AFTER_S="4",
        MLEBOARD_HOST_CPUS="16",
        MLEBOARD_HOST_MEMORY=str(64 * GiB),
        MLEBOARD_HOST_GPUS="0,1",
        MLEBOARD_HOST_GPU_MODEL="NVIDIA A10",
    )
    try:
        wait_until(lambda: RunHost.objects.filter(name="gpu-node-1").exists(), timeout=90)
        # A run the worker's host holds a GPU for (claimed as its worker would), and a
        # second host that stays up.
        steady = make_host("cpu-node-2", cpus=8, memory=32 * GiB, gpus=())
        (run,) = make_runs(1, gpus=1)
        assert capacity.reserve("gpu-node-1", run.pk, "t", cpus=4, memory=8 * GiB, gpus=1)
        AgentRun.objects.filter(pk=run.pk).update(
            status=AgentRun.Status.RUNNING, claimed_by="t", attempts=1, heartbeat_at=timezone.now()
        )

        page.goto(live_server.url + "/accounts/login/?next=/hosts/")
        page.fill("input[name=username]", "ops")
        page.fill("input[name=password]", "pw-ops-123456")
        page.click("form button[type=submit]")
        page.wait_for_url(live_server.url + "/hosts/")
        row = page.locator("tr[data-host='gpu-node-1']")
        assert row.get_attribute("data-state") == "up"
        assert "up" in row.locator(".host-state").inner_text()
        assert f"#{run.pk}" in row.inner_text() and "NVIDIA A10" in row.inner_text()
        assert "12 / 16" in row.inner_text()  # CPUs free / total
        shot(page, "hosts-up")
    finally:
        kill_group(proc)

    # The worker is gone (waited for): its last beat is backdated past the stale time, and
    # the sweeper marks the host down.
    RunHost.objects.filter(name="gpu-node-1").update(
        heartbeat_at=timezone.now() - dt.timedelta(seconds=settings.MLEBOARD_STALE_AFTER_S + 1)
    )
    RunHost.objects.filter(pk=steady.pk).update(heartbeat_at=timezone.now())
    AgentRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - dt.timedelta(seconds=10)
    )
    assert sweep().hosts_down == ["gpu-node-1"]
    assert not HostClaim.objects.filter(host__name="gpu-node-1").exists()

    page.reload()
    row = page.locator("tr[data-host='gpu-node-1']")
    assert row.get_attribute("data-state") == "down"
    assert "down" in row.locator(".host-state").inner_text()
    assert "no heartbeat since" in row.inner_text()
    assert "16 / 16" in row.inner_text() and f"#{run.pk}" not in row.inner_text()
    assert page.locator("tr[data-host='cpu-node-2']").get_attribute("data-state") == "up"
    shot(page, "hosts-down")
    assert page.console_errors == []
    run.refresh_from_db()
    assert run.status == AgentRun.Status.QUEUED  # to be run again on another host
