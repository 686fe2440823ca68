"""A hostile agent (tests/agents/adversary) against the Docker backend on the real engine.

Each test runs one attack and checks what the host sees: the time limit holds without the
harness, host disk stays bounded, outcomes come from the engine, run.log cannot be forged,
unusual sockets and syscalls are refused, the watchdog cannot be signalled.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker.errors
import pytest

from runner import Outcome, Resources, RunControl, RunSpec, load_agent, run_agent, spec_for_agent
from runner.reaper import (
    LABEL_DEADLINE,
    LABEL_INSTANCE,
    LABEL_KILL_AFTER,
    own_labels,
    reap_expired,
)
from tests.support.polling import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leftover_containers")]

COMPETITION = "demo-breast-cancer"
ADVERSARY_DIR = Path(__file__).resolve().parents[1] / "agents" / "adversary"
SMALL = Resources(cpus=1, memory=256 * 1024**2, shm=16 * 1024**2, gpus=0, pids=128)
MIB = 1024**2


@pytest.fixture(scope="session")
def adversary_image(docker_client, base_image) -> str:
    from runner.images import build_agent_image

    return build_agent_image(docker_client, load_agent(ADVERSARY_DIR)).ref


def adversary_spec(image: str, attack: str, **overrides) -> RunSpec:
    spec = spec_for_agent(
        load_agent(ADVERSARY_DIR),
        COMPETITION,
        resources=SMALL,
        time_limit_s=60,
        host_env={},
        image=image,
    )
    env = {**spec.env, "ADVERSARY_ATTACK": attack, **overrides.pop("env", {})}
    return dataclasses.replace(spec, env=env, **overrides)


def run(spec: RunSpec, data: Path, out: Path, **kwargs):
    return run_agent(spec, data_dir=data, output_dir=out, backend="docker", **kwargs)


def results(outcome) -> dict[str, str]:
    found = {}
    for line in outcome.logs_path.read_text().splitlines():
        if line.startswith("agent| RESULT "):
            _, _, name, value = line.split(" ", 3)
            found[name] = value
    return found


def disk_bytes(folder: Path) -> int:
    """Bytes the host's file system really holds under ``folder`` (allocated blocks)."""
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*"))


@pytest.mark.slow
def test_a_huge_sparse_submission_is_never_copied_and_ends_the_run(
    adversary_image, demo_data, tmp_path
):
    spec = adversary_spec(adversary_image, "sparse", time_limit_s=20)
    started = time.monotonic()
    outcome = run(spec, demo_data, tmp_path / "out", snapshot_interval_s=5)
    took = time.monotonic() - started
    assert took < 50, took
    assert outcome.outcome is Outcome.FAILED, outcome.to_json()
    assert f"exceeded {spec.submission_max_bytes} bytes" in outcome.message
    assert "10737418240 bytes" in outcome.detail
    assert outcome.snapshots == () and outcome.submission_path is None
    assert disk_bytes(tmp_path / "out") < 2 * MIB
    print(
        f"sparse submission: ended after {took:.1f}s, {disk_bytes(tmp_path / 'out')} bytes on disk"
    )


def test_a_huge_sparse_submission_left_at_exit_is_not_collected(
    adversary_image, demo_data, tmp_path
):
    spec = adversary_spec(adversary_image, "sparse", env={"ADVERSARY_SLEEP": "0"})
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.FAILED and outcome.exit_code == 0, outcome.to_json()
    assert "submission/submission.csv (10737418240 bytes)" in outcome.detail
    assert outcome.submission_path is None and disk_bytes(tmp_path / "out") < 2 * MIB


@pytest.mark.slow
def test_slow_snapshots_never_delay_the_time_limit(adversary_image, demo_data, tmp_path):
    size = 200 * MIB
    # The first submission is 1 MiB, so a snapshot is taken however busy the machine; the
    # ones after it are 200 MiB, whose copies are slow.
    limit = 20
    spec = adversary_spec(
        adversary_image,
        "big",
        time_limit_s=limit,
        resources=Resources(cpus=1, memory=1024**3, shm=16 * MIB, gpus=0, pids=128),
        output_max_bytes=3 * size,
        env={"ADVERSARY_BIG_BYTES": str(size), "ADVERSARY_FIRST_BYTES": str(MIB)},
    )
    started = time.monotonic()
    outcome = run(spec, demo_data, tmp_path / "out", snapshot_interval_s=0.5)
    assert outcome.outcome is Outcome.TIMED_OUT, outcome.to_json()
    # Killed on time, copies or not (the duration includes killing the agent's processes).
    assert outcome.duration_s < limit + 2, outcome.duration_s
    assert time.monotonic() - started < limit + 30
    assert outcome.snapshots, outcome.to_json()
    assert all(s.path.stat().st_size in (MIB, size) for s in outcome.snapshots)
    # Snapshots and outputs each stay within the outputs' budget.
    assert sum(s.path.stat().st_size for s in outcome.snapshots) <= spec.output_max_bytes
    assert disk_bytes(tmp_path / "out") <= 2 * spec.output_max_bytes + 10 * MIB


