"""Run hosts, agent runs waiting for them and processes' heartbeats, made in the database;
a real run host started as a worker process."""

import datetime as dt
import os
import random
import signal
import subprocess

from django.contrib.auth.models import User
from django.utils import timezone

from tests.support.workers import REPO_ROOT, worker_argv, worker_env
from webapp.competitions.models import Competition
from webapp.liveness.models import ProcessBeat
from webapp.results.models import Experiment
from webapp.results.services import agent_get_or_create
from webapp.runs.models import AgentRun, Launch, RunHost

GiB = 1024**3


def make_host(name="alpha", cpus=8, memory=32 * GiB, gpus=("0", "1"), beat_age_s=0.0, **kw):
    now = timezone.now()
    return RunHost.objects.create(
        name=name,
        cpus=cpus,
        memory_bytes=memory,
        gpu_ids=list(gpus),
        boot=kw.pop("boot", f"boot-{name}"),
        queues=["runs.cpu", "runs.gpu"] if gpus else ["runs.cpu"],
        slots=kw.pop("slots", 4),
        started_at=now,
        heartbeat_at=now - dt.timedelta(seconds=beat_age_s),
        **kw,
    )


def make_runs(n: int, gpus: int = 0, owner=None) -> list[AgentRun]:
    owner = owner or User.objects.create_user(f"owner-{random.random()}")
    competition, _ = Competition.objects.get_or_create(
        slug="spaceship-titanic",
        defaults={
            "name": "Spaceship Titanic",
            "category": "Tabular",
            "complexity": "low",
            "metric": "accuracy",
            "lower_is_better": False,
        },
    )
    experiment = Experiment.objects.create(
        name="hosts test",
        owner=owner,
        source=Experiment.Source.GRADED,
        agent=agent_get_or_create("dummy", "none"),
    )
    launch = Launch.objects.create(
        owner=owner,
        agent_name="dummy",
        competitions=[competition.slug],
        seeds=n,
        gpus=gpus,
        experiment=experiment,
    )
    return [
        AgentRun.objects.create(launch=launch, competition=competition, seed=s) for s in range(n)
    ]


def start_run_host(tmp_path, name: str, queues: str, slots: int, **env) -> subprocess.Popen:
    """A real Celery worker of the run queues on the configured broker and database, with
    a host name and capacity of its own, in its own process group."""
    log = tmp_path / f"{name}.log"
    proc = subprocess.Popen(
        worker_argv(queues, slots, "-n", f"runs-{name}@%h"),
        cwd=REPO_ROOT,
        env=worker_env(MLEBOARD_HOST_NAME=name, **env),
        stdout=open(log, "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    proc.log_path = log
    return proc


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def beat(name, queues, age_s: float, kind=ProcessBeat.Kind.WORKER, stopped=False, now=None):
    """A process row whose last heartbeat was ``age_s`` seconds before ``now``."""
    now = now or timezone.now()
    at = now - dt.timedelta(seconds=age_s)
    return ProcessBeat.objects.create(
        name=name,
        kind=kind,
        hostname="h",
        pid=1,
        queues=queues,
        started_at=at - dt.timedelta(hours=1),
        beat_at=at,
        stopped_at=at if stopped else None,
    )
