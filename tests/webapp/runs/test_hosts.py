"""Run hosts: resources claimed in the database (no GPU id ever held by two runs, even
under concurrent claims), hosts that register and beat from a real worker, a silent host
marked down by the sweeper with its runs handed over, and /api/hosts/."""

import datetime as dt
import random
import threading
import time

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.utils import timezone

from tests.support.hosts import GiB, kill_group, make_host, make_runs, start_run_host
from tests.support.polling import wait_until
from tests.support.users import member_of
from webapp.runs import capacity, hosts
from webapp.runs.capacity import CapacityError
from webapp.runs.models import AgentRun, HostClaim, Launch, RunHost

# --- claims ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_gpus_are_never_given_to_two_runs():
    make_host()
    a, b, c = make_runs(3, gpus=1)
    ra = capacity.reserve("alpha", a.pk, "ta", cpus=1, memory=GiB, gpus=1)
    rb = capacity.reserve("alpha", b.pk, "tb", cpus=1, memory=GiB, gpus=1)
    assert ra.gpu_ids and rb.gpu_ids and set(ra.gpu_ids).isdisjoint(rb.gpu_ids)
    assert capacity.reserve("alpha", c.pk, "tc", cpus=1, memory=GiB, gpus=1) is None
    capacity.release(a.pk, "ta")
    rc = capacity.reserve("alpha", c.pk, "tc", cpus=1, memory=GiB, gpus=1)
    assert rc.gpu_ids == ra.gpu_ids


@pytest.mark.django_db
def test_cpu_and_memory_admission():
    make_host(cpus=4, memory=16 * GiB)
    a, b, c, d = make_runs(4)
    assert capacity.reserve("alpha", a.pk, "t", cpus=3, memory=8 * GiB, gpus=0)
    assert capacity.reserve("alpha", b.pk, "t", cpus=2, memory=GiB, gpus=0) is None  # 5 > 4
    assert capacity.reserve("alpha", c.pk, "t", cpus=1, memory=9 * GiB, gpus=0) is None
    assert capacity.reserve("alpha", d.pk, "t", cpus=1, memory=8 * GiB, gpus=0)
    free = capacity.free(RunHost.objects.get(name="alpha"))
    assert free == {"cpus": 0.0, "memory_bytes": 0, "gpu_ids": ["0", "1"]}


@pytest.mark.django_db
def test_a_request_larger_than_the_host_is_an_error():
    make_host(cpus=4)
    (a,) = make_runs(1)
    with pytest.raises(CapacityError, match="36 CPUs requested, the host has 4"):
        capacity.reserve("alpha", a.pk, "t", cpus=36, memory=None, gpus=0)
    with pytest.raises(CapacityError, match="GPU"):
        capacity.reserve("alpha", a.pk, "t", cpus=1, memory=None, gpus=3)