def test_filling_the_outputs_and_the_file_system_is_bounded(adversary_image, demo_data, tmp_path):
    cap = 32 * MIB
    spec = adversary_spec(
        adversary_image,
        "fill",
        output_max_bytes=cap,
        scratch_bytes=cap,
        env={"ADVERSARY_FILL_BYTES": str(3 * 1024**3)},
    )
    outcome = run(spec, demo_data, tmp_path / "out")
    found = results(outcome)
    assert outcome.exit_code == 0, outcome.logs_path.read_text()
    for folder in ("/home/logs", "/home/code", "/home/submission", "/tmp", "/tmp/home"):
        assert int(found[f"filled:{folder}"]) <= cap, found
        assert found[f"fill_error:{folder}"] == "ENOSPC", found
    for folder in ("/", "/home/agent", "/var/tmp"):
        assert found[f"filled:{folder}"] == "0" and found[f"fill_error:{folder}"] == "EROFS"
    # More than the budget was written in all: the run fails, the host keeps at most the cap.
    assert outcome.outcome is Outcome.FAILED and f"exceeded {cap} bytes" in outcome.message
    kept = sum(disk_bytes(tmp_path / "out" / name) for name in ("submission", "logs", "code"))
    assert kept <= cap
    assert outcome.submission_path is not None  # the submission comes first in the budget


@pytest.mark.parametrize("attack", ["exit137", "sigkill"])
def test_dying_by_sigkill_is_failed_not_out_of_memory(adversary_image, demo_data, tmp_path, attack):
    spec = adversary_spec(adversary_image, attack)
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.FAILED and outcome.exit_code == 137, outcome.to_json()
    assert "out-of-memory" not in outcome.detail


def test_forged_harness_lines_stay_the_agents(adversary_image, demo_data, tmp_path):
    spec = adversary_spec(adversary_image, "forge", time_limit_s=2)
    outcome = run(spec, demo_data, tmp_path / "out")
    lines = outcome.logs_path.read_text().splitlines()
    assert all(line.startswith(("agent| ", "[mleboard] ")) for line in lines), lines
    harness = [line for line in lines if line.startswith("[mleboard] ")]
    assert harness == [], harness  # the agent exited by itself: the harness said nothing
    assert "agent| [mleboard] time limit of 1s reached: agent killed" in lines
    assert "agent| [mleboard] run cancelled: agent killed" in lines
    assert outcome.outcome is Outcome.COMPLETED


def test_sockets_and_syscalls_agents_do_not_need_are_refused(adversary_image, demo_data, tmp_path):
    spec = adversary_spec(adversary_image, "sockets")
    outcome = run(spec, demo_data, tmp_path / "out")
    found = results(outcome)
    assert outcome.outcome is Outcome.COMPLETED, outcome.logs_path.read_text()
    for family in ("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"):
        assert found[f"socket:{family}"] == "ok", found
    for family in ("AF_VSOCK", "AF_PACKET", "AF_KEY", "AF_BLUETOOTH", "AF_ALG", "AF_TIPC"):
        assert found[f"socket:{family}"] == "EAFNOSUPPORT", found
    for family in ("AF_RDS", "AF_CAN", "AF_XDP"):
        assert found[f"socket:{family}"] == "EAFNOSUPPORT", found
    for call in ("unshare_user", "keyctl", "bpf", "userfaultfd", "perf_event_open", "ptrace"):
        assert found[f"syscall:{call}"] == "EPERM", found
    assert found["syscall:io_uring_setup"] == "EPERM" and found["syscall:mount"] == "EPERM"
    assert found["thread"] == "ok" and found["fork"] == "ok"
    assert found["CapEff"] == found["CapPrm"] == found["CapBnd"] == "0000000000000000"
    assert found["NoNewPrivs"] == "1" and found["Seccomp"] == "2"
    assert found["uid"] == "59999:59999:[]"


def test_the_agent_cannot_signal_the_watchdog(adversary_image, demo_data, tmp_path):
    spec = adversary_spec(adversary_image, "kill_pid1")
    outcome = run(spec, demo_data, tmp_path / "out")
    found = results(outcome)
    assert outcome.outcome is Outcome.COMPLETED, outcome.logs_path.read_text()
    root_kills = {k: v for k, v in found.items() if k.startswith("kill:") and k.endswith(":uid0")}
    assert "kill:1:uid0" in root_kills and len(root_kills) >= 2, found  # init and the watchdog
    assert set(root_kills.values()) == {"EPERM"}, found
    assert found["alive"] == "yes" and outcome.submission_path is not None


def test_egress_on_an_engine_without_that_network_does_not_start(base_image, demo_data, tmp_path):
    from runner import NetworkPolicy

    spec = RunSpec(
        image=base_image,
        command=("python3", "-c", "print('AGENT-RAN')"),
        competition_id=COMPETITION,
        resources=SMALL,
        time_limit_s=30,
        network=NetworkPolicy(egress=True, egress_network="mleboard-no-such-network"),
    )
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.HARNESS_ERROR and outcome.egress_granted is False
    assert "granted egress" in outcome.detail and "no network" in outcome.detail
    assert "AGENT-RAN" not in outcome.logs_path.read_text()


