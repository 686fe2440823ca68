"""Lives with integrity, the app on top: one command fills competitions, the published
results and the reference corpora (webapp's apps import downwards, tests/test_import_arrows.py)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.mlebench_checkout import CheckoutError, read_mlebench_checkout
from benchmark.published import PublishedTableError, read_readme_leaderboard
from webapp.competitions.services import mlebench_import_competition
from webapp.results.services import published_entries_store


class Command(BaseCommand):
    help = (
        "Import an MLE-bench checkout: descriptions, leaderboards and split lists of every "
        "competition, and the published leaderboard of its README. Each competition lands "
        "whole or not at all; Git-LFS pointers are reported."
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
        self._references(path / "mlebench" / "competitions", checkout.competitions)
        if checkout.missing_competitions:
            self.stderr.write(
                f"{len(checkout.missing_competitions)} catalogue competitions have no folder in this checkout"
            )
        self.stdout.write(
            "summary: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        )
        self._published_leaderboard(path / "README.md")

    def _references(self, competitions_dir: Path, outcomes) -> None:
        """A competition folder's ``references/`` (reference code for the plagiarism
        check: .py, .ipynb, .R and an optional sources.csv) becomes its current reference
        corpus; an unchanged one adds no version."""
        from webapp.integrity.references import ReferencesRefused
        from webapp.integrity.services import corpus_import_folder

        for outcome in outcomes:
            folder = competitions_dir / outcome.competition_id / "references"
            if outcome.status == "refused" or not folder.is_dir():
                continue
            try:
                corpus, added = corpus_import_folder(outcome.competition_id, folder)
            except ReferencesRefused as exc:
                self.stderr.write(f"{outcome.competition_id}: references not imported: {exc}")
                continue
            if corpus is None:
                continue
            what = "imported" if added else "unchanged"
            self.stdout.write(f"{corpus}: {corpus.files.count()} reference files {what}")

    def _published_leaderboard(self, readme: Path) -> None:
        """The README's leaderboard table becomes the published entries (one command to
        refresh them)."""
        if not readme.is_file():
            self.stderr.write("note: no README.md in the checkout: published leaderboard unchanged")
            return
        try:
            entries = read_readme_leaderboard(readme.read_text(encoding="utf-8"))
        except (PublishedTableError, UnicodeDecodeError) as exc:
            self.stderr.write(f"note: README.md leaderboard not read, nothing changed: {exc}")
            return
        created, updated, removed = published_entries_store(entries)
        self.stdout.write(
            f"published leaderboard: {len(entries)} entries from README.md ({created} created, "
            f"{updated} updated, {removed} no longer published removed)"
        )