@pytest.mark.django_db
def test_a_redelivered_task_keeps_its_claim_and_a_duplicate_gets_none():
    make_host()
    make_host("beta")
    (a,) = make_runs(1, gpus=1)
    first = capacity.reserve("alpha", a.pk, "task-1", cpus=2, memory=0, gpus=1)
    again = capacity.reserve("alpha", a.pk, "task-1", cpus=2, memory=0, gpus=1)
    assert again == first and HostClaim.objects.count() == 1
    # Another task of the same run, here or on another host, gets nothing.
    assert capacity.reserve("alpha", a.pk, "task-2", cpus=2, memory=0, gpus=1) is None
    assert capacity.reserve("beta", a.pk, "task-2", cpus=2, memory=0, gpus=1) is None
    assert not capacity.release(a.pk, "task-2")  # only its own claim is released
    assert capacity.release(a.pk, "task-1") and not HostClaim.objects.exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_no_gpu_is_held_twice_under_concurrent_claims():
    """Threads, each with its own database connection, claim and release GPUs of one host
    as fast as they can. A GPU id seen held by two runs at once, or more CPUs handed out
    than the host has, is a failure. (PostgreSQL: row locks; SQLite: serialised writes.)"""
    make_host(cpus=6, gpus=("0", "1", "2", "3"))
    runs = make_runs(12, gpus=1)
    held: dict[str, int] = {}
    cpus_out = [0.0]
    witness = threading.Lock()
    problems, granted = [], [0]
    start = threading.Barrier(len(runs))

    def worker(run: AgentRun, seed: int) -> None:
        rng = random.Random(seed)
        try:
            start.wait()
            deadline = time.monotonic() + 6
            while time.monotonic() < deadline:
                gpus = rng.choice((1, 1, 2))
                got = capacity.reserve("alpha", run.pk, f"t{run.pk}", cpus=1, memory=0, gpus=gpus)
                if got is None:
                    time.sleep(rng.random() / 100)
                    continue
                with witness:
                    granted[0] += 1
                    cpus_out[0] += got.cpus
                    if cpus_out[0] > 6 + 1e-9:
                        problems.append(f"{cpus_out[0]} CPUs out of 6")
                    for g in got.gpu_ids:
                        if g in held:
                            problems.append(f"GPU {g} held by runs {held[g]} and {run.pk}")
                        held[g] = run.pk
                time.sleep(rng.random() / 50)
                with witness:
                    cpus_out[0] -= got.cpus
                    for g in got.gpu_ids:
                        held.pop(g, None)
                assert capacity.release(run.pk, f"t{run.pk}")
        except Exception as exc:  # reported below, with the thread's run
            problems.append(f"run {run.pk}: {exc!r}")
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(r, i)) for i, r in enumerate(runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
    assert granted[0] > 50, granted  # the claims really did contend
    assert not HostClaim.objects.exists()


# --- a silent host --------------------------------------------------------------------------


def _running(run: AgentRun, token: str, attempts: int, beat_age_s: float) -> None:
    AgentRun.objects.filter(pk=run.pk).update(
        status=AgentRun.Status.RUNNING,
        claimed_by=token,
        attempts=attempts,
        started_at=timezone.now(),
        heartbeat_at=timezone.now() - dt.timedelta(seconds=beat_age_s),
        container="12345",
    )


@pytest.mark.django_db
def test_a_silent_host_is_marked_down_and_its_runs_handed_over(settings):
    from webapp.ops.sweeper import sweep

    settings.MLEBOARD_STALE_AFTER_S = 60
    settings.MLEBOARD_MAX_ATTEMPTS = 3
    dead = make_host("dead", beat_age_s=600)
    make_host("alive", beat_age_s=1)
    fresh_start, spent, never_started, on_alive = make_runs(4, gpus=1)
    for run, token, attempts in ((fresh_start, "a", 1), (spent, "b", 3)):
        assert capacity.reserve("dead", run.pk, token, cpus=1, memory=0, gpus=1)
        _running(run, token, attempts, beat_age_s=600)
    assert capacity.reserve("dead", never_started.pk, "c", cpus=1, memory=0, gpus=0)
    # A run whose process died on a host that is alive: ended, as before.
    assert capacity.reserve("alive", on_alive.pk, "d", cpus=1, memory=0, gpus=1)
    _running(on_alive, "d", 1, beat_age_s=600)

    report = sweep()

    assert report.hosts_down == ["dead"]
    dead.refresh_from_db()
    assert dead.state == RunHost.State.DOWN and "no heartbeat since" in dead.note
    assert not HostClaim.objects.filter(host=dead).exists()
    fresh_start.refresh_from_db()
    assert fresh_start.status == AgentRun.Status.QUEUED and fresh_start.claimed_by == ""
    assert "Queued again for another host" in fresh_start.message
    assert fresh_start.gpu_ids == [] and fresh_start.container == ""
    spent.refresh_from_db()
    assert spent.status == AgentRun.Status.HARNESS_ERROR and "3 attempts" in spent.message
    assert spent.result_run is not None  # counted, as a run that went silent is
    never_started.refresh_from_db()
    assert never_started.status == AgentRun.Status.QUEUED
    on_alive.refresh_from_db()
    assert on_alive.status == AgentRun.Status.HARNESS_ERROR and "heartbeat" in on_alive.message
    assert report.runs_requeued == 1 and report.failed["agent_run"] == 2
    assert not HostClaim.objects.exists()  # the alive host's dead run released its claim


@pytest.mark.django_db
def test_a_run_on_a_host_gone_quiet_waits_for_the_host_verdict(settings):
    """Its own heartbeat is stale, but its host has only missed beats: the run is not
    ended one by one; once the host is down it is queued again instead."""
    from webapp.ops.sweeper import sweep

    settings.MLEBOARD_STALE_AFTER_S = 60
    host = make_host("quiet", beat_age_s=50)
    (run,) = make_runs(1)
    assert capacity.reserve("quiet", run.pk, "t", cpus=1, memory=0, gpus=0)
    _running(run, "t", 1, beat_age_s=70)
    assert sweep().hosts_down == []
    run.refresh_from_db()
    assert run.status == AgentRun.Status.RUNNING
    RunHost.objects.filter(pk=host.pk).update(
        heartbeat_at=timezone.now() - dt.timedelta(seconds=61)
    )
    assert sweep().hosts_down == ["quiet"]
    run.refresh_from_db()
    assert run.status == AgentRun.Status.QUEUED


@pytest.mark.django_db
def test_a_worker_that_restarts_hands_over_its_earlier_boot(settings):
    settings.MLEBOARD_HOST_NAME = "phoenix"
    settings.MLEBOARD_HOST_GPUS = ["0"]
    host = hosts.register(queues=["runs.cpu", "runs.gpu"], slots=2)
    (run,) = make_runs(1, gpus=1)
    assert capacity.reserve("phoenix", run.pk, "t", cpus=1, memory=0, gpus=1)
    _running(run, "t", 1, beat_age_s=0)
    again = hosts.register(queues=["runs.cpu", "runs.gpu"], slots=2)
    assert again.boot != host.boot and again.state == RunHost.State.UP
    run.refresh_from_db()
    assert run.status == AgentRun.Status.QUEUED and "restarted" in run.message
    assert not HostClaim.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "interruption, said",
    [
        (SystemExit(-15), "the worker on stopping stopped"),
        (RuntimeError("a bug"), "the harness on stopping failed (RuntimeError)"),
    ],
)
def test_a_pool_process_stopped_mid_run_hands_its_run_over(
    settings, monkeypatch, interruption, said
):
    """A worker asked to stop sends SIGTERM to its pool too, which unwinds the running
    task (SystemExit), maybe before the worker's own hand-over looks for claims: the task
    hands its run over itself on the way out, never leaving it running with no claim. The
    same when the harness raised, and the run's message says which of the two happened."""
    import runner.harness
    from webapp.runs.services.execution import agent_run_execute

    settings.MLEBOARD_HOST_NAME = "stopping"
    settings.MLEBOARD_HOST_GPUS = []
    settings.MLEBOARD_MAX_ATTEMPTS = 2
    hosts.register(queues=["runs.cpu"], slots=1)
    (run,) = make_runs(1)
    Launch.objects.filter(pk=run.launch_id).update(cpus=1, backend="local")
    settings.MLEBOARD_RUN_BACKEND = "local"
    settings.MLEBOARD_ALLOW_UNISOLATED_RUNS = True
    seen = {}

    def interrupted(*args, **kwargs):
        seen["held"] = HostClaim.objects.filter(agent_run=run).exists()
        seen["status"] = AgentRun.objects.get(pk=run.pk).status
        raise interruption

    monkeypatch.setattr(runner.harness, "run_agent", interrupted)
    monkeypatch.setattr("webapp.runs.services.catalogue.find_site_agent", lambda name: object())
    monkeypatch.setattr("runner.harness.spec_for_agent", lambda *a, **k: None)
    with pytest.raises(type(interruption)):
        agent_run_execute(run.pk, token="first")
    assert seen == {"held": True, "status": AgentRun.Status.RUNNING}
    run.refresh_from_db()
    assert run.status == AgentRun.Status.QUEUED and run.claimed_by == ""
    assert said in run.message and "attempt 1 of 2" in run.message
    assert not HostClaim.objects.exists()
    # Its last attempt interrupted the same way: ended, and counted as a result.
    with pytest.raises(type(interruption)):
        agent_run_execute(run.pk, token="second")
    run.refresh_from_db()
    assert run.status == AgentRun.Status.HARNESS_ERROR and "after 2 attempts" in run.message
    assert said in run.message
    assert run.result_run is not None and not HostClaim.objects.exists()


