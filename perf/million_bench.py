"""A million grading reports: import them, then time the pages that read them (the import
from folder to last figure; median and p90 server time of each page with the page cache
off; method: docs/benchmarks.md). PostgreSQL only, in a database of its own, dropped and
created (never ``mleboard``):

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/mleboard_million \\
        .venv/bin/python perf/million_bench.py [--reports 1000000] [--jobs 2] [--runs DIR]

``--runs DIR`` keeps the generated folder there (and reuses it when it is complete).
``--pages-only`` times the pages of the database as it is (nothing dropped or imported).
"""

import argparse
import os
import random
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

TARGETS_MS = {
    "leaderboard /": 150,
    "experiment page": 150,
    "experiment, one's seeds": 150,
    "compare (2 experiments)": 400,
}


def seeds_per_experiment(n_experiments: int, n_competitions: int, n_reports: int) -> list[int]:
    """Seeds of each experiment so that the reports come to ``n_reports`` (rounded up to
    whole run groups), the larger counts first."""
    groups = -(-n_reports // n_competitions)
    base, extra = divmod(groups, n_experiments)
    return [base + 1 if i < extra else base for i in range(n_experiments)]


def write_runs(root: Path, seeds: list[int], competition_ids: list[str]) -> int:
    """MLE-bench's runs/ layout (run_group_experiments.csv and one folder per run group
    with its grading report); returns the reports written."""
    from benchmark.reports import write_grading_report
    from tests.support.factories import synthetic_report

    rng = random.Random(7)
    lines = ["experiment_id,run_group"]
    n = 0
    for i, n_seeds in enumerate(seeds):
        experiment = f"agent-{i:03d}"
        for s in range(n_seeds):
            group = f"2024-10-01T12-00-00-GMT_run-group_{experiment}_{s}"
            reports = [synthetic_report(cid, rng) for cid in competition_ids]
            write_grading_report(
                root / group / "2024-10-01T13-00-00-GMT_grading_report.json", reports
            )
            lines.append(f"{experiment},{group}")
            n += len(reports)
    (root / "run_group_experiments.csv").write_text("\n".join(lines) + "\n")
    return n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--experiments", type=int, default=200)
    parser.add_argument("--reports", type=int, default=1_000_000)
    # One more process than CPUs: each waits on PostgreSQL for part of its time.
    parser.add_argument("--jobs", type=int, default=(os.cpu_count() or 1) + 1)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--runs", type=Path, default=None, help="keep the runs/ folder here")
    parser.add_argument(
        "--pages-only", action="store_true", help="time the pages of the database as it is"
    )
    args = parser.parse_args()

    database = env("DATABASE_URL") if is_set("DATABASE_URL") else ""
    name = urlsplit(database).path.lstrip("/")
    if not database.startswith("postgres") or name in ("", "mleboard"):
        raise SystemExit(
            "set DATABASE_URL to a PostgreSQL database of the bench's own, "
            "e.g. postgresql://postgres@127.0.0.1:5432/mleboard_million"
        )
    if not args.pages_only:
        from drill.database import recreate_pg_database

        recreate_pg_database(database)
    work = Path(tempfile.mkdtemp(prefix="mleboard-million-"))
    os.environ["MLEBOARD_VAR_DIR"] = str(work / "var")
    os.environ["MLEBOARD_PAGE_CACHE"] = "0"
    os.environ.setdefault("SECRET_KEY", "bench-only-key")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.project.settings")
    import signal

    import django

    # A TERM ends the import through its clean-up (the processes it started go with it).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    django.setup()
    from django.core.management import call_command

    from benchmark.catalogue import competitions_in_split
    from benchmark.leaderboard import LeaderboardTable
    from webapp.competitions.models import Competition
    from webapp.competitions.services import leaderboard_store
    from webapp.results.imports.reports import import_runs_folder
    from webapp.results.models import Experiment, GradeReport

    # The pages link the static files by their hashed names, from collectstatic's manifest.
    call_command("collectstatic", interactive=False, verbosity=0)
    if args.pages_only:
        ids = list(
            Experiment.objects.filter(name__startswith="agent-")
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        print(f"{GradeReport.objects.count():,} reports, {len(ids)} experiments")
        time_pages(ids, args.requests)
        return
    call_command("migrate", verbosity=0)
    call_command("load_catalogue", verbosity=0)

    competition_ids = [c.id for c in competitions_in_split("all")]
    seeds = seeds_per_experiment(args.experiments, len(competition_ids), args.reports)
    runs = args.runs or work / "runs"
    expected = sum(seeds) * len(competition_ids)
    csv_path = runs / "run_group_experiments.csv"
    if csv_path.is_file() and len(csv_path.read_text().splitlines()) == sum(seeds) + 1:
        print(f"reusing {runs}")
    else:
        shutil.rmtree(runs, ignore_errors=True)
        runs.mkdir(parents=True)
        started = time.perf_counter()
        write_runs(runs, seeds, competition_ids)
        print(
            f"wrote {expected:,} reports in {sum(seeds):,} run groups: {time.perf_counter() - started:.0f} s"
        )

    # Human leaderboards first, as a site has them before results arrive.
    scores = tuple(round(0.85 - i * 0.0001, 5) for i in range(1967))
    none = (None,) * len(scores)
    leaderboard_store(
        Competition.objects.get(slug="spaceship-titanic"),
        LeaderboardTable(scores, none, none, none, "mlebench", False),
        source_name="bench",
    )

    print(f"importing with {args.jobs} processes on {os.cpu_count()} CPUs ...", flush=True)
    started, cpu_before = time.perf_counter(), os.times()
    result = import_runs_folder(runs, csv_path, publish=True, jobs=args.jobs)
    elapsed, cpu_after = time.perf_counter() - started, os.times()
    cpu = sum(
        getattr(cpu_after, f) - getattr(cpu_before, f)
        for f in ("user", "system", "children_user", "children_system")
    )
    n = GradeReport.objects.count()
    assert n == result.reports == expected, (n, result.reports, expected)
    with_figures = Experiment.objects.filter(
        aggregate__isnull=False, figures_due_since__isnull=True
    ).count()
    print(
        f"imported {n:,} reports, {len(result.experiments)} experiments "
        f"({with_figures} with their figures) in {elapsed:.0f} s ({n / elapsed:,.0f} reports/s); "
        f"target < 300 s"
    )
    print(
        f"  CPU of the import's processes: {cpu:.0f} s (PostgreSQL's not counted); "
        f"load average after: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )

    time_pages(result.experiments, args.requests)
    shutil.rmtree(work, ignore_errors=True)


def time_pages(ids: list[int], requests: int) -> None:
    from django.test import Client

    from webapp.results.models import GradeReport

    client = Client()
    middle = ids[len(ids) // 2]
    one = (
        GradeReport.objects.filter(experiment_id=middle)
        .order_by("competition__slug")
        .values_list("competition__slug", flat=True)
        .first()
    )
    pages = {
        "leaderboard /": "/",
        "leaderboard, clean subset": "/?clean=1",
        "experiment page": f"/experiments/{middle}/",
        "experiment, one's seeds": f"/experiments/{middle}/?seeds={one}",
        "compare (2 experiments)": f"/compare/?experiments={ids[0]},{ids[1]}",
        "compare (4 experiments)": f"/compare/?experiments={','.join(map(str, ids[:4]))}",
        "competition page": "/competitions/spaceship-titanic/",
        "API leaderboard": "/api/leaderboard/",
        "API experiment": f"/api/experiments/{ids[0]}/",
    }
    print(f"\nload average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"\n{'page (cache off)':28} {'median ms':>10} {'p90 ms':>8} {'target':>7} {'bytes':>10}")
    for label, url in pages.items():
        client.get(url)  # warm
        times, size = [], 0
        for _ in range(requests):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            assert "X-Page-Cache" not in response.headers
            times.append(float(response["Server-Timing"].split("dur=")[1]))
            size = len(response.content)
        times.sort()
        p90 = times[int(0.9 * (len(times) - 1))]
        target = TARGETS_MS.get(label)
        print(
            f"{label:28} {statistics.median(times):10.1f} {p90:8.1f} "
            f"{target if target else '':>7} {size:10,}"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
