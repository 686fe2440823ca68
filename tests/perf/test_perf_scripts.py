"""Every script in perf/ runs: each at tiny sizes, as a person would start it
(``python perf/NAME.py ...``; a package, ``python -m perf.NAME ...``), in a folder of its
own, on the embedded defaults (SQLite, the embedded broker) unless it measures PostgreSQL
or Redis. Exit code 0 and a line of figures are asked for, never a speed: these are smoke
runs, not measurements.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from config.variables import BY_NAME
from tests.support.services import missing

ROOT = Path(__file__).resolve().parents[2]
PERF = ROOT / "perf"


def bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This shell's environment less mleboard's configuration: the script's own var folder,
    SQLite and the embedded broker."""
    env = {k: v for k, v in os.environ.items() if k not in BY_NAME or BY_NAME[k].internal}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    for name in ("HOME", "PATH", "LANG", "TMPDIR", "XDG_CACHE_HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
    return {
        **env,
        "MLEBOARD_VAR_DIR": str(tmp_path / "var"),
        "SECRET_KEY": "perf-smoke-only-key",
        "PYTHONPATH": str(ROOT),
        **extra,
    }


def run_script(
    name: str, *args: str, env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess:
    start = ["-m", f"perf.{name}"] if (PERF / name).is_dir() else [str(PERF / name)]
    done = subprocess.run(
        [sys.executable, *start, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, (
        f"{name} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    )
    assert re.search(r"\d", done.stdout), done.stdout
    return done


SMOKE = {
    "aggregate_bench.py": ["--quick"],
    "catalogue_bench.py": ["--rows", "50", "spaceship-titanic", "aerial-cactus-identification"],
    "grading_bench.py": ["--rows", "1000", "--metrics", "accuracy"],
    "integrity_bench.py": ["--runs", "3", "--references", "2", "--lines", "30"],
    "explorer_bench.py": ["--experiments", "2", "--seeds", "1", "--requests", "1"],
    "runner_bench.py": ["--runs", "1", "--backend", "local"],
    "agent_run_bench.py": ["--seeds", "1", "--backend", "local"],
    "broker_soak.py": ["--tasks", "60", "--ping-interval", "0.5"],
    "peer_similarity_bench.py": [],
    "rank_ranges_bench.py": ["--experiments", "3", "--seeds", "1", "--requests", "1"],
    "stop_bench.py": ["--rounds", "1"],
}


def test_every_script_has_a_smoke_run():
    scripts = {p.name for p in PERF.glob("*.py")} | {
        p.parent.name for p in PERF.glob("*/__main__.py")
    }
    covered = set(SMOKE) | {
        "pages_bench.py",
        "load_bench.py",
        "hosts_sim.py",
        "drill",
        "million_bench.py",
        "submit_bench.py",
        "page_cache_bench.py",
    }
    assert scripts == covered, scripts ^ covered


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMOKE))
def test_script_runs_at_tiny_sizes(name, tmp_path):
    run_script(name, *SMOKE[name], env=bare_env(tmp_path))


@pytest.mark.slow
def test_pages_bench_on_a_migrated_site(tmp_path):
    env = bare_env(tmp_path)
    # As `make setup` leaves it: collectstatic writes the manifest the pages' static URLs
    # come from. (The three commands in one process: Django starts once.)
    setup = (
        "from django.core.management import call_command\n"
        "call_command('migrate', interactive=False, verbosity=0)\n"
        "call_command('load_catalogue')\n"
        "call_command('collectstatic', interactive=False, verbosity=0)\n"
    )
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", setup],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "webapp.project.settings"},
        check=True,
        capture_output=True,
        timeout=300,
    )
    out = run_script("pages_bench.py", "--requests", "1", env=env).stdout
    assert "competitions" in out


@pytest.mark.slow
def test_load_bench_tiny(tmp_path):
    run_script(
        "load_bench.py",
        "--experiments",
        "6",  # compare pages pick 4 of the first 6
        "--seeds",
        "1",
        "--clients",
        "2",
        "--workers",
        "1",
        "--warmup",
        "0.5",
        "--seconds",
        "1",
        "--configs",
        "off",
        env=bare_env(tmp_path),
    )


@pytest.mark.slow
def test_page_cache_bench_tiny(tmp_path):
    out = run_script(
        "page_cache_bench.py",
        "--experiments",
        "2",
        "--urls",
        "60",
        "--searches",
        "20",
        "--uploads",
        "1",
        "--clients",
        "2",
        "--seconds",
        "1",
        env=bare_env(tmp_path),
        timeout=900,
    ).stdout
    assert "public versions changed: 0" in out and "memory bounded: True" in out


@pytest.mark.slow
def test_hosts_sim_tiny(tmp_path):
    run_script(
        "hosts_sim.py",
        "--competitions",
        "2",
        "--cpu-seeds",
        "1",
        "--gpu-seeds",
        "1",
        "--time-limit",
        "60",
        "--stale-after",
        "4",
        "--reaper-interval",
        "1",
        "--kill",
        "",
        "--deadline",
        "300",
        env=bare_env(tmp_path),
    )


@pytest.mark.slow
def test_drill_tiny_on_the_embedded_backend(tmp_path):
    run_script(
        "drill",
        "--backend",
        "embedded",
        "--drill",
        "worker",
        "--seeds",
        "1",
        "--stale-after",
        "4",
        "--reaper-interval",
        "1",
        "--fault-delay",
        "0.5",
        "--pad-mb",
        "1",
        "--deadline",
        "180",
        "--spool-wait-max",
        "0",
        env=bare_env(tmp_path),
        timeout=900,
    )


@pytest.mark.slow
@pytest.mark.services
def test_drill_database_on_a_private_cluster(tmp_path):
    """PostgreSQL stopped mid-grading (a cluster of the drill's own): 503s or cached pages,
    never a 500, and every run graded once after it is back."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        broker_port = s.getsockname()[1]
    out = run_script(
        "drill",
        "--backend",
        "pg-redis",
        "--drill",
        "database",
        "--seeds",
        "2",
        "--fault-delay",
        "1",
        "--database-down",
        "5",
        "--redis-port",
        str(broker_port),
        "--spool-wait-max",
        "0",
        env=bare_env(tmp_path),
        timeout=900,
    ).stdout
    assert "ALL INVARIANTS HOLD" in out and "POST /api/uploads/ 503" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend", ["embedded", pytest.param("pg-redis", marks=pytest.mark.services)]
)
def test_drill_disk_tiny(backend, tmp_path, postgres):
    """The media folder on a small tmpfs the drill mounts (root only): the upload bigger
    than it gets 507, no partial file and no held space stay, the ordinary uploads after it
    are graded once. Where no tmpfs can be mounted (not root) the drill says so, and the
    test fails with its reason."""
    extra = []
    if backend == "pg-redis":
        url = postgres("drill_disk")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            extra = ["--redis-port", str(s.getsockname()[1]), "--database-url", url]
    out = run_script(
        "drill",
        "--backend",
        backend,
        "--drill",
        "disk",
        "--seeds",
        "1",
        "--fault-delay",
        "1",
        "--disk-mib",
        "6",
        "--big-mb",
        "8",
        "--after-uploads",
        "1",
        "--spool-wait-max",
        "0",
        *extra,
        env=bare_env(tmp_path),
        timeout=900,
    ).stdout
    if "disk: skipped" in out:
        missing(out.split("disk: skipped, ", 1)[1].splitlines()[0])
    assert "ALL INVARIANTS HOLD" in out, out[-3000:]
    assert re.search(r"big upload \(\d+\.\d MB\): 507 ", out), out[-3000:]


@pytest.mark.slow
@pytest.mark.services
def test_million_bench_tiny_on_postgresql(tmp_path, postgres):
    url = postgres("million")
    run_script(
        "million_bench.py",
        "--experiments",
        "2",
        "--reports",
        "300",
        "--jobs",
        "1",
        "--requests",
        "1",
        env=bare_env(tmp_path, DATABASE_URL=url),
        timeout=900,
    )


@pytest.mark.slow
@pytest.mark.services
def test_submit_bench_tiny_on_postgresql(tmp_path, postgres):
    url = postgres("submit_bench")
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = run_script(
        "submit_bench.py",
        "--gib",
        "0.02",
        "--chunk-size",
        "1",
        "--workers",
        "1",
        "--port",
        str(port),
        "--database-url",
        url,
        env=bare_env(tmp_path),
        timeout=600,
    ).stdout
    assert "peak resident memory" in out
