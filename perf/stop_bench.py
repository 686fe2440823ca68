"""How long ``make run`` takes to stop, idle and busy, and what a stop does with its work.

Runs ``sh scripts/serve.sh`` on the embedded defaults in a var dir of its own, stops it
with Ctrl-C idle and with a grading and an agent run under way, checks the work was handed
back, and times its completion at the next start (method: docs/benchmarks.md). Exits 1
when a process had to be killed, work was not handed back, or a grading was stored twice.

    .venv/bin/python perf/stop_bench.py [--rounds 3] [--hold 600] [--keep]

Every process it starts is stopped on exit, by its process group.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import config

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = ("web", "grading-worker", "runs-worker", "beat")
SLEEPER = "name: sleeper\ndescription: Sleeps.\nstart: [sleep, '{seconds}']\negress: false\n"


def log(text: str) -> None:
    print(text, flush=True)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(predicate, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"stop_bench: {what} did not happen in {timeout:.0f} s")
        time.sleep(interval)


class Site:
    """``sh scripts/serve.sh`` in a session of its own."""

    def __init__(self, env: dict[str, str], var: Path, name: str):
        self.var = var
        self.port = int(env["PORT"])
        self.out = open(var / f"serve-{name}.out", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            ["sh", "scripts/serve.sh"],
            cwd=REPO,
            env=env,
            stdout=self.out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.started = time.monotonic()
        atexit.register(self.kill)

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.port}/api/competitions/", timeout=5
            ) as response:
                return response.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def groups(self) -> set[int]:
        return {int(p.read_text()) for p in (self.var / "run").glob("*.pgid")} | {self.proc.pid}

    def alive(self) -> int:
        groups, found = self.groups(), 0
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    found += os.getpgid(int(proc.name)) in groups and bool(
                        (proc / "cmdline").read_bytes()
                    )
                except OSError:
                    continue
        return found

    def stop(self) -> tuple[float, bool]:
        """Ctrl-C; the seconds until nothing of the site is left, and whether supervisord
        killed a process."""
        log_file = self.var / "log" / "supervisord.log"
        before = log_file.read_text(errors="replace") if log_file.exists() else ""
        sent = time.monotonic()
        os.killpg(self.proc.pid, signal.SIGINT)
        wait(lambda: self.proc.poll() is not None and not self.alive(), 120, "the stop", 0.05)
        took = time.monotonic() - sent
        self.out.close()
        return took, "SIGKILL" in log_file.read_text(errors="replace")[len(before) :]

    def kill(self) -> None:
        for group in self.groups():
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hold", type=int, default=600, help="seconds a busy grading takes")
    parser.add_argument("--keep", action="store_true", help="keep the var dir")
    args = parser.parse_args(argv)

    var = Path(tempfile.mkdtemp(prefix="mleboard-stop-"))
    agents = var / "agents" / "sleeper"
    agents.mkdir(parents=True)
    (agents / "Dockerfile").write_text("FROM mleboard/base:latest\n")
    keep = {k: v for k, v in os.environ.items() if not k.startswith("MLEBOARD_")}
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"):
        keep.pop(name, None)
    env = {
        **keep,
        "MLEBOARD_VAR_DIR": str(var),
        "MLEBOARD_DATA_DIR": str(var / "data"),
        "MLEBOARD_AGENT_DIRS": str(var / "agents"),
        "MLEBOARD_RUN_BACKEND": "local",
        "MLEBOARD_ALLOW_UNISOLATED_RUNS": "1",
        "MLEBOARD_STALE_AFTER_S": "4",
        "MLEBOARD_REAPER_INTERVAL_S": "2",
        "MLEBOARD_RUN_RETRY_S": "1",
        "SECRET_KEY": config.env("SECRET_KEY") or "stop-bench-only-key",
        "BIN": str(Path(sys.executable).parent),
        "HOST": "127.0.0.1",
        "PYTHONPATH": str(REPO),
    }
    os.environ.clear()
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "webapp.project.settings"
    sys.path.insert(0, str(REPO))

    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from benchmark import demo
    from webapp import work
    from webapp.competitions.models import Competition
    from webapp.liveness.models import ProcessBeat
    from webapp.results.models import Experiment, GradeReport, Run
    from webapp.results.services import agent_get_or_create
    from webapp.runs.models import AgentRun, RunHost
    from webapp.runs.services.launch import launch_create_from_input

    log(f"stop bench: make run on SQLite and the embedded broker, var dir {var}")
    call_command("migrate", verbosity=0)
    call_command("load_catalogue", stdout=open(os.devnull, "w"))  # noqa: SIM115
    demo.build_demo(var / "data", seeds=1, competitions=("demo-wine",))
    call_command("collectstatic", interactive=False, verbosity=0)
    owner = User.objects.create_user("stop-bench")
    wine = Competition.objects.get(slug="demo-wine")
    sample = next((var / "data" / "demo-wine" / "prepared" / "public").glob("sample_sub*.csv"))

    def start(name: str, hold: int) -> Site:
        (agents / "agent.yaml").write_text(SLEEPER.format(seconds=hold))
        site_env = {**env, "PORT": str(free_port()), "MLEBOARD_GRADING_FAULT_DELAY": str(hold)}
        site = Site(site_env, var, name)
        wait(site.answers, 300, "the site answering")
        answered = time.monotonic() - site.started
        alive = ProcessBeat.objects.filter(stopped_at=None)
        wait(
            lambda: (
                alive.filter(kind="worker").exists()
                and alive.filter(kind="beat").exists()
                and RunHost.objects.filter(state="up").exists()
            ),
            300,
            "the workers and beat beating",
        )
        log(f"{name}: answers {answered:.1f} s after start")
        return site

    failed = False
    runs: list[int] = []
    agent_runs: list[int] = []
    for round_ in range(1, args.rounds + 1):
        site = start(f"idle-{round_}", 1)
        took, killed = site.stop()
        failed |= killed
        log(f"round {round_} idle: stopped in {took:.1f} s; a process killed: {killed}")

        site = start(f"busy-{round_}", args.hold)
        experiment = Experiment.objects.create(
            name=f"stop bench {round_}",
            owner=owner,
            source=Experiment.Source.GRADED,
            agent=agent_get_or_create("stop-bench", "none"),
        )
        run = Run.objects.create(
            experiment=experiment, competition=wine, seed=0, submission_path=str(sample)
        )
        launch = launch_create_from_input(
            owner,
            {
                "agent": "sleeper",
                "competitions": ["demo-wine"],
                "seeds": 1,
                "cpus": 1,
                "memory": "256m",
                "gpus": 0,
                "time_limit_s": args.hold + 60,
                "backend": "local",
            },
        )
        agent_run = AgentRun.objects.get(launch=launch)
        wait(
            lambda run=run, agent_run=agent_run: (
                Run.objects.get(pk=run.pk).status == "running"
                and AgentRun.objects.get(pk=agent_run.pk).status == "running"
            ),
            300,
            "a grading and an agent run running",
        )
        took, killed = site.stop()
        run.refresh_from_db()
        agent_run.refresh_from_db()
        handed_back = (run.status, run.claimed_by, agent_run.status, agent_run.claimed_by) == (
            "queued",
            "",
            "queued",
            "",
        )
        failed |= killed or not handed_back
        log(
            f"round {round_} busy: stopped in {took:.1f} s; a process killed: {killed}; "
            f"grading {run.status}, agent run {agent_run.status} (handed back: {handed_back})"
        )
        runs.append(run.pk)
        agent_runs.append(agent_run.pk)

    site = start("next", 1)
    since = time.monotonic()
    ended = work.kind_for("agent_run").final
    wait(
        lambda: (
            not Run.objects.filter(pk__in=runs).exclude(status="graded").exists()
            and not AgentRun.objects.filter(pk__in=agent_runs).exclude(status__in=ended).exists()
        ),
        600,
        "the handed-back work done",
    )
    done = time.monotonic() - since
    reports = [GradeReport.objects.filter(run_id=pk).count() for pk in runs]
    failed |= any(n != 1 for n in reports)
    log(
        f"next start: the handed-back work done {done:.1f} s after the site answered; "
        f"reports per grading: {reports}"
    )
    took, killed = site.stop()
    log(f"next start: stopped in {took:.1f} s; a process killed: {killed}")
    failed |= killed
    if args.keep or failed:
        log(f"var dir kept: {var}")
    else:
        shutil.rmtree(var, ignore_errors=True)
    log("ALL HELD" if not failed else "SOMETHING DID NOT HOLD")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
