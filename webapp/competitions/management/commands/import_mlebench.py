from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.mlebench_checkout import CheckoutError, read_mlebench_checkout
from webapp.competitions.services import mlebench_import_competition


class Command(BaseCommand):
    help = (
        "Import an MLE-bench checkout: descriptions, leaderboards and split lists of every "
        "competition. Each competition lands whole or not at all; Git-LFS pointers are reported."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "path", type=Path, help="The MLE-bench repository (after `git lfs pull`)."
        )
        parser.add_argument(
            "--competition", action="append", dest="competitions", help="Only these ids."
        )

    def handle(self, *args, path: Path, competitions=None, **options):
        try:
            checkout = read_mlebench_checkout(path, competition_ids=competitions)
        except CheckoutError as exc:
            raise CommandError(str(exc)) from None
        for message in checkout.messages:
            self.stderr.write(f"note: {message}")
        counts: dict[str, int] = {}
        for outcome in checkout.competitions:
            line = mlebench_import_competition(outcome)
            counts[line.status] = counts.get(line.status, 0) + 1
            (self.stdout if line.status == "imported" else self.stderr).write(line.text)
        if checkout.missing_competitions:
            self.stderr.write(
                f"{len(checkout.missing_competitions)} catalogue competitions have no folder in this checkout"
            )
        self.stdout.write(
            "summary: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        )
