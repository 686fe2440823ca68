"""Four run hosts, one site: a simulation of ``runs.cpu``/``runs.gpu`` routing, claims in
the database and a host lost midway. Prints the maximum over-commitment seen (must be 0),
the runs completed (must be all) and those of the killed host finished elsewhere
(method: docs/benchmarks.md).

    .venv/bin/python perf/hosts_sim.py                        # SQLite + the embedded broker
    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/mleboard_sim \\
    CELERY_BROKER_URL=redis://127.0.0.1:6379/11 .venv/bin/python perf/hosts_sim.py

With a DATABASE_URL, the database ``<its name>_hostsim`` is dropped and created (never the
one named); with a CELERY_BROKER_URL, that Redis database is purged.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import config

REPO = Path(__file__).resolve().parents[1]
GiB = 1024**3


@dataclass
class Host:
    name: str
    cpus: int
    memory: int
    gpus: tuple[str, ...]
    slots: int

    @property
    def queues(self) -> str:
        return "runs.cpu,runs.gpu" if self.gpus else "runs.cpu"


HOSTS = (
    Host("cpu-a", cpus=3, memory=3 * GiB, gpus=(), slots=3),
    Host("cpu-b", cpus=2, memory=2 * GiB, gpus=(), slots=2),
    Host("gpu-a", cpus=3, memory=3 * GiB, gpus=("0", "1"), slots=3),
    Host("gpu-b", cpus=3, memory=3 * GiB, gpus=("0", "1"), slots=3),
)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def sim_database(url: str) -> str:
    """The simulation's own database next to ``url``'s, dropped and created afresh."""
    from drill.database import recreate_pg_database  # perf/drill/, beside this file

    parts = urlsplit(url)
    sim = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "_hostsim"))
    recreate_pg_database(sim)
    return sim


class Worker:
    def __init__(self, host: Host, env: dict[str, str], logs: Path, python: str):
        self.host = host
        self.log_path = logs / f"worker-{host.name}.log"
        self.argv = [
            python,
            "-m",
            "celery",
            "-A",
            "webapp",
            "worker",
            "-n",
            f"runs-{host.name}@%h",
            "-Q",
            host.queues,
            "--concurrency",
            str(host.slots),
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--logfile",
            str(self.log_path),
        ]
        self.env = env | {
            "MLEBOARD_HOST_NAME": host.name,
            "MLEBOARD_HOST_CPUS": str(host.cpus),
            "MLEBOARD_HOST_MEMORY": str(host.memory),
            "MLEBOARD_HOST_GPUS": ",".join(host.gpus),
            "MLEBOARD_HOST_GPU_MODEL": "simulated" if host.gpus else "",
            "MLEBOARD_RUN_SLOTS": str(host.slots),
        }
        self.popen: subprocess.Popen | None = None

    def start(self) -> None:
        self.popen = subprocess.Popen(
            self.argv,
            cwd=REPO,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=open(self.log_path.with_suffix(".out"), "w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def signal(self, sig: int) -> None:
        if self.popen is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)

    def stop(self) -> None:
        if self.popen is None or self.popen.poll() is not None:
            self.signal(signal.SIGKILL)
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        self.signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)


@dataclass
class Sample:
    taken: int = 0
    max_cpu_over: float = 0.0
    max_memory_over: int = 0
    gpu_held_twice: int = 0
    max_claims: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


def sample_claims(result: Sample, stop: threading.Event, every: float) -> None:
    """Over-commitment at many instants: each sample is one query, one snapshot."""
    from django.db import close_old_connections

    from webapp.runs.models import HostClaim, RunHost

    try:
        while not stop.wait(every):
            try:
                hosts = {h.pk: h for h in RunHost.objects.all()}
                claims = list(
                    HostClaim.objects.values_list("host_id", "cpus", "memory_bytes", "gpu_ids")
                )
            except Exception:
                close_old_connections()
                continue
            result.taken += 1
            per_host: dict[int, list] = {}
            for host_id, cpus, memory, gpus in claims:
                per_host.setdefault(host_id, []).append((cpus, memory, gpus))
            for host_id, held in per_host.items():
                host = hosts[host_id]
                cpu_over = sum(c for c, _m, _g in held) - host.cpus
                memory_over = sum(m for _c, m, _g in held) - host.memory_bytes
                gpus = Counter(g for _c, _m, gs in held for g in gs)
                twice = sum(n - 1 for n in gpus.values() if n > 1)
                result.max_cpu_over = max(result.max_cpu_over, cpu_over)
                result.max_memory_over = max(result.max_memory_over, memory_over)
                result.gpu_held_twice = max(result.gpu_held_twice, twice)
                result.max_claims[host.name] = max(result.max_claims[host.name], len(held))
                if cpu_over > 1e-9 or memory_over > 0 or twice:
                    result.problems.append(
                        f"{host.name}: {len(held)} claims, CPU over {cpu_over:g}, memory over "
                        f"{memory_over}, GPUs held twice {twice}"
                    )
    finally:
        close_old_connections()


def write_data(data: Path, competitions: list[str]) -> None:
    """Just enough of MLE-bench's prepared layout for the dummy agent: a sample submission."""
    for cid in competitions:
        public = data / cid / "prepared" / "public"
        public.mkdir(parents=True, exist_ok=True)
        (public / "sample_submission.csv").write_text("id,prediction\n1,0\n2,1\n")
        (public / "description.md").write_text(f"# {cid}\nA simulated competition.\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("local", "docker"), default="local")
    parser.add_argument("--competitions", type=int, default=75)
    parser.add_argument("--cpu-seeds", type=int, default=2, help="seeds of the CPU launch")
    parser.add_argument("--gpu-seeds", type=int, default=1, help="seeds of the GPU launch")
    parser.add_argument("--time-limit", type=float, default=60.0, help="per run, seconds")
    parser.add_argument("--stale-after", type=int, default=10, help="MLEBOARD_STALE_AFTER_S")
    parser.add_argument("--reaper-interval", type=float, default=2.0, help="sweeper period")
    parser.add_argument("--kill", default="gpu-a", help="the host SIGKILLed midway ('' none)")
    parser.add_argument("--kill-at", type=float, default=0.35, help="fraction of runs ended")
    parser.add_argument("--sample-every", type=float, default=0.05, help="seconds")
    parser.add_argument("--deadline", type=float, default=1200.0, help="seconds for all runs")
    parser.add_argument("--keep", action="store_true", help="keep the var dir")
    args = parser.parse_args(argv)
    if args.backend == "docker" and args.gpu_seeds:
        import docker

        if "nvidia" not in (docker.from_env().info().get("Runtimes") or {}):
            parser.error(
                "the docker backend gives GPU runs real devices, and this engine has no NVIDIA "
                "runtime: use --cpu-seeds 3 --gpu-seeds 0 (or the local backend)"
            )

    started = time.monotonic()
    var = Path(tempfile.mkdtemp(prefix="mleboard-hostsim-"))
    logs = var / "log"
    logs.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MLEBOARD_") and k not in ("DATABASE_URL", "CELERY_BROKER_URL")
    }
    env.update(
        MLEBOARD_VAR_DIR=str(var),
        MLEBOARD_MEDIA_ROOT=str(var / "media"),
        MLEBOARD_DATA_DIR=str(var / "data"),
        MLEBOARD_STALE_AFTER_S=str(args.stale_after),
        MLEBOARD_REAPER_INTERVAL_S=str(max(1, int(args.reaper_interval))),
        MLEBOARD_MAX_ATTEMPTS="3",
        MLEBOARD_RUN_BACKEND=args.backend,
        MLEBOARD_ALLOW_UNISOLATED_RUNS="1" if args.backend == "local" else "0",
        MLEBOARD_RUN_RETRY_S="1",
        SECRET_KEY=config.env("SECRET_KEY") or "hosts-simulation-only",
        PYTHONUNBUFFERED="1",
        PYTHONPATH=str(REPO),
    )
    if config.env("DATABASE_URL").startswith(("postgres://", "postgresql://")):
        env["DATABASE_URL"] = sim_database(config.env("DATABASE_URL"))
        database = f"PostgreSQL ({urlsplit(env['DATABASE_URL']).path.lstrip('/')})"
    else:
        database = "SQLite"
    if config.env("CELERY_BROKER_URL").startswith("redis://"):
        env["CELERY_BROKER_URL"] = config.env("CELERY_BROKER_URL")
        broker = f"Redis ({env['CELERY_BROKER_URL'].rsplit('/', 1)[-1] or '0'})"
    else:
        broker = "the embedded filesystem broker"
    os.environ.clear()
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "webapp.project.settings"
    sys.path.insert(0, str(REPO))

    import logging

    import django

    django.setup()
    logging.getLogger("webapp.ops.sweeper").setLevel(logging.WARNING)
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db.models import Count

    from benchmark.catalogue import competitions_in_split
    from webapp import work
    from webapp.ops.sweeper import sweep
    from webapp.project.celery import app
    from webapp.runs.models import AgentRun, RunHost
    from webapp.runs.services.launch import launch_create

    competitions = [c.id for c in competitions_in_split("all")][: args.competitions]
    total = len(competitions) * (args.cpu_seeds + args.gpu_seeds)
    log(
        f"hosts simulation: {database}, {broker}, {args.backend} backend, dummy agent, "
        f"{len(competitions)} competitions x {args.cpu_seeds} CPU + {args.gpu_seeds} GPU seeds "
        f"= {total} runs, STALE_AFTER_S={args.stale_after}; var dir {var}"
    )
    call_command("migrate", verbosity=0)
    call_command("load_catalogue", stdout=open(os.devnull, "w"))
    write_data(var / "data", competitions)
    if broker.startswith("Redis"):
        app.control.purge()

    workers = [Worker(h, env, logs, sys.executable) for h in HOSTS]
    stop_sampling = threading.Event()
    sample = Sample()
    sampler = threading.Thread(
        target=sample_claims, args=(sample, stop_sampling, args.sample_every), daemon=True
    )
    killed_at = None
    held_when_killed: list[int] = []
    try:
        for w in workers:
            w.start()
        deadline = time.monotonic() + 120
        while RunHost.objects.filter(state=RunHost.State.UP).count() < len(workers):
            for w in workers:
                if w.popen.poll() is not None:
                    raise SystemExit(f"{w.host.name} exited: see {w.log_path}")
            if time.monotonic() > deadline:
                raise SystemExit(f"not all hosts registered in 120 s: see {logs}")
            time.sleep(0.3)
        for h in RunHost.objects.all():
            log(
                f"  host {h.name}: {h.cpus:g} CPUs, {h.memory_bytes / GiB:g} GiB, GPUs "
                f"{','.join(h.gpu_ids) or '-'}, queues {','.join(h.queues)}, {h.slots} slots"
            )
        sampler.start()
        owner = User.objects.create_user("sim")
        launched = time.monotonic()
        launch_error: list[BaseException] = []

        def launch_all() -> None:
            # In a thread: sending 225 tasks takes a while (on SQLite especially), and
            # the hosts start on them meanwhile; the sweeps and the kill go on here.
            from django.db import connection

            try:
                for seeds, gpus in ((args.cpu_seeds, 0), (args.gpu_seeds, 1)):
                    if seeds:
                        launch_create(
                            owner=owner,
                            agent_name="dummy",
                            competitions=competitions,
                            seeds=seeds,
                            cpus=1,
                            memory_bytes=GiB,
                            gpus=gpus,
                            time_limit_s=args.time_limit,
                        )
                log(f"launched {AgentRun.objects.count()} runs")
            except BaseException as exc:
                launch_error.append(exc)
                raise
            finally:
                connection.close()

        launcher = threading.Thread(target=launch_all, daemon=True)
        launcher.start()
        next_sweep = time.monotonic()
        last_report = 0.0
        while True:
            now = time.monotonic()
            if now >= next_sweep:
                report = sweep()
                next_sweep = now + args.reaper_interval
                if report.hosts_down or report.runs_requeued:
                    log(
                        f"  sweep: hosts down {report.hosts_down}, runs queued again "
                        f"{report.runs_requeued}, claims released {report.claims_released}"
                    )
            counts = dict(
                AgentRun.objects.values_list("status")
                .annotate(n=Count("pk"))
                .values_list("status", "n")
            )
            ended = sum(n for s, n in counts.items() if s in work.kind_for("agent_run").final)
            if now - last_report > 10:
                last_report = now
                log(f"  {ended}/{total} ended {counts}")
            if args.kill and killed_at is None and ended >= args.kill_at * total:
                victim = next(w for w in workers if w.host.name == args.kill)
                held_when_killed = list(
                    AgentRun.objects.filter(
                        host_claim__host__name=args.kill, status=AgentRun.Status.RUNNING
                    ).values_list("pk", flat=True)
                )
                victim.signal(signal.SIGKILL)
                killed_at = dt.datetime.now(dt.UTC)
                log(
                    f"  SIGKILLed host {args.kill} (its whole process group) holding "
                    f"{len(held_when_killed)} running runs"
                )
            if launch_error:
                raise SystemExit(f"launching failed: {launch_error[0]!r}")
            if ended >= total:
                break
            if now - launched > args.deadline:
                log(f"  deadline: {ended}/{total} ended")
                break
            time.sleep(0.2)
        elapsed_runs = time.monotonic() - launched
    finally:
        stop_sampling.set()
        if sampler.is_alive():
            sampler.join(timeout=10)
        for w in workers:
            w.stop()

    counts = dict(
        AgentRun.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n")
    )
    completed = counts.get(AgentRun.Status.COMPLETED, 0)
    finished_elsewhere = (
        AgentRun.objects.filter(
            pk__in=held_when_killed, status=AgentRun.Status.COMPLETED, finished_at__gt=killed_at
        ).count()
        if killed_at
        else 0
    )
    attempts = Counter(AgentRun.objects.values_list("attempts", flat=True))
    down = list(RunHost.objects.filter(state=RunHost.State.DOWN).values_list("name", "note"))
    print()
    print(f"samples of the claims table:           {sample.taken}")
    print(f"max CPU over-commitment on a host:     {sample.max_cpu_over:g}")
    print(f"max memory over-commitment on a host:  {max(sample.max_memory_over, 0)} bytes")
    print(f"GPU ids held twice on a host (max):    {sample.gpu_held_twice}")
    over = max(sample.max_cpu_over, 0) + max(sample.max_memory_over, 0) + sample.gpu_held_twice
    print(f"MAX OVER-COMMITMENT:                   {over:g}")
    print(f"most claims held at once per host:     {dict(sorted(sample.max_claims.items()))}")
    print(f"runs completed:                        {completed}/{total}  (all states {counts})")
    print(f"claims per run (attempts):             {dict(sorted(attempts.items()))}")
    if args.kill:
        print(
            f"killed host {args.kill}: held {len(held_when_killed)} running runs; "
            f"{finished_elsewhere} of them completed on another host"
        )
    print(f"hosts down at the end:                 {down}")
    print(f"seconds from launch to all ended:      {elapsed_runs:.1f}")
    print(f"total time:                            {time.monotonic() - started:.1f} s")
    for problem in sample.problems[:10]:
        print(f"  over-commitment: {problem}")
    ok = (
        over == 0
        and completed == total
        and (not args.kill or finished_elsewhere == len(held_when_killed))
    )
    print("ALL HOLD" if ok else "FAILED")
    if not args.keep and ok:
        import shutil

        shutil.rmtree(var, ignore_errors=True)
    else:
        print(f"var dir kept: {var}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
