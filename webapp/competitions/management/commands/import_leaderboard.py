from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.leaderboard import LeaderboardError
from webapp.competitions.models import Competition
from webapp.competitions.services import leaderboard_import_file


class Command(BaseCommand):
    help = "Import a human private leaderboard (MLE-bench leaderboard.csv or Kaggle's download) for one competition."

    def add_arguments(self, parser):
        parser.add_argument("competition")
        parser.add_argument("path", type=Path)
        parser.add_argument("--note", default="")

    def handle(self, *args, competition: str, path: Path, note: str, **options):
        try:
            comp = Competition.objects.get(slug=competition)
        except Competition.DoesNotExist:
            raise CommandError(
                f"unknown competition {competition!r}: run load_catalogue first?"
            ) from None
        try:
            board = leaderboard_import_file(comp, path, note=note)
        except LeaderboardError as exc:
            raise CommandError(str(exc)) from None
        for warning in board.warnings:
            self.stderr.write(f"warning: {warning}")
        lines = {
            name: "none" if value is None else f"{value:.10g}"
            for name, value in (
                ("gold", board.gold_threshold),
                ("silver", board.silver_threshold),
                ("bronze", board.bronze_threshold),
                ("median", board.median_threshold),
            )
        }
        self.stdout.write(
            f"{comp.slug}: leaderboard v{board.version}, {board.n_teams} teams; "
            + ", ".join(f"{name} {value}" for name, value in lines.items())
        )
