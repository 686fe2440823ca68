"""The harness's own overhead per agent run, measured through the whole site path:
launch -> Celery (runs queue) -> container -> outputs -> grading queue -> report.

Starts a real worker, launches the `dummy` agent (it copies the sample submission, so
the agent itself takes almost no time) on the demo competitions, and prints per run:
queue wait (launch -> claimed), container create -> agent start, agent exit -> outputs
collected, and run finished -> graded report stored. Uses DATABASE_URL and
CELERY_BROKER_URL when set (PostgreSQL/Redis), else a fresh SQLite file and the
embedded broker. Needs a Docker engine and the images (`make images`).

    python perf/agent_run_bench.py [--seeds 2] [--backend docker|local]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from config import env
from config.variables import RUN_QUEUE_NAMES

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--backend", default="docker")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mleboard-runbench-"))
    os.environ.setdefault("MLEBOARD_VAR_DIR", str(work / "var"))
    os.environ["MLEBOARD_DATA_DIR"] = str(work / "data")
    os.environ["MLEBOARD_MEDIA_ROOT"] = str(work / "media")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.project.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-key")
    os.environ["MLEBOARD_RUN_BACKEND"] = args.backend
    if args.backend == "local":  # the operator's choice, made here for the bench
        os.environ["MLEBOARD_ALLOW_UNISOLATED_RUNS"] = "1"
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection

    from benchmark.demo import DEMO_COMPETITIONS, build_demo
    from webapp.competitions.models import Competition
    from webapp.competitions.services import leaderboard_import_file
    from webapp.ops.processes import GRADING_QUEUES
    from webapp.results.models import GradeReport
    from webapp.runs.models import AgentRun
    from webapp.runs.services.launch import launch_create

    if connection.vendor == "postgresql":
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    call_command("load_catalogue", verbosity=0)
    build = build_demo(env("MLEBOARD_DATA_DIR"), seeds=1)
    for cid in DEMO_COMPETITIONS:
        leaderboard_import_file(Competition.objects.get(slug=cid), build.leaderboards[cid])
    user = User.objects.create_user("bench")
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "webapp",
            "worker",
            "-Q",
            # The queues of make run's two workers (webapp/ops/processes.py), in one worker.
            ",".join([*GRADING_QUEUES, *RUN_QUEUE_NAMES]),
            "--concurrency",
            "2",
            "--loglevel",
            "WARNING",
        ],
        cwd=ROOT,
        env=os.environ.copy(),
    )
    try:
        from webapp.project.celery import app

        deadline = time.monotonic() + 120
        while not app.control.ping(timeout=1.0):
            if worker.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the worker did not start")
        launch = launch_create(
            owner=user,
            agent_name="dummy",
            competitions=list(DEMO_COMPETITIONS),
            seeds=args.seeds,
            cpus=1,
            memory_bytes=1024**3,
            gpus=0,
            time_limit_s=300,
            backend=args.backend,
        )
        started = time.monotonic()
        total = len(DEMO_COMPETITIONS) * args.seeds
        while GradeReport.objects.filter(run__experiment=launch.experiment).count() < total:
            if time.monotonic() - started > 600:
                raise SystemExit("runs did not finish in 10 minutes")
            time.sleep(0.5)
        wall = time.monotonic() - started
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    rows = {
        "queue wait (launch -> claimed)": [],
        "create -> agent start": [],
        "agent exit -> collected": [],
        "finished -> graded report": [],
    }
    for run in AgentRun.objects.filter(launch=launch).select_related("result_run"):
        report = GradeReport.objects.get(run=run.result_run, is_current=True)
        rows["queue wait (launch -> claimed)"].append(
            (run.started_at - run.created_at).total_seconds()
        )
        rows["create -> agent start"].append(run.overhead.get("create_to_start_s", float("nan")))
        rows["agent exit -> collected"].append(
            run.overhead.get("exit_to_collected_s", float("nan"))
        )
        rows["finished -> graded report"].append(
            (report.recorded_at - run.finished_at).total_seconds()
        )
    print(f"{total} runs ({args.backend} backend, {connection.vendor}) in {wall:.1f} s wall")
    print(f"{'step':34} {'median s':>9} {'max s':>7}")
    for label, values in rows.items():
        print(f"{label:34} {statistics.median(values):9.3f} {max(values):7.3f}")


if __name__ == "__main__":
    main()
