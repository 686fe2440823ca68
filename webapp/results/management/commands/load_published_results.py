from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

import benchmark
from benchmark.published import PublishedTableError, entries_from_yaml, read_readme_leaderboard
from webapp.results.services import published_entries_store

DEFAULT = Path(benchmark.__file__).parent / "data" / "published_results.yaml"


class Command(BaseCommand):
    help = (
        "Enter MLE-bench's published leaderboard (Any Medal % per split) as reported entries: "
        "the shipped copy, a YAML file, or an MLE-bench README.md."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--file",
            type=Path,
            default=DEFAULT,
            help="published_results.yaml (default: the shipped copy) or MLE-bench's README.md",
        )

    def handle(self, *args, file: Path, **options):
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from None
        try:
            entries = (
                read_readme_leaderboard(text)
                if file.suffix.lower() == ".md"
                else entries_from_yaml(text)
            )
        except (PublishedTableError, KeyError, TypeError, ValueError) as exc:
            raise CommandError(f"{file.name}: {exc}") from None
        created, updated, removed = published_entries_store(entries)
        self.stdout.write(
            f"published results: {len(entries)} entries ({created} created, {updated} updated, "
            f"{removed} no longer published removed)"
        )
