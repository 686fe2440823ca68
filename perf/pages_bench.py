"""Server time of the site's pages on the database configured (the demo after
`make run` or `make setup`): median and p90 of N requests, read from the Server-Timing
header every response carries.

    python perf/pages_bench.py [--requests 20]
"""

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.project.settings")
    import django

    django.setup()
    from django.test import Client

    from webapp.competitions.models import Competition
    from webapp.results.models import Experiment

    experiment = (
        Experiment.objects.filter(is_published=True, aggregate__isnull=False).order_by("pk").first()
    )
    competition = Competition.objects.filter(leaderboards__is_current=True).order_by("slug").first()
    pages = {"home /": "/", "competitions": "/competitions/"}
    if competition:
        pages[f"competition {competition.slug}"] = competition.get_absolute_url()
    if experiment:
        pages[f"experiment {experiment.pk}"] = experiment.get_absolute_url()
    client = Client()
    print(f"{'page':40} {'median ms':>10} {'p90 ms':>8}")
    for label, url in pages.items():
        client.get(url)
        times = []
        for _ in range(args.requests):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            times.append(float(response["Server-Timing"].split("dur=")[1]))
        times.sort()
        print(
            f"{label:40} {statistics.median(times):10.1f} {times[int(0.9 * (len(times) - 1))]:8.1f}"
        )


if __name__ == "__main__":
    main()
