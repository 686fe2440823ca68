"""The Docker backend against the real engine: limits, outcomes, isolation, cleanup.

Every test here needs the engine; without one they fail (they are not skipped). Images are
built once per session and cached by content tag.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from runner import Outcome, Resources, RunSpec, find_agent, run_agent, spec_for_agent
from runner.validation_service import RateLimit
from tests.support.run_specs import docker_spec as python_spec

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leftover_containers")]

COMPETITION = "demo-breast-cancer"
SMALL = Resources(cpus=1, memory=256 * 1024**2, shm=16 * 1024**2, gpus=0, pids=128)


def run(spec: RunSpec, data: Path, out: Path, **kwargs):
    return run_agent(spec, data_dir=data, output_dir=out, backend="docker", **kwargs)


def test_allocating_past_the_memory_limit_is_out_of_memory(base_image, demo_data, tmp_path):
    code = "print('allocating', flush=True); x = bytearray(1024**3); print('survived')"
    spec = python_spec(base_image, code, resources=Resources(cpus=1, memory=64 * 1024**2, gpus=0))
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.OUT_OF_MEMORY, outcome.to_json()
    assert outcome.exit_code == 137
    assert "out-of-memory killer" in outcome.detail  # the engine's OOMKilled flag
    log = outcome.logs_path.read_text()
    assert "allocating" in log and "survived" not in log


def test_sleeping_past_the_time_limit_is_killed_and_timed_out(base_image, demo_data, tmp_path):
    spec = python_spec(
        base_image, "import signal; print('sleeping', flush=True); signal.pause()", time_limit_s=2
    )
    started = time.monotonic()
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.TIMED_OUT and outcome.exit_code is None
    assert time.monotonic() - started < 15
    log = outcome.logs_path.read_text()
    assert "sleeping" in log and "time limit of 2s reached" in log


def test_non_zero_exit_is_failed_with_logs_kept(base_image, demo_data, tmp_path):
    spec = python_spec(base_image, "import sys; print('giving up'); sys.exit(7)")
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.FAILED and outcome.exit_code == 7
    assert "giving up" in outcome.logs_path.read_text()


def test_cancel_stops_the_container_within_seconds(base_image, demo_data, tmp_path, docker_client):
    cancel = threading.Event()
    seen: list[str] = []

    def on_started(name: str) -> None:
        seen.append(name)
        threading.Timer(1.0, cancel.set).start()

    from runner import RunControl

    control = RunControl(on_started=on_started)
    started = time.monotonic()
    outcome = run(
        python_spec(base_image, "import signal; signal.pause()"),
        demo_data,
        tmp_path / "out",
        control=control,
        cancel=cancel,
    )
    assert outcome.outcome is Outcome.CANCELLED
    assert time.monotonic() - started < 8
    assert seen and not docker_client.containers.list(
        all=True, sparse=True, filters={"name": seen[0]}
    )


PROBE = r"""
import os, socket, sys
canary = sys.argv[1].encode()
try:
    socket.create_connection(("93.184.215.14", 80), timeout=3)
    print("NETWORK: connected")
except OSError as exc:
    print("NETWORK: blocked", exc)
try:
    socket.getaddrinfo("pypi.org", 443)
    print("DNS: resolved")
except OSError as exc:
    print("DNS: blocked", exc)
found, scanned = [], 0
for root, dirs, files in os.walk("/"):
    if root in ("/proc", "/sys", "/dev"):
        dirs[:] = []
        continue
    for name in files + [d for d in dirs]:
        if sys.argv[1] in name or "private" == name:
            found.append(os.path.join(root, name))
    for name in files:
        path = os.path.join(root, name)
        try:
            if os.path.islink(path) or os.path.getsize(path) > 64 * 1024**2:
                continue
            with open(path, "rb") as fh:
                scanned += 1
                if canary in fh.read():
                    found.append(path)
        except OSError:
            pass
print("SCANNED", scanned)
print("FOUND", found)
print("UID", os.getuid())
print("CAPS", [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0])
try:
    open("/home/data/new.txt", "w")
    print("DATA: writable")
except OSError:
    print("DATA: read-only")
