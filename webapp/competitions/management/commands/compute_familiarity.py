from django.core.management.base import BaseCommand, CommandError

from webapp.competitions.familiarity import (
    FamiliarityRefused,
    Status,
    familiarity_measure,
    familiarity_request,
)
from webapp.core.formatting import format_statistic


class Command(BaseCommand):
    help = (
        "Measure the base model's familiarity with competitions (all when none is named): "
        "the mean probability it gives the tokens of each competition's description and "
        "added texts, through MLEBOARD_FAMILIARITY_BASE_URL / _MODEL / _API_KEY. Texts "
        "already measured with this model are not measured again; failures are measured "
        "again. Each competition is reported: its value, or why it has none."
    )

    def add_arguments(self, parser):
        parser.add_argument("competitions", nargs="*", metavar="COMPETITION")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="Send the measurements to the workers (the grading queue) instead of "
            "measuring here and waiting.",
        )

    def handle(self, *args, competitions: list[str], queue: bool, **options):
        try:
            requested = familiarity_request(competitions or None, dispatch=queue)
        except FamiliarityRefused as exc:
            raise CommandError(str(exc)) from None
        failed = 0
        for item in requested:
            row = item.row
            if row is None:
                self.stdout.write(f"{item.competition_id}: skipped, {item.reason}")
                continue
            if not queue and row.status == Status.QUEUED:
                row = familiarity_measure(row.pk) or row
                row.refresh_from_db()
            if row.status == Status.DONE:
                self.stdout.write(
                    f"{item.competition_id}: {format_statistic(row.value, 4)} over "
                    f"{row.tokens:,} tokens of {len(row.texts)} text(s) ({row.model})"
                )
            elif row.status == Status.FAILED:
                failed += 1
                self.stdout.write(f"{item.competition_id}: failed, {row.error}")
            else:
                self.stdout.write(f"{item.competition_id}: {row.get_status_display().lower()}")
        if failed:
            raise CommandError(f"{failed} competition(s) could not be measured (reasons above)")
