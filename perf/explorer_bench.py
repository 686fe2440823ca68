"""Load the explorer's target volume and time its pages.

200 experiments x 75 competitions x 5 seeds = 75,000 MLE-bench grading reports are
written as an MLE-bench ``runs/`` folder, loaded with ``import_grading_reports`` (timed),
and the leaderboard, an experiment page, the compare page and a competition page are
requested 20 times each; the median and p90 server time (the Server-Timing header) are
printed. Uses DATABASE_URL when set (PostgreSQL), else a fresh SQLite file.

    python perf/explorer_bench.py [--experiments 200] [--seeds 5] [--requests 20]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--experiments", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="mleboard-bench-"))
    os.environ.setdefault("MLEBOARD_VAR_DIR", str(work / "var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.project.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-key")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from tests.support.factories import write_runs_folder
    from webapp.competitions.models import Competition
    from webapp.competitions.services import leaderboard_store
    from webapp.results.models import Experiment, GradeReport

    if connection.vendor == "postgresql":
        # A clean slate in the bench's own database.
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    call_command("load_catalogue", verbosity=0)
    # The pages link the static files by their hashed names, from collectstatic's manifest.
    call_command("collectstatic", interactive=False, verbosity=0)
    print(f"database: {connection.vendor}")

    started = time.perf_counter()
    runs = write_runs_folder(
        work / "runs",
        {f"agent-{i:03d}": args.seeds for i in range(args.experiments)},
        split="all",
        seed=1,
    )
    print(f"wrote the runs folder: {time.perf_counter() - started:.1f} s")

    started = time.perf_counter()
    call_command(
        "import_grading_reports",
        str(runs),
        experiments=runs / "run_group_experiments.csv",
        publish=True,
        verbosity=0,
    )
    elapsed = time.perf_counter() - started
    n = GradeReport.objects.count()
    print(
        f"import_grading_reports: {n} reports in {elapsed:.1f} s ({n / elapsed:,.0f} reports/s, aggregates included)"
    )

    # A human leaderboard for the competition page.
    from benchmark.leaderboard import LeaderboardTable

    comp = Competition.objects.get(slug="spaceship-titanic")
    scores = tuple(round(0.85 - i * 0.0001, 5) for i in range(1967))
    none = (None,) * len(scores)
    leaderboard_store(
        comp, LeaderboardTable(scores, none, none, none, "mlebench", False), source_name="bench"
    )

    ids = list(Experiment.objects.order_by("pk").values_list("pk", flat=True))
    client = Client()
    pages = {
        "leaderboard /": "/",
        "leaderboard, clean subset": "/?clean=1",
        "experiment page": f"/experiments/{ids[len(ids) // 2]}/",
        "compare (2 experiments)": f"/compare/?experiments={ids[0]},{ids[1]}",
        "compare (4 experiments)": f"/compare/?experiments={','.join(str(i) for i in ids[:4])}",
        "competition page": "/competitions/spaceship-titanic/",
        "API experiment": f"/api/experiments/{ids[0]}/",
    }
    print(f"\n{'page':32} {'median ms':>10} {'p90 ms':>8} {'bytes':>9}")
    for label, url in pages.items():
        client.get(url)  # warm
        times, size = [], 0
        for _ in range(args.requests):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            times.append(float(response["Server-Timing"].split("dur=")[1]))
            size = len(response.content)
        times.sort()
        p90 = times[int(0.9 * (len(times) - 1))]
        print(f"{label:32} {statistics.median(times):10.1f} {p90:8.1f} {size:9,}")


if __name__ == "__main__":
    main()
