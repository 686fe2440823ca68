"""The leaderboard with rank ranges at 200 experiments × 75 competitions × 5 seeds: the
reports imported (each experiment's figures, intervals and replicates computed once),
then the median and p90 server time of the leaderboard's page and API with the page
cache off, on the default ranking split and another one asked for (method:
docs/benchmarks.md). PostgreSQL in a database of its own, dropped and created (never
``mleboard``); without DATABASE_URL a fresh SQLite file (for a smoke run):

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/mleboard_ranks \\
        .venv/bin/python perf/rank_ranges_bench.py [--experiments 200] [--seeds 5]
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from config import env, is_set

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))

TARGET_P90_MS = 150


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--experiments", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=(os.cpu_count() or 1) + 1)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="mleboard-ranks-"))
    database = env("DATABASE_URL") if is_set("DATABASE_URL") else ""
    if database:
        name = urlsplit(database).path.lstrip("/")
        if not database.startswith("postgres") or name in ("", "mleboard"):
            raise SystemExit("set DATABASE_URL to a PostgreSQL database of the bench's own")
        from drill.database import recreate_pg_database

        recreate_pg_database(database)
    else:
        args.jobs = 1  # one SQLite writer
    os.environ["MLEBOARD_VAR_DIR"] = str(work / "var")
    os.environ["MLEBOARD_PAGE_CACHE"] = "0"
    os.environ.setdefault("SECRET_KEY", "bench-only-key")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.project.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from million_bench import write_runs

    from benchmark.catalogue import competitions_in_split
    from webapp.results.imports.reports import import_runs_folder
    from webapp.results.models import FigureReplicates

    call_command("collectstatic", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    call_command("load_catalogue", verbosity=0)

    competition_ids = [c.id for c in competitions_in_split("all")]
    runs = work / "runs"
    runs.mkdir(parents=True)
    write_runs(runs, [args.seeds] * args.experiments, competition_ids)
    started = time.perf_counter()
    result = import_runs_folder(
        runs, runs / "run_group_experiments.csv", publish=True, jobs=args.jobs
    )
    print(
        f"{len(result.experiments)} experiments × {len(competition_ids)} competitions × "
        f"{args.seeds} seeds = {result.reports:,} reports imported with their figures and "
        f"replicates in {time.perf_counter() - started:.0f} s "
        f"({FigureReplicates.objects.count():,} vectors stored)"
    )
    time_pages(args.requests)
    shutil.rmtree(work, ignore_errors=True)


def time_pages(requests: int) -> None:
    from django.test import Client

    client = Client()
    pages = {
        "leaderboard / (ranked on all)": "/",
        "leaderboard /?split=low": "/?split=low",
        "leaderboard, clean subset": "/?clean=1",
        "API leaderboard": "/api/leaderboard/",
        "API leaderboard ?split=lite": "/api/leaderboard/?split=lite",
    }
    print(f"\n{'page (cache off)':32} {'p50 ms':>8} {'p90 ms':>8} {'target p90':>11}")
    for label, url in pages.items():
        response = client.get(url)  # warm
        assert response.status_code == 200, (url, response.status_code)
        times = []
        for _ in range(requests):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            assert "X-Page-Cache" not in response.headers
            times.append(float(response["Server-Timing"].split("dur=")[1]))
        times.sort()
        p90 = times[int(0.9 * (len(times) - 1))]
        print(f"{label:32} {statistics.median(times):8.1f} {p90:8.1f} {TARGET_P90_MS:>11}")
    entries = client.get("/api/leaderboard/").json()["entries"]
    ranked = [e for e in entries if e.get("rank_low") is not None]
    tied = sum(1 for e in ranked if e["tied"])
    print(f"\n{len(ranked)} entries ranked with a range, {tied} of them tied with another")


if __name__ == "__main__":
    main()