@pytest.mark.django_db
def test_a_claim_made_before_its_worker_registers_belongs_to_the_new_boot(settings, monkeypatch):
    """A worker's pool may take a run before the worker has registered its new boot: that
    claim is the new boot's (the worker's MLEBOARD_HOST_BOOT), not handed over."""
    settings.MLEBOARD_HOST_NAME = "early"
    settings.MLEBOARD_HOST_GPUS = []
    make_host("early", gpus=(), boot="the-last-boot")
    monkeypatch.setenv("MLEBOARD_HOST_BOOT", "this-boot")
    (run,) = make_runs(1)
    assert capacity.reserve("early", run.pk, "t", cpus=1, memory=0, gpus=0)
    _running(run, "t", 1, beat_age_s=0)
    assert hosts.register(queues=["runs.cpu"], slots=1).boot == "this-boot"
    run.refresh_from_db()
    assert run.status == AgentRun.Status.RUNNING and HostClaim.objects.get().boot == "this-boot"


@pytest.mark.django_db
def test_runs_are_routed_by_what_they_need():
    from webapp.runs.tasks import run_queue

    (cpu_run,) = make_runs(1, gpus=0)
    (gpu_run,) = make_runs(1, gpus=2)
    assert run_queue(cpu_run.pk) == "runs.cpu"
    assert run_queue(gpu_run.pk) == "runs.gpu"


