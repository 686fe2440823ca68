"""`make run` keeps its processes alive (scripts/serve.sh: webapp/ops/processes.py under
supervisord): each process killed with SIGKILL runs again within 10 s, the restart is
logged, and the work it held is finished without a hand. It says it is up once the site
answers, and prints the site's mail where its user reads it. Ctrl-C (SIGINT) and SIGTERM stop
everything, each process on its own (none killed at the end of its grace period); a busy
site hands its work back: the grading and the agent run it held wait again and are done
at the next start, graded once. How long a stop takes is printed, not asserted.

The site runs on the test's database and broker, in a var folder of its own, with a fast
sweeper (every 2 s; claims silent for 4 s taken back), as a person runs it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.contrib.auth.models import Permission
from rest_framework.authtoken.models import Token

from tests.support import demo_builds
from tests.support.polling import wait_until
from tests.support.workers import REPO_ROOT, worker_env
from webapp import work
from webapp.competitions.models import Competition
from webapp.results.models import Experiment, GradeReport, Run
from webapp.results.services import agent_get_or_create
from webapp.runs.models import AgentRun

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BIN = Path(sys.executable).parent
PROGRAMS = ("web", "grading-worker", "runs-worker", "beat")
SLEEPER = (
    "name: sleeper\ndescription: Sleeps a while.\nstart: [sleep, '{seconds}']\negress: false\n"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Site:
    """``sh scripts/serve.sh`` in a session of its own."""

    def __init__(self, tmp_path: Path, agents: Path, sleep_s: int = 8, **extra: str):
        self.var = tmp_path / "var"
        # The static files `make setup` collects (the test session's): pages need them.
        self.var.mkdir(exist_ok=True)
        if not (self.var / "staticfiles").exists():
            (self.var / "staticfiles").symlink_to(settings.STATIC_ROOT)
        self.port = _free_port()
        (agents / "sleeper").mkdir(parents=True, exist_ok=True)
        (agents / "sleeper" / "agent.yaml").write_text(SLEEPER.format(seconds=sleep_s))
        # Never built: the local backend runs the command itself.
        (agents / "sleeper" / "Dockerfile").write_text("FROM mleboard/base:latest\n")
        options = {
            "MLEBOARD_VAR_DIR": str(self.var),
            "SECRET_KEY": "k" * 50,
            "BIN": str(BIN),
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": "1",
            "WORKER_CONCURRENCY": "1",
            "MLEBOARD_RUN_SLOTS": "1",
            "MLEBOARD_RUN_BACKEND": "local",
            "MLEBOARD_ALLOW_UNISOLATED_RUNS": "1",
            "MLEBOARD_AGENT_DIRS": str(agents),
            "MLEBOARD_STALE_AFTER_S": "4",
            "MLEBOARD_REAPER_INTERVAL_S": "2",
            "MLEBOARD_GRADING_FAULT_DELAY": "2",
            "MLEBOARD_RUN_RETRY_S": "1",
        }
        self.env = worker_env(**{**options, **extra})
        self.out = open(tmp_path / f"serve-{self.port}.out", "w")
        self.proc = subprocess.Popen(
            ["sh", "scripts/serve.sh"],
            cwd=REPO_ROOT,
            env=self.env,
            stdout=self.out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def log(self) -> Path:
        return self.var / "log" / "supervisord.log"

    def status(self) -> dict[str, tuple[str, int]]:
        """supervisorctl's view: program -> (state, pid)."""
        done = subprocess.run(
            [str(BIN / "supervisorctl"), "-c", str(self.var / "supervisord.conf"), "status"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        found = {}
        for line in done.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].startswith("mleboard:"):
                pid = int(parts[3].rstrip(",")) if parts[1] == "RUNNING" else 0
                found[parts[0].split(":", 1)[1]] = (parts[1], pid)
        return found

    def all_running(self) -> dict[str, int] | None:
        assert self.proc.poll() is None, self.output()
        status = self.status()
        if set(status) == set(PROGRAMS) and all(s == "RUNNING" for s, _ in status.values()):
            return {name: pid for name, (_, pid) in status.items()}
        return None

    def answers(self) -> bool:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.port}/api/competitions/", timeout=5
            ) as response:
                return response.status == 200
        except OSError:
            return False

    def ready(self) -> bool:
        """Up as a person sees it: the site answers, and its workers and beat say they are
        alive (their heartbeats)."""
        from webapp.liveness.models import ProcessBeat
        from webapp.runs.models import RunHost

        beats = ProcessBeat.objects.filter(stopped_at=None)
        return (
            self.answers()
            and beats.filter(kind=ProcessBeat.Kind.WORKER).exists()
            and beats.filter(kind=ProcessBeat.Kind.BEAT).exists()
            and RunHost.objects.filter(state=RunHost.State.UP).exists()
        )

    def groups(self) -> list[int]:
        """The process groups of the programs, as the launcher noted them (var/run/)."""
        return [int(p.read_text()) for p in (self.var / "run").glob("*.pgid")]

    def alive(self) -> list[str]:
        """Command lines of every process left of the site: supervisord and each group."""
        groups = set(self.groups()) | {self.proc.pid}
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                if os.getpgid(int(proc.name)) in groups:
                    cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                    if cmd:  # a zombie has none
                        found.append(cmd)
            except (OSError, ValueError):
                continue
        return found

    def printed(self) -> str:
        """What make run has printed (its terminal)."""
        return Path(self.out.name).read_text(errors="replace")

    def output(self) -> str:
        parts = [self.out.name]
        for path in [self.log, *sorted((self.var / "log").glob("*"))]:
            if path.is_file():
                parts.append(f"--- {path.name}\n{path.read_text(errors='replace')[-2500:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        for pgid in [self.proc.pid, *self.groups()]:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.out.close()


@pytest.fixture
def site(tmp_path, settings):
    demo_builds.demo_site(tmp_path, settings, seeds=1)
    started = Site(tmp_path, tmp_path / "agents")
    yield started
    started.stop()


def _runs_to_grade(n: int) -> list[Run]:
    from django.contrib.auth.models import User

    owner = User.objects.create_user("supervised")
    experiment = Experiment.objects.create(
        name="supervised",
        owner=owner,
        source=Experiment.Source.GRADED,
        agent=agent_get_or_create("s", "m"),
    )
    wine = Competition.objects.get(slug="demo-wine")
    sample = Path(demo_builds_data_dir()) / "demo-wine" / "prepared" / "public"
    submission = next(sample.glob("sample_submission*.csv"))
    # Never sent: the sweeper sends them, as it sends anything the broker never got.
    return [
        Run.objects.create(
            experiment=experiment, competition=wine, seed=seed, submission_path=str(submission)
        )
        for seed in range(n)
    ]


def demo_builds_data_dir() -> str:
    from django.conf import settings

    return str(settings.MLEBOARD_DATA_DIR)


def _launch_sleeper(site: Site) -> AgentRun:
    from django.contrib.auth.models import User

    user = User.objects.create_user("launcher")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    body = {
        "agent": "sleeper",
        "competitions": ["demo-wine"],
        "seeds": 1,
        "cpus": 1,
        "memory": "256m",
        "gpus": 0,
        "time_limit_s": 300,
        "backend": "local",
    }
    from django.test import Client, override_settings

    with override_settings(
        MLEBOARD_RUN_BACKEND="local",
        MLEBOARD_ALLOW_UNISOLATED_RUNS=True,
        MLEBOARD_AGENT_DIRS=[Path(site.env["MLEBOARD_AGENT_DIRS"])],
    ):
        api = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        response = api.post("/api/launches/", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    return AgentRun.objects.get(launch_id=response.json()["id"])


def test_every_process_killed_runs_again_within_10_s_and_its_work_is_finished(site):
    first = wait_until(site.all_running, timeout=120)
    wait_until(site.answers, timeout=120)
    runs = _runs_to_grade(3)
    agent_run = _launch_sleeper(site)

    def restarted(name: str, old_pid: int, killed_at: float) -> float:
        def new_pid():
            state, pid = site.status().get(name, ("", 0))
            return pid if pid and pid != old_pid and os.path.exists(f"/proc/{pid}") else 0

        wait_until(new_pid, timeout=10, interval=0.1)
        return time.monotonic() - killed_at

    pids = dict(first)
    took = {}
    # The grading worker while it grades (the fault delay holds each grading 2 s).
    wait_until(lambda: Run.objects.filter(status=Run.Status.RUNNING).exists(), timeout=120)
    # The runs worker while its agent runs.
    wait_until(
        lambda: AgentRun.objects.get(pk=agent_run.pk).status == AgentRun.Status.RUNNING,
        timeout=120,
    )
    for name in ("grading-worker", "runs-worker", "web", "beat"):
        killed_at = time.monotonic()
        os.kill(pids[name], signal.SIGKILL)
        took[name] = restarted(name, pids[name], killed_at)
        pids = wait_until(site.all_running, timeout=60)
    assert all(t <= 10 for t in took.values()), took
    log = site.log.read_text()
    for name in PROGRAMS:
        assert f"exited: {name} (terminated by SIGKILL; not expected)" in log, name
        assert log.count(f"spawned: '{name}'") == 2, name
    # Nothing left of the killed ones (a gunicorn master's workers, a worker's pool).
    for name in PROGRAMS:
        assert not [c for c in site.alive() if str(first[name]) in c]

    # The work they held is finished, each run graded exactly once.
    wait_until(site.answers, timeout=60)
    wait_until(
        lambda: all(
            r.status == Run.Status.GRADED for r in Run.objects.filter(pk__in=[r.pk for r in runs])
        ),
        timeout=180,
    )
    for run in runs:
        assert GradeReport.objects.filter(run=run, is_current=True).count() == 1
    wait_until(
        lambda: AgentRun.objects.get(pk=agent_run.pk).status in work.kind_for("agent_run").final,
        timeout=180,
    )


def _stop(site: Site, sig: int) -> None:
    """Stop the site as Ctrl-C (or SIGTERM) does and wait until nothing of it is left;
    prints how long that took."""
    sent = time.monotonic()
    # Ctrl-C reaches the terminal's foreground group: serve.sh's process, supervisord.
    os.killpg(site.proc.pid, sig)
    wait_until(lambda: site.proc.poll() is not None and not site.alive(), timeout=120, interval=0.1)
    print(f"{signal.Signals(sig).name}: every process gone in {time.monotonic() - sent:.1f} s")
    log = site.log.read_text()
    # Each stopped by itself, none killed at the end of its grace period.
    assert "SIGKILL" not in log, log
    for name in PROGRAMS:
        assert f"stopped: {name} (" in log, log


def _sign_up(site: Site, username: str) -> None:
    """Sign up on the site's form, as a visitor does."""
    base = f"http://127.0.0.1:{site.port}/accounts/signup/"
    with requests.Session() as browser:
        form = browser.get(base, timeout=30)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        sent = browser.post(
            base,
            data={
                "csrfmiddlewaretoken": token,
                "email": f"{username}@example.org",
                "username": username,
                "password1": "a-long-pass-phrase-42",
                "password2": "a-long-pass-phrase-42",
            },
            headers={"Referer": base},
            timeout=30,
        )
    assert sent.status_code == 200 and "/accounts/confirm-email/" in sent.url, sent.text


def test_make_run_says_it_is_up_once_it_answers_shows_mail_and_stops_on_ctrl_c(tmp_path, settings):
    demo_builds.demo_site(tmp_path, settings, seeds=1)
    # Two processes in each worker's pool, as `make run` has by default.
    site = Site(tmp_path, tmp_path / "agents", WORKER_CONCURRENCY="2", MLEBOARD_RUN_SLOTS="2")
    try:
        wait_until(lambda: "mleboard is up" in site.printed(), timeout=180)
        assert site.answers(), site.printed()
        # The confirmation mail (the console backend) is on make run's own output.
        _sign_up(site, "newcomer")
        wait_until(lambda: "/accounts/confirm-email/" in site.printed(), timeout=60)
        assert "To: newcomer@example.org" in site.printed()

        # An idle site stops on Ctrl-C, each process on its own.
        wait_until(site.all_running, timeout=120)
        wait_until(site.ready, timeout=120)
        _stop(site, signal.SIGINT)
    finally:
        site.stop()


def test_a_busy_site_stopped_hands_its_work_back_and_does_it_at_the_next_start(tmp_path, settings):
    demo_builds.demo_site(tmp_path, settings, seeds=1)
    agents = tmp_path / "agents"
    # Gradings that take 10 minutes and an agent that runs 10: a stop must not wait for them.
    # A second grading process runs the sweeper meanwhile (it sends the agent run).
    first = Site(
        tmp_path, agents, sleep_s=600, MLEBOARD_GRADING_FAULT_DELAY="600", WORKER_CONCURRENCY="2"
    )
    try:
        wait_until(first.all_running, timeout=120)
        (run,) = _runs_to_grade(1)
        agent_run = _launch_sleeper(first)
        wait_until(lambda: Run.objects.get(pk=run.pk).status == Run.Status.RUNNING, timeout=120)
        wait_until(
            lambda: AgentRun.objects.get(pk=agent_run.pk).status == AgentRun.Status.RUNNING,
            timeout=120,
        )
        _stop(first, signal.SIGTERM)
    finally:
        first.stop()
    run.refresh_from_db()
    agent_run.refresh_from_db()
    # Handed back: both wait again, unclaimed, and nothing was stored for the grading.
    assert (run.status, run.claimed_by, run.dispatched_at) == (Run.Status.QUEUED, "", None)
    assert (agent_run.status, agent_run.claimed_by) == (AgentRun.Status.QUEUED, "")
    assert not GradeReport.objects.filter(run=run).exists()

    # The next start does them: graded once, the agent run (now a short one) to its end.
    second = Site(tmp_path, agents, sleep_s=1)
    try:
        wait_until(lambda: Run.objects.get(pk=run.pk).status == Run.Status.GRADED, timeout=180)
        wait_until(
            lambda: (
                AgentRun.objects.get(pk=agent_run.pk).status in work.kind_for("agent_run").final
            ),
            timeout=180,
        )
    finally:
        second.stop()
    assert GradeReport.objects.filter(run=run).count() == 1
