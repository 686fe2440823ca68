"""Soak an embedded Celery broker: N tasks through two worker processes, with beat sending
its own periodic task and a client pinging the workers (remote control) all the while.
Prints the worker crashes, lost and duplicated tasks, pings answered and throughput.

    python perf/broker_soak.py                         # the site's broker (webapp/ops/embedded_broker.py)
    python perf/broker_soak.py --transport kombu       # kombu's filesystem transport as shipped
    python perf/broker_soak.py --tasks 200             # a quick look

Each task writes a file named after its number: a lost task is a missing number, a
duplicate a second file (docs/benchmarks.md). The soak stops by itself (``--timeout``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TRANSPORTS = ("safe", "kombu", "sqlalchemy")

# --- the Celery app the workers and beat load (``-A broker_soak``) -----------------------

_app = None


def make_app():
    """The soak's Celery app, configured as the site's for the chosen transport."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.project.settings")
    from celery import Celery
    from django.conf import settings

    transport = os.environ["SOAK_TRANSPORT"]
    app = Celery("broker_soak")
    app.config_from_object(settings, namespace="CELERY")
    if transport == "kombu":
        app.conf.broker_transport = "filesystem"  # kombu's own class
    elif transport == "sqlalchemy":
        app.conf.broker_transport = None
        app.conf.broker_url = f"sqla+sqlite:///{os.environ['SOAK_DIR']}/broker.sqlite3"
        # Its transport options go to SQLAlchemy's create_engine: none of the site's apply.
        app.conf.broker_transport_options = {}
    app.conf.beat_schedule = {"tick": {"task": "soak.tick", "schedule": 0.5}}
    app.conf.task_routes = {}
    app.conf.worker_hijack_root_logger = False
    seen = Path(os.environ["SOAK_DIR"]) / "seen"
    ticks = Path(os.environ["SOAK_DIR"]) / "ticks"

    @app.task(name="soak.record")
    def record(n: int) -> None:
        (seen / f"{n}.{uuid.uuid4().hex}").touch()

    @app.task(name="soak.tick")
    def tick() -> None:
        (ticks / uuid.uuid4().hex).touch()

    return app


def __getattr__(name):  # ``celery -A broker_soak`` looks up ``app``
    global _app
    if name in ("app", "celery"):
        if _app is None:
            _app = make_app()
        return _app
    raise AttributeError(name)


# --- the soak ----------------------------------------------------------------------------