HARNESS = """
import sys
from pathlib import Path
from runner import RunControl, run_agent
from runner.agent_definition import load_agent
from runner.harness import spec_for_agent
from runner.spec import Resources
import dataclasses
agent = load_agent(Path(sys.argv[1]))
spec = spec_for_agent(agent, "demo-breast-cancer", resources=Resources(cpus=1, memory=256 * 1024**2,
    shm=16 * 1024**2, gpus=0, pids=128), time_limit_s=float(sys.argv[5]), host_env={}, image=sys.argv[2])
name_file = Path(sys.argv[4])
run_agent(spec, data_dir=Path(sys.argv[3]), output_dir=name_file.parent / "out", backend="docker",
    control=RunControl(on_started=name_file.write_text))
"""


@pytest.mark.slow
def test_the_time_limit_holds_when_the_harness_is_killed(
    adversary_image, demo_data, tmp_path, docker_client
):
    limit = 10
    name_file = tmp_path / "container"
    env = {**os.environ, "MLEBOARD_RUN_KILL_GRACE_S": "2"}
    harness = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HARNESS,
            str(ADVERSARY_DIR),
            adversary_image,
            str(demo_data),
            str(name_file),
            str(limit),
        ],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        wait_until(lambda: name_file.exists() and name_file.read_text(), timeout=30, interval=0.1)
        name = name_file.read_text()
        started = time.monotonic()
        # The harness is killed once its container runs (not after a guessed pause).
        wait_until(lambda: docker_client.containers.get(name).status == "running", timeout=30)
        harness.send_signal(signal.SIGKILL)
        harness.wait(10)
        killed = time.monotonic()
        container = docker_client.containers.get(name)
        assert container.status == "running"  # the harness is dead; nobody stopped it
        labels = container.labels
        assert float(labels[LABEL_KILL_AFTER]) - float(labels[LABEL_DEADLINE]) <= 4
        try:
            wait_until(
                lambda: (
                    not docker_client.containers.list(all=True, sparse=True, filters={"name": name})
                ),
                timeout=max(0.0, limit + 60 - (time.monotonic() - started)),
                interval=0.5,
            )
        except AssertionError:
            raise AssertionError("the container outlived its deadline") from None
        gone = time.monotonic()
    finally:
        if harness.poll() is None:
            harness.kill()
    print(
        f"container gone {gone - killed:.1f}s after the harness was killed, {gone - started:.1f}s after start"
    )
    assert gone - started < limit + 2 + 10


def test_reap_removes_run_containers_past_their_deadline(base_image, docker_client):
    now = time.time()

    instance = own_labels()[LABEL_INSTANCE]

    def start(deadline: float, instance: str = instance):
        return docker_client.containers.run(
            base_image,
            ["sleep", "600"],
            detach=True,
            network_mode="none",
            labels={**own_labels(), LABEL_INSTANCE: instance, LABEL_DEADLINE: str(int(deadline))},
        )

    late, early = start(now - 100), start(now + 3600)
    # Another site's on the same engine, just as late: its own reaper's business.
    theirs = start(now - 100, instance=f"{instance}-other")
    try:
        would = {r["name"]: r for r in reap_expired(docker_client, grace_s=30, dry_run=True)}
        assert late.name in would and early.name not in would and theirs.name not in would
        assert docker_client.containers.get(late.name).status == "running"
        removed = {r["name"]: r for r in reap_expired(docker_client, grace_s=30)}
        assert late.name in removed and "deadline" in removed[late.name]["reason"]
        assert early.name not in removed and theirs.name not in removed
        assert not docker_client.containers.list(all=True, sparse=True, filters={"name": late.name})
        assert docker_client.containers.get(early.name).status == "running"
        assert docker_client.containers.get(theirs.name).status == "running"
    finally:
        for container in (late, early, theirs):
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)


def test_reap_from_the_command_line(base_image, docker_client, capsys):
    from cli.main import main

    container = docker_client.containers.run(
        base_image,
        ["sleep", "600"],
        detach=True,
        network_mode="none",
        labels={**own_labels(), LABEL_KILL_AFTER: str(int(time.time() - 1))},
    )
    assert main(["reap"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert container.name in [r["name"] for r in printed["removed"]]
    assert not docker_client.containers.list(
        all=True, sparse=True, filters={"name": container.name}
    )


def test_a_run_leaves_nothing_behind_and_its_control_sees_the_container(
    adversary_image, demo_data, tmp_path, docker_client
):
    seen: list[str] = []
    spec = adversary_spec(adversary_image, "forge")
    run(spec, demo_data, tmp_path / "out", control=RunControl(on_started=seen.append))
    assert seen and not docker_client.containers.list(
        all=True, sparse=True, filters={"name": seen[0]}
    )
