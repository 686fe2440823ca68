"""The site under a crowd: gunicorn as deployed on a database of published MLE-bench reports,
and 50 concurrent clients asking for a static file, the leaderboard, a mix of pages, and
the same pages signed in; requests/s, p50/p99 and errors for each page cache configuration
(method: docs/benchmarks.md).

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/mleboard_load \\
        .venv/bin/python perf/load_bench.py [--seeds 5] [--configs off,redis,memory]
        [--redis-url redis://127.0.0.1:6391/0] [--clients 50] [--seconds 15]

The database named by DATABASE_URL is dropped and created (never ``mleboard``); without
DATABASE_URL a fresh SQLite file is used. Every process started is stopped on exit.
"""

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from config import env as config_env_value
from config import is_set

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))

TARGETS = (
    "(b) >= half of (a), p99 < 200 ms, 0 errors; (c) p99 < 300 ms; "
    "(d) >= a quarter of (a), p99 < 300 ms"
)


def refuse_default_database(url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    if name in ("", "mleboard"):
        raise SystemExit(f"use a database of the bench's own, not {name or 'the default'!r}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(env: dict, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *argv],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def manage_all(env: dict, *commands: list[str]) -> str:
    """Several manage.py commands, each as its argv, run one after the other in a single
    process: Django starts once instead of once per command."""
    script = "from django.core.management import call_command\n" + "".join(
        f"call_command(*{list(argv)!r})\n" for argv in commands
    )
    return manage(env, "shell", "-c", script)


def fill(env: dict, work: Path, experiments: int, seeds: int, *, set_up: bool = True) -> None:
    """The explorer bench's data: published experiments of imported reports, and a human
    leaderboard on a few competitions so their pages draw it. ``set_up``: migrate, load the
    catalogue and collect the static files first (a site set up already needs none)."""
    from tests.support.factories import write_runs_folder

    started = time.perf_counter()
    runs = write_runs_folder(
        work / "runs", {f"agent-{i:03d}": seeds for i in range(experiments)}, split="all", seed=1
    )
    boards = []
    for slug in COMPETITIONS[:5]:
        board = work / f"{slug}-leaderboard.csv"
        rows = [f"{round(0.95 - i * 0.0004, 5)},team{i}" for i in range(1500)]
        board.write_text("score,teamName\n" + "\n".join(rows) + "\n")
        boards.append(["import_leaderboard", slug, str(board)])
    setup = [
        ["migrate", "--noinput", "-v0"],
        ["load_catalogue", "-v0"],
        ["collectstatic", "--noinput", "-v0"],
    ]
    manage_all(
        env,
        *(setup if set_up else []),
        [
            "import_grading_reports",
            str(runs),
            "--experiments",
            str(runs / "run_group_experiments.csv"),
            "--publish",
        ],
        *boards,
    )
    print(
        f"filled: {experiments} experiments x 75 competitions x {seeds} seeds "
        f"in {time.perf_counter() - started:.0f} s",
        flush=True,
    )


COMPETITIONS = [
    "spaceship-titanic",
    "aerial-cactus-identification",
    "jigsaw-toxic-comment-classification-challenge",
    "random-acts-of-pizza",
    "text-normalization-challenge-english-language",
    "tabular-playground-series-may-2022",
    "siim-isic-melanoma-classification",
    "leaf-classification",
    "nomad2018-predict-transparent-conductors",
    "plant-pathology-2020-fgvc7",
    "detecting-insults-in-social-commentary",
    "denoising-dirty-documents",
    "dog-breed-identification",
    "dogs-vs-cats-redux-kernels-edition",
    "histopathologic-cancer-detection",
    "mlsp-2013-birds",
    "new-york-city-taxi-fare-prediction",
    "spooky-author-identification",
    "tabular-playground-series-dec-2021",
    "the-icml-2013-whale-challenge-right-whale-redux",
]


def signed_in_session(env: dict) -> str:
    """A person who owns one private experiment (so their pages are their own), signed in:
    the Cookie header of their session, as a browser sends it."""
    script = """
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from django.middleware.csrf import _get_new_csrf_string
from webapp.results.models import Experiment
from webapp.results.services import agent_get_or_create
user, _ = User.objects.get_or_create(username="bench-reader")
Experiment.objects.get_or_create(
    name="bench-reader-private", owner=user, defaults={"agent": agent_get_or_create("p", "q")}
)
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(f"{settings.SESSION_COOKIE_NAME}={session.session_key}; "
      f"{settings.CSRF_COOKIE_NAME}={_get_new_csrf_string()}")
"""
    return manage(env, "shell", "-c", script).strip().splitlines()[-1]


def scenarios(experiment_ids: list[int], static_path: str) -> dict[str, list[str]]:
    rng = random.Random(0)
    ids = experiment_ids[:40]
    mix = []
    for _ in range(1000):
        roll = rng.random()
        if roll < 0.20:
            mix.append(rng.choice(["/", "/api/leaderboard/", "/?clean=1"]))
        elif roll < 0.40:
            mix.append(f"/experiments/{rng.choice(ids)}/")
        elif roll < 0.50:
            mix.append(f"/api/experiments/{rng.choice(ids)}/")
        elif roll < 0.70:
            mix.append(f"/competitions/{rng.choice(COMPETITIONS)}/")
        elif roll < 0.75:
            mix.append(rng.choice(["/competitions/", "/api/competitions/"]))
        elif roll < 0.90:
            a, b = rng.sample(ids[:8], 2)
            mix.append(f"/compare/?experiments={a},{b}")
        else:
            chosen = rng.sample(ids[:6], 4)
            mix.append(f"/compare/?experiments={','.join(map(str, chosen))}")
    signed_in = []
    for _ in range(300):
        roll = rng.random()
        if roll < 1 / 3:
            signed_in.append("/")
        elif roll < 2 / 3:
            signed_in.append(f"/experiments/{rng.choice(ids)}/")
        else:
            a, b = rng.sample(ids[:8], 2)
            signed_in.append(f"/compare/?experiments={a},{b}")
    return {
        "(a) static file": [static_path],
        "(b) / and /api/leaderboard/": ["/", "/api/leaderboard/"],
        "(c) mix": mix,
        SIGNED_IN: signed_in,
    }


SIGNED_IN = "(d) signed in: /, exp., compare"


# --- The client -------------------------------------------------------------------------


class Tally:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.statuses: dict[int, int] = {}
        self.cache_states: dict[str, int] = {}  # X-Page-Cache: hit, miss, viewer-hit, ...
        self.recording = False


ACCEPT_ENCODING = "gzip"  # as browsers: whitenoise and the page cache send gzip


async def fetch(reader, writer, host: str, path: str, cookie: str) -> tuple[int, bool, str]:
    """One GET on an open connection; returns (status, server closes the connection, its
    X-Page-Cache)."""
    cookie_line = f"Cookie: {cookie}\r\n" if cookie else ""
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: */*\r\n{cookie_line}"
        f"Accept-Encoding: {ACCEPT_ENCODING}\r\n\r\n".encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    else:
        await reader.read()
        return status, True, headers.get("x-page-cache", "-")
    closes = headers.get("connection", "").lower() == "close"
    return status, closes, headers.get("x-page-cache", "-")


async def client(port: int, paths, stop_at: float, tally: Tally, cookie: str = "") -> None:
    host = f"127.0.0.1:{port}"
    reader = writer = None
    while time.perf_counter() < stop_at:
        path = next(paths, None)
        if path is None:
            break
        started = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            status, close, cache_state = await asyncio.wait_for(
                fetch(reader, writer, host, path, cookie), 60
            )
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
            if tally.recording:
                tally.errors += 1
            if writer is not None:
                writer.close()
            reader = writer = None
            continue
        if tally.recording:
            tally.latencies.append(time.perf_counter() - started)
            tally.statuses[status] = tally.statuses.get(status, 0) + 1
            tally.cache_states[cache_state] = tally.cache_states.get(cache_state, 0) + 1
            if status >= 400:
                tally.errors += 1
        if close:
            writer.close()
            reader = writer = None
    if writer is not None:
        writer.close()


async def warm(port: int, paths: list[str], times: int, at_once: int, cookie: str = "") -> None:
    """Every distinct address ``times`` times, ``at_once`` requests at a time: with the
    cache on, Redis (or, likely, each worker's memory) holds every page before the
    measure."""
    queue = [p for p in dict.fromkeys(paths) for _ in range(times)]
    tally = Tally()

    async def worker() -> None:
        while queue:
            await client(port, iter([queue.pop()]), float("inf"), tally, cookie)

    await asyncio.gather(*(worker() for _ in range(at_once)))


async def load(
    port: int, paths: list[str], clients: int, warmup: float, seconds: float, cookie: str = ""
) -> dict:
    tally = Tally()
    rng = random.Random(1)
    start = time.perf_counter()
    stop_at = start + warmup + seconds

    def paths_for(i: int):
        offset = rng.randrange(len(paths))
        return itertools.cycle(paths[offset:] + paths[:offset])

    tasks = [
        asyncio.create_task(client(port, paths_for(i), stop_at, tally, cookie))
        for i in range(clients)
    ]
    await asyncio.sleep(warmup)
    tally.recording = True
    measured_from = time.perf_counter()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - measured_from
    latencies = sorted(tally.latencies)
    n = len(latencies)

    def pct(p: float) -> float:
        return 1000 * latencies[min(n - 1, int(p * n))] if n else float("nan")

    return {
        "requests": n,
        "rps": n / elapsed,
        "p50": pct(0.50),
        "p99": pct(0.99),
        "errors": tally.errors,
        "statuses": tally.statuses,
        "cache": tally.cache_states,
    }


# --- The server -------------------------------------------------------------------------


def start_gunicorn(env: dict, port: int, workers: int, log_path: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "webapp.project.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--timeout",
            "120",
            "--backlog",
            "2048",
            # gunicorn 27's default control socket is one path per user: never share it.
            "--no-control-socket",
        ],
        env=env,
        cwd=ROOT,
        stdout=open(log_path, "ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited:\n{log_path.read_text()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.2)
    stop(proc)
    raise SystemExit("gunicorn did not start in 60 s")


def start_private_redis(work: Path) -> str:
    """A redis-server of the bench's own for the pages (never a shared one: the site sets
    its maxmemory and eviction policy), stopped on exit."""
    import atexit

    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", work],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    atexit.register(stop, proc)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s, contextlib.suppress(OSError):
            s.connect(("127.0.0.1", port))
            return f"redis://127.0.0.1:{port}/0"
        time.sleep(0.1)
    raise SystemExit("the private redis-server did not start in 30 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def experiment_ids(port: int) -> list[int]:
    import json
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/experiments/", timeout=60) as r:
        return sorted(e["id"] for e in json.load(r) if e["name"].startswith("agent-"))


def static_path(var_dir: Path) -> str:
    """The stylesheet under its hashed name, as the pages link it (collectstatic's
    manifest)."""
    import json

    manifest = var_dir / "staticfiles" / "staticfiles.json"
    if not manifest.is_file():
        raise SystemExit(f"collectstatic wrote no {manifest}")
    return "/static/" + json.loads(manifest.read_text())["paths"]["css/site.css"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--experiments", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--configs", default="off,redis,memory")
    parser.add_argument(
        "--redis-url",
        default="",
        help="the pages' Redis (its maxmemory is set); default: a private redis-server",
    )
    parser.add_argument(
        "--accept-encoding", default="gzip", help="the clients' Accept-Encoding ('' for none)"
    )
    args = parser.parse_args()
    global ACCEPT_ENCODING
    ACCEPT_ENCODING = args.accept_encoding
    # A TERM stops the bench through its finally clauses, so gunicorn goes with it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    work = Path(tempfile.mkdtemp(prefix="mleboard-load-"))
    var_dir = work / "var"
    env = {
        **os.environ,
        "MLEBOARD_VAR_DIR": str(var_dir),
        "SECRET_KEY": config_env_value("SECRET_KEY") or "bench-only-key",
        "DJANGO_SETTINGS_MODULE": "webapp.project.settings",
        "PYTHONPATH": str(ROOT),
        # As compose runs the web service.
        "DATABASE_CONN_MAX_AGE": "60",
    }
    env.pop("CACHE_URL", None)
    env.pop("MLEBOARD_CACHE_URL", None)
    database = config_env_value("DATABASE_URL") if is_set("DATABASE_URL") else ""
    if database:
        from drill.database import recreate_pg_database

        refuse_default_database(database)
        recreate_pg_database(database)
    print(f"database: {database or 'SQLite under ' + str(var_dir)}; {os.cpu_count()} CPUs")
    fill(env, work, args.experiments, args.seeds)
    cookie = signed_in_session(env)

    results: dict[str, dict[str, dict]] = {}
    for config in args.configs.split(","):
        config_env = dict(env)
        if config == "off":
            config_env["MLEBOARD_PAGE_CACHE"] = "0"
        elif config == "redis":
            config_env["MLEBOARD_PAGE_CACHE"] = "1"
            redis_url = args.redis_url or start_private_redis(work)
            config_env["MLEBOARD_CACHE_URL"] = redis_url
            import redis

            redis.Redis.from_url(redis_url).flushdb()
        elif config == "memory":
            config_env["MLEBOARD_PAGE_CACHE"] = "1"
        else:
            raise SystemExit(f"unknown config {config!r}: off, redis or memory")
        port = free_port()
        proc = start_gunicorn(config_env, port, args.workers, work / f"gunicorn-{config}.log")
        try:
            ids = experiment_ids(port)
            results[config] = {}
            for name, paths in scenarios(ids, static_path(var_dir)).items():
                session = cookie if name == SIGNED_IN else ""
                if config != "off":
                    # Redis is shared: one rendering of each page fills it for all workers.
                    started = time.perf_counter()
                    asyncio.run(
                        warm(
                            port,
                            paths,
                            1 if config == "redis" else args.workers,
                            args.workers,
                            session,
                        )
                    )
                    print(f"[{config:6}] warmed {name} in {time.perf_counter() - started:.0f} s")
                result = asyncio.run(
                    load(port, paths, args.clients, args.warmup, args.seconds, session)
                )
                results[config][name] = result
                print(
                    f"[{config:6}] {name:30} {result['rps']:8.0f} req/s  p50 {result['p50']:7.1f} ms"
                    f"  p99 {result['p99']:7.1f} ms  errors {result['errors']}"
                    f"  statuses {result['statuses']}  cache {result['cache']}",
                    flush=True,
                )
        finally:
            stop(proc)

    print(
        f"\n{args.clients} clients, gunicorn {args.workers} sync workers, {os.cpu_count()} CPUs, "
        f"{args.experiments} x 75 x {args.seeds} reports, Accept-Encoding: "
        f"{args.accept_encoding or '(none)'}; targets: {TARGETS}"
    )
    print(
        f"{'cache':7} {'scenario':30} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'/(a)':>6}"
    )
    for config, by_scenario in results.items():
        static = by_scenario["(a) static file"]["rps"]
        for name, r in by_scenario.items():
            print(
                f"{config:7} {name:30} {r['rps']:8.0f} {r['p50']:8.1f} {r['p99']:8.1f} "
                f"{r['errors']:7d} {r['rps'] / static:6.2f}"
            )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