# --- /api/hosts/ and /hosts/ -----------------------------------------------------------------


@pytest.mark.django_db
def test_api_hosts_shows_every_host_to_operators():
    up = make_host("up-host", beat_age_s=2)
    make_host("down-host", gpus=(), state=RunHost.State.DOWN, note="no heartbeat since then")
    (run,) = make_runs(1, gpus=1)
    assert capacity.reserve("up-host", run.pk, "t", cpus=2, memory=4 * GiB, gpus=1)

    assert Client().get("/api/hosts/").status_code in (401, 403)
    plain = Client()
    plain.force_login(User.objects.create_user("plain"))
    assert plain.get("/api/hosts/").status_code == 403
    assert plain.get("/hosts/").status_code == 403
    assert Client().get("/hosts/").status_code == 302  # to the login page
    # The staff flag alone is not the permission.
    flagged = Client()
    flagged.force_login(User.objects.create_user("flagged", is_staff=True))
    assert flagged.get("/api/hosts/").status_code == 403
    assert flagged.get("/hosts/").status_code == 403
    assert flagged.get("/admin/runs/runhost/").status_code == 403
    staff = Client()
    staff.force_login(member_of(User, "operators", "ops"))
    body = staff.get("/api/hosts/").json()
    by_name = {h["name"]: h for h in body["hosts"]}
    assert set(by_name) == {"up-host", "down-host"}
    shown = by_name["up-host"]
    assert shown["state"] == "up" and shown["last_heartbeat"]
    assert shown["capacity"] == {
        "cpus": 8.0,
        "memory_bytes": 32 * GiB,
        "gpu_ids": ["0", "1"],
        "gpu_model": "",
    }
    assert shown["free"]["cpus"] == 6.0 and shown["free"]["memory_bytes"] == 28 * GiB
    assert len(shown["free"]["gpu_ids"]) == 1
    assert [r["id"] for r in shown["runs"]] == [run.pk] and len(shown["runs"][0]["gpu_ids"]) == 1
    # Named by its competition's slug, not its row id.
    assert shown["runs"][0]["label"] == f"{run.launch.agent_name} on {run.competition.slug} seed 0"
    assert by_name["down-host"]["state"] == "down" and by_name["down-host"]["runs"] == []
    page = staff.get("/hosts/").content.decode()
    assert "up-host" in page and "down-host" in page and f"#{run.pk}" in page
    admin = Client()
    admin.force_login(User.objects.create_superuser("root", password="pw-root-12345"))
    assert up.name in admin.get("/admin/runs/runhost/").content.decode()