print("LISTING", sorted(os.listdir("/home/data")))
"""


@pytest.mark.slow
def test_inside_the_container_no_network_and_no_private_answers(
    base_image, canary_data, canary, tmp_path
):
    spec = RunSpec(
        image=base_image,
        command=("python3", "-c", PROBE, canary),
        competition_id=COMPETITION,
        resources=Resources(cpus=1, memory=512 * 1024**2, gpus=0),
        time_limit_s=120,
    )
    outcome = run(spec, canary_data, tmp_path / "out")
    log = outcome.logs_path.read_text()
    assert outcome.outcome is Outcome.COMPLETED, log
    assert "NETWORK: blocked" in log and "DNS: blocked" in log
    scanned = int(log.split("SCANNED ")[1].split()[0])
    assert scanned > 1000, "the search did not cover the filesystem"
    assert "FOUND []" in log, log
    assert "UID 59999" in log and "CAPS 0000000000000000" in log
    assert "DATA: read-only" in log
    assert "test.csv" in log and "canary" not in log.split("LISTING")[1]
    assert outcome.egress_granted is False


def test_container_is_removed_when_the_harness_fails(base_image, demo_data, tmp_path):
    def failing_heartbeat() -> None:
        raise RuntimeError("the database went away")

    outcome = run(
        python_spec(base_image, "import signal; signal.pause()"),
        demo_data,
        tmp_path / "out",
        heartbeat=failing_heartbeat,
    )
    assert outcome.outcome is Outcome.HARNESS_ERROR
    assert "database went away" in outcome.detail


def test_a_reaper_can_remove_a_run_container_by_name(base_image, demo_data, tmp_path):
    from runner import RunControl
    from runner.reaper import remove_run_container

    removed: list[bool] = []
    timers: list[threading.Timer] = []

    def on_started(name: str) -> None:
        timers.append(threading.Timer(0.5, lambda: removed.append(remove_run_container(name))))
        timers[0].start()

    started = time.monotonic()
    outcome = run(
        python_spec(base_image, "import signal; signal.pause()"),
        demo_data,
        tmp_path / "out",
        control=RunControl(on_started=on_started),
    )
    assert time.monotonic() - started < 10
    timers[0].join(10)  # the harness may see the container go before the call returns
    assert removed == [True]
    # The container vanished under the harness: not the agent's doing.
    assert outcome.outcome is Outcome.HARNESS_ERROR, outcome.to_json()
    assert "removed from outside" in outcome.detail
    assert remove_run_container("mleboard-no-such-container") is False


def test_a_missing_image_is_a_harness_error(demo_data, tmp_path):
    outcome = run(python_spec("mleboard/no-such-image:0", "print(1)"), demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.HARNESS_ERROR
    assert "mleboard images" in outcome.detail


def test_validation_service_answers_inside_the_container_and_rate_limits(
    agent_images, demo_data, tmp_path
):
    code = (
        "import subprocess\n"
        "for _ in range(3):\n"
        "    done = subprocess.run(['/home/validate_submission.sh', '/home/data/sample_submission.csv'],"
        " capture_output=True, text=True)\n"
        "    print('ANSWER', done.returncode, done.stdout.strip(), flush=True)\n"
    )
    spec = python_spec(agent_images["dummy"], code)
    outcome = run(
        spec,
        demo_data,
        tmp_path / "out",
        validator=lambda path, cid, data: type(
            "A", (), {"valid": True, "message": "Submission is valid."}
        ),
        validation_rate=RateLimit(burst=2, per_minute=1),
    )
    log = outcome.logs_path.read_text()
    assert outcome.outcome is Outcome.COMPLETED, log
    assert log.count('ANSWER 0 {"result": "Submission is valid.", "valid": true}') == 2
    assert "ANSWER 2" in log and "Too many validation requests" in log
    assert outcome.validation_counts == {
        "answered": 2,
        "rate_limited": 1,
        "too_large": 0,
        "errors": 0,
    }


def test_dummy_agent_submits_the_sample(agent_images, demo_data, tmp_path):
    spec = spec_for_agent(
        find_agent("dummy"), COMPETITION, resources=SMALL, time_limit_s=60, host_env={}
    )
    assert spec.image == agent_images["dummy"]
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.COMPLETED, outcome.logs_path.read_text()
    sample = demo_data / COMPETITION / "prepared" / "public" / "sample_submission.csv"
    assert outcome.submission_path.read_bytes() == sample.read_bytes()


@pytest.mark.slow
def test_baseline_end_to_end_in_docker_is_graded_valid(agent_images, demo_data, tmp_path):
    import graders

    spec = spec_for_agent(
        find_agent("baseline"),
        COMPETITION,
        resources=Resources(cpus=1, memory=1024**3, gpus=0),
        time_limit_s=180,
        host_env={},
    )
    outcome = run(spec, demo_data, tmp_path / "out")
    log = outcome.logs_path.read_text()
    assert outcome.outcome is Outcome.COMPLETED, log
    assert "validation: Submission is valid" in log
    result = graders.grade_submission(outcome.submission_path, COMPETITION, demo_data)
    assert result.valid_submission, result.error
    assert result.score > 0.95