def run(args) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"mleboard-soak-{args.transport}-"))
    (work / "seen").mkdir()
    (work / "ticks").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "DATABASE_URL")}
    env |= {
        "SOAK_TRANSPORT": args.transport,
        "SOAK_DIR": str(work),
        "MLEBOARD_VAR_DIR": str(work / "var"),
        "SECRET_KEY": "soak-only-key",
        "DJANGO_SETTINGS_MODULE": "webapp.project.settings",
        "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)]),
    }
    os.environ.update(env)
    celery = [sys.executable, "-m", "celery", "-A", "broker_soak"]
    logs = work / "logs"
    logs.mkdir()
    # The workers and beat write their heartbeats as the site's do (webapp.liveness): into
    # a database of the soak's own, migrated first.
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=600,
    )

    def start(name: str, argv: list[str]) -> subprocess.Popen:
        out = open(logs / f"{name}.log", "w")
        return subprocess.Popen(
            celery + argv, cwd=HERE, env=env, stdout=out, stderr=subprocess.STDOUT
        )

    workers = {
        f"soak{i}": start(
            f"soak{i}",
            [
                "worker",
                "-n",
                f"soak{i}@%h",
                "-Q",
                "default",
                "-c",
                str(args.concurrency),
                "--loglevel",
                "INFO",
            ],
        )
        for i in (1, 2)
    }
    beat = start("beat", ["beat", "-s", str(work / "beat-schedule")])
    try:
        return _soak(args, work, logs, workers, beat)
    finally:  # whatever happened, nothing of the soak is left running
        for p in [*workers.values(), beat]:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in [*workers.values(), beat]:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _soak(args, work: Path, logs: Path, workers: dict, beat: subprocess.Popen) -> dict:
    app = make_app()

    pings = Counter()
    stop_pinging = threading.Event()

    def ping_loop():
        while not stop_pinging.is_set():
            try:
                replies = app.control.ping(timeout=0.5)
                pings["sent"] += 1
                pings["answers"] += len(replies)
            except Exception as exc:  # a ping that fails is counted, not fatal
                pings["errors"] += 1
                pings[f"error: {type(exc).__name__}"] += 1
            stop_pinging.wait(args.ping_interval)

    # Ready when each says so in its log (not by ping: a transport without fanout, such
    # as SQLAlchemy's, never answers one).
    deadline = time.monotonic() + 120
    while not all(" ready." in (logs / f"{n}.log").read_text() for n in workers):
        if time.monotonic() > deadline:
            raise SystemExit(f"the workers were not ready in 120 s; logs in {logs}")
        if any(p.poll() is not None for p in workers.values()):
            break  # counted below as a crash
        time.sleep(0.2)
    pinger = threading.Thread(target=ping_loop, daemon=True)
    pinger.start()

    started = time.monotonic()
    record = app.tasks["soak.record"]
    send_errors = 0
    for n in range(args.tasks):
        try:
            record.delay(n)
        except Exception:
            send_errors += 1
    sent_s = time.monotonic() - started

    seen_dir = work / "seen"
    last, last_change = -1, time.monotonic()
    deadline = started + args.timeout
    while True:
        done = len(os.listdir(seen_dir))
        if done != last:
            last, last_change = done, time.monotonic()
        if done >= args.tasks - send_errors:
            break
        if time.monotonic() > deadline or time.monotonic() - last_change > args.stall:
            break
        time.sleep(0.2)
    elapsed = time.monotonic() - started
    # A moment for late duplicates to show.
    time.sleep(2)
    stop_pinging.set()
    pinger.join(timeout=5)

    crashed = [name for name, p in workers.items() if p.poll() is not None]
    beat_crashed = beat.poll() is not None

    counts = Counter(name.split(".", 1)[0] for name in os.listdir(seen_dir))
    lost = sum(1 for n in range(args.tasks) if counts[str(n)] == 0)
    duplicated = sum(1 for n in range(args.tasks) if counts[str(n)] > 1)
    errors = Counter()
    for log in logs.glob("*.log"):
        text = log.read_text(errors="replace")
        for pattern in (
            "Unrecoverable error",
            "JSONDecodeError",
            "IntegrityError",
            "Traceback",
            "ChannelError",
        ):
            errors[pattern] += len(re.findall(pattern, text))
    return {
        "transport": args.transport,
        "tasks": args.tasks,
        "send errors": send_errors,
        "executed": sum(counts.values()),
        "lost": lost,
        "duplicated": duplicated,
        "worker crashes": len(crashed) + int(beat_crashed),
        "crashed": ", ".join(crashed + (["beat"] if beat_crashed else [])) or "none",
        "pings sent": pings["sent"],
        "ping answers": pings["answers"],
        "ping errors": pings["errors"],
        "beat ticks": len(os.listdir(work / "ticks")),
        "log errors": dict(errors),
        "send s": round(sent_s, 1),
        "elapsed s": round(elapsed, 1),
        "tasks/s": round(sum(counts.values()) / elapsed, 1) if elapsed else 0,
        "logs": str(logs),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--transport", choices=TRANSPORTS, default="safe")
    parser.add_argument("--concurrency", type=int, default=2, help="processes per worker")
    parser.add_argument("--ping-interval", type=float, default=0.2)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds, all included")
    parser.add_argument("--stall", type=float, default=120, help="seconds without progress")
    parser.add_argument(
        "--keep-logs", action="store_true", help="keep the logs of a run that held too"
    )
    args = parser.parse_args(argv)
    result = run(args)
    width = max(map(len, result))
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")
    ok = not (result["lost"] or result["duplicated"] or result["worker crashes"])
    print("result:", "0 crashes, 0 lost, 0 duplicated" if ok else "FAILED")
    if ok and not args.keep_logs:  # keep the logs of a failure only
        shutil.rmtree(Path(result["logs"]).parent, ignore_errors=True)
        print("logs removed (--keep-logs keeps them)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