# --- a real worker registers its host, beats, and is found down when killed ---------------


@pytest.mark.django_db(transaction=True)
def test_a_worker_registers_its_host_and_beats_until_killed(tmp_path, settings):
    from webapp.ops.sweeper import sweep

    settings.MLEBOARD_STALE_AFTER_S = 4
    proc = start_run_host(
        tmp_path,
        "gpu-box",
        "runs.cpu,runs.gpu",
        3,
        MLEBOARD_STALE_AFTER_S="4",
        MLEBOARD_HOST_CPUS="12",
        MLEBOARD_HOST_MEMORY=str(48 * GiB),
        MLEBOARD_HOST_GPUS="0,1",
        MLEBOARD_HOST_GPU_MODEL="NVIDIA A10",
    )
    try:
        host = wait_until(lambda: RunHost.objects.filter(name="gpu-box").first(), timeout=90)
        assert (host.cpus, host.memory_bytes, host.gpu_ids) == (12.0, 48 * GiB, ["0", "1"])
        assert host.gpu_model == "NVIDIA A10" and host.queues == ["runs.cpu", "runs.gpu"]
        assert host.slots == 3 and host.state == RunHost.State.UP
        first = host.heartbeat_at
        wait_until(lambda: RunHost.objects.get(name="gpu-box").heartbeat_at > first, timeout=10)
        assert sweep().hosts_down == []
    finally:
        kill_group(proc)
    # The worker is dead (waited for): its last beat is backdated past the stale time.
    RunHost.objects.filter(name="gpu-box").update(
        heartbeat_at=timezone.now() - dt.timedelta(seconds=settings.MLEBOARD_STALE_AFTER_S + 1)
    )
    assert sweep().hosts_down == ["gpu-box"], proc.log_path.read_text()[-3000:]
    assert RunHost.objects.get(name="gpu-box").state == RunHost.State.DOWN


@pytest.mark.django_db(transaction=True)
def test_a_host_the_database_cannot_take_yet_registers_from_its_heartbeat(settings, monkeypatch):
    """compose starts the workers beside the site's migration: a runs worker ready before
    the tables are there registers its host once they are, instead of never."""
    from django.db import ProgrammingError

    settings.MLEBOARD_STALE_AFTER_S = 1
    settings.MLEBOARD_HOST_NAME = "late-host"
    register, refused = hosts.register, []

    def not_migrated_yet(**kwargs):
        if not refused:
            refused.append(kwargs)
            raise ProgrammingError('relation "runs_runhost" does not exist')
        return register(**kwargs)

    monkeypatch.setattr(hosts, "register", not_migrated_yet)
    heart = hosts.start(queues=["runs.cpu"], slots=1)
    try:
        assert refused and not RunHost.objects.filter(name="late-host").exists()
        # The heart holds its boot once its registration returned (the row is there a
        # moment before).
        host = wait_until(
            lambda: heart.boot and RunHost.objects.filter(name="late-host").first(), timeout=30
        )
        assert host.state == RunHost.State.UP and host.boot == heart.boot
        assert host.queues == ["runs.cpu"] and host.slots == 1
    finally:
        hosts.stop()
    assert RunHost.objects.get(name="late-host").state == RunHost.State.DOWN
