"""The local backend: limits, outcomes, cancel, process-group kill, logs, snapshots.

What the agent may read of the host is tested in test_local_confinement.py; these tests check
the limits it enforces.
"""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from runner import Outcome, Resources, RunSpec, find_agent, run_agent, spec_for_agent
from runner.spec import RUN_LOG
from tests.support.polling import RELEASE, opened_for_writing, wait_until
from tests.support.run_specs import local_spec as python_spec

COMPETITION = "demo-breast-cancer"
SMALL = Resources(cpus=1, memory=None, shm=None, gpus=0, pids=None)


def run(spec: RunSpec, data: Path, out: Path, **kwargs):
    return run_agent(spec, data_dir=data, output_dir=out, backend="local", **kwargs)


def test_completed_run_writes_its_outputs(demo_data, tmp_path):
    code = (
        "import os, shutil\n"
        "shutil.copy(os.path.join(os.environ['DATA_DIR'], 'sample_submission.csv'),"
        " os.path.join(os.environ['SUBMISSION_DIR'], 'submission.csv'))\n"
        "print('hello from the agent')\n"
    )
    outcome = run(python_spec(code), demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.COMPLETED and outcome.exit_code == 0
    assert outcome.submission_path == tmp_path / "out" / "submission" / "submission.csv"
    assert "hello from the agent" in outcome.logs_path.read_text()
    assert outcome.overhead["create_to_start_s"] >= 0
    assert outcome.overhead["exit_to_collected_s"] >= 0
    assert outcome.to_json()["outcome"] == "completed"


def test_an_egress_grant_is_recorded(demo_data, tmp_path):
    from runner import NetworkPolicy

    spec = python_spec("print(1)", network=NetworkPolicy(egress=True))
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.egress_granted is True and outcome.to_json()["egress_granted"] is True
    plain = run(python_spec("print(1)"), demo_data, tmp_path / "plain")
    assert plain.egress_granted is False


def test_non_zero_exit_is_failed_with_logs_kept(demo_data, tmp_path):
    spec = python_spec("import sys; print('about to fail'); sys.exit(3)")
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.FAILED and outcome.exit_code == 3
    assert outcome.submission_path is None
    assert "about to fail" in outcome.logs_path.read_text()


def test_sleeping_past_the_limit_is_timed_out_and_the_group_killed(demo_data, tmp_path):
    # The child is found by its unusual argument: in its own PID namespace (a confined
    # agent) its pid means nothing here.
    marker = f"61.{time.time_ns() % 10**6:06d}"
    code = (
        "import signal, subprocess\n"
        f"child = subprocess.Popen(['sleep', {marker!r}])\n"
        "print('sleeping', flush=True); signal.pause()\n"
    )
    started = time.monotonic()
    outcome = run(python_spec(code, time_limit_s=1.5), demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.TIMED_OUT and outcome.exit_code is None
    assert time.monotonic() - started < 10
    log = outcome.logs_path.read_text()
    assert "sleeping" in log and "time limit" in log
    try:  # the group was sent SIGKILL: the child is gone (or a zombie) once the kernel is done
        wait_until(lambda: not _alive_with_argument(marker), 10, 0.05)
    except AssertionError:
        raise AssertionError("child survived") from None


def _alive_with_argument(argument: str) -> list[int]:
    """Processes (not zombies) whose command line holds ``argument``."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if argument.encode() in cmdline and state != "Z":
            alive.append(int(entry.name))
    return alive


def test_allocating_past_the_memory_limit_is_out_of_memory(demo_data, tmp_path):
    spec = python_spec(
        "x = bytearray(2 * 1024**3)",
        resources=Resources(cpus=1, memory=512 * 1024**2, shm=None, gpus=0, pids=None),
    )
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.OUT_OF_MEMORY, outcome.logs_path.read_text()
    assert "MemoryError" in outcome.logs_path.read_text()


def test_cancel_stops_the_agent_within_seconds(demo_data, tmp_path):
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    beats: list[float] = []
    started = time.monotonic()
    outcome = run(
        python_spec("import signal; signal.pause()"),
        demo_data,
        tmp_path / "out",
        cancel=cancel,
        heartbeat=lambda: beats.append(time.monotonic()),
    )
    assert outcome.outcome is Outcome.CANCELLED
    assert time.monotonic() - started < 5
    assert beats, "the heartbeat was never called"


def test_secrets_are_masked_in_the_logs(demo_data, tmp_path):
    spec = python_spec(
        "import os; print('key is', os.environ['API_KEY'])",
        env={"API_KEY": "sk-live-123456"},
        secret_env=frozenset({"API_KEY"}),
    )
    outcome = run(spec, demo_data, tmp_path / "out")
    log = outcome.logs_path.read_text()
    assert "key is" in log and "sk-live-123456" not in log


def run_released(spec: RunSpec, data: Path, out: Path, steps, **kwargs):
    """Run the agent on a thread; for each (condition, name) of ``steps``, wait until
    ``condition()`` holds and release the agent's ``name``. The outcome."""
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(run, spec, data, out, **kwargs)
        for condition, name in steps:
            wait_until(lambda c=condition: c() or running.done(), timeout=60, interval=0.02)
            pipe = out / "submission" / name
            fd = wait_until(
                lambda p=pipe: opened_for_writing(p) or running.done(), timeout=60, interval=0.02
            )
            if fd is not True:
                os.close(fd)  # the agent's read ends: it goes on
        return running.result(timeout=120)


def snapshot_texts(out: Path) -> list[str]:
    return [p.read_text() for p in sorted((out / "snapshots").glob("submission_*.csv"))]


def test_snapshots_of_the_submission_are_taken_with_elapsed_time(demo_data, tmp_path):
    code = RELEASE + (
        "for i in range(3):\n"
        "    open(submission, 'w').write(f'id,target\\nt0,{i}\\n')\n"
        "    release(f'go-{i}')\n"
    )
    out = tmp_path / "out"
    steps = [(lambda i=i: f"t0,{i}\n" in "".join(snapshot_texts(out)), f"go-{i}") for i in range(3)]
    outcome = run_released(python_spec(code), demo_data, out, steps, snapshot_interval_s=0.5)
    assert outcome.outcome is Outcome.COMPLETED
    assert len(outcome.snapshots) >= 3
    elapsed = [s.elapsed_s for s in outcome.snapshots]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 0.5
    assert all(s.path.read_text().startswith("id,target") for s in outcome.snapshots)
    assert {s.path.read_text() for s in outcome.snapshots} >= {
        f"id,target\nt0,{i}\n" for i in range(3)
    }


def test_a_symlinked_submission_is_not_collected(demo_data, tmp_path):
    answers = demo_data / COMPETITION / "prepared" / "private" / "test.csv"
    code = f"import os; os.symlink({str(answers)!r}, os.path.join(os.environ['SUBMISSION_DIR'], 'submission.csv'))"
    outcome = run(python_spec(code), demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.COMPLETED
    assert outcome.submission_path is None and "symlink" in outcome.detail


def test_missing_data_is_a_harness_error(tmp_path):
    outcome = run(python_spec("print(1)"), tmp_path / "no-data", tmp_path / "out")
    assert outcome.outcome is Outcome.HARNESS_ERROR
    assert "no public data" in outcome.detail
    assert "harness error" in outcome.logs_path.read_text()


def test_a_missing_program_is_a_harness_error(demo_data, tmp_path):
    outcome = run(python_spec("", command=("no-such-program-xyz",)), demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.HARNESS_ERROR


def test_baseline_runs_locally_and_its_submission_is_valid(demo_data, tmp_path):
    import graders

    spec = spec_for_agent(
        find_agent("baseline"),
        COMPETITION,
        resources=SMALL,
        time_limit_s=120,
        host_env={},
    )
    spec = RunSpec(**{**spec.__dict__, "env": {**spec.env, "BASELINE_CV_FOLDS": "3"}})
    outcome = run(spec, demo_data, tmp_path / "out")
    log = outcome.logs_path.read_text()
    assert outcome.outcome is Outcome.COMPLETED, log
    assert "validation: Submission is valid" in log
    assert outcome.validation_counts["answered"] == 1
    calls = (tmp_path / "out" / "validation_calls.jsonl").read_text().splitlines()
    assert len(calls) == 1 and json.loads(calls[0])["valid"] is True  # next to run.log
    assert (tmp_path / "out" / "logs" / "baseline_report.json").exists()
    assert (tmp_path / "out" / "code" / "main.py").exists()
    result = graders.grade_submission(outcome.submission_path, COMPETITION, demo_data)
    assert result.valid_submission, result.error
    assert result.score > 0.95


def test_a_self_inflicted_sigkill_is_failed_not_out_of_memory(demo_data, tmp_path):
    spec = python_spec(
        "import os, signal; print('bye', flush=True); os.kill(os.getpid(), signal.SIGKILL)",
        resources=Resources(cpus=1, memory=512 * 1024**2, shm=None, gpus=0, pids=None),
    )
    outcome = run(spec, demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.FAILED and outcome.exit_code == 137, outcome.to_json()
    # Printing an allocator's complaint without failing for it does not make it one either.
    spec = python_spec("print('MemoryError'); raise SystemExit(0)", resources=spec.resources)
    assert run(spec, demo_data, tmp_path / "out2").outcome is Outcome.COMPLETED


def test_a_huge_sparse_submission_is_never_copied_and_ends_the_run(demo_data, tmp_path):
    code = (
        "import os, signal\n"
        "with open(os.path.join(os.environ['SUBMISSION_DIR'], 'submission.csv'), 'wb') as f:\n"
        "    f.truncate(10 * 1024**3)\n"
        "signal.pause()\n"
    )
    spec = python_spec(code, submission_max_bytes=1024**2)
    started = time.monotonic()
    outcome = run(spec, demo_data, tmp_path / "out", snapshot_interval_s=0.5)
    assert time.monotonic() - started < 10
    assert outcome.outcome is Outcome.FAILED, outcome.to_json()
    assert "exceeded 1048576 bytes" in outcome.message
    assert "10737418240 bytes" in outcome.detail
    assert outcome.snapshots == () and not any((tmp_path / "out" / "snapshots").iterdir())
    assert "outputs exceeded their limit" in outcome.logs_path.read_text()


def test_outputs_over_their_limit_fail_the_run(demo_data, tmp_path):
    code = (
        "import os; open(os.path.join(os.environ['LOGS_DIR'], 'big.log'), 'wb').write(bytes(4096))"
    )
    outcome = run(python_spec(code, output_max_bytes=1000), demo_data, tmp_path / "out")
    assert outcome.outcome is Outcome.FAILED and outcome.exit_code == 0
    assert "exceeded 1000 bytes" in outcome.message and "4096 bytes" in outcome.detail


def test_snapshots_together_stay_within_the_outputs_budget(demo_data, tmp_path):
    code = RELEASE + (
        "open(submission, 'w').write('id,target\\n' + 't0,0.5\\n' * 7)\nrelease('go')\n"
    )
    out = tmp_path / "out"
    spec = python_spec(code, output_max_bytes=100)
    # The run's log says at once when the snapshots stopped; then the agent may end.
    log = out / RUN_LOG
    stopped = [(lambda: log.exists() and "snapshots stopped" in log.read_text(), "go")]
    outcome = run_released(spec, demo_data, out, stopped, snapshot_interval_s=0.3)
    assert outcome.outcome is Outcome.COMPLETED, outcome.to_json()
    assert len(outcome.snapshots) == 1 and "snapshots stopped" in outcome.detail
