from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from webapp.integrity.references import ReferencesRefused, read_references_zip
from webapp.integrity.services import corpus_create, corpus_import_folder


class Command(BaseCommand):
    help = (
        "Store reference code for a competition's plagiarism check: a folder or a zip of "
        ".py, .ipynb (code cells) and .R files, with an optional sources.csv (path, source). "
        "Each import that changes the code is a new version; the competition's graded runs "
        "are checked again against it."
    )

    def add_arguments(self, parser):
        parser.add_argument("competition", help="The competition id, e.g. spaceship-titanic.")
        parser.add_argument("path", type=Path, help="A folder or a .zip of reference code.")
        parser.add_argument("--note", default="", help="Where the code comes from.")

    def handle(self, *args, competition: str, path: Path, note: str, **options):
        from webapp.competitions.models import Competition

        if not Competition.objects.filter(slug=competition).exists():
            raise CommandError(f"no competition {competition!r}: load the catalogue first")
        try:
            if path.is_dir():
                corpus, added = corpus_import_folder(competition, path, note)
            elif path.is_file():
                with path.open("rb") as handle:
                    entries = read_references_zip(handle, note)
                corpus = corpus_create(
                    Competition.objects.get(slug=competition),
                    entries,
                    source_name=path.name,
                    note=note,
                )
                added = True
            else:
                raise CommandError(f"{path} is neither a folder nor a file")
        except ReferencesRefused as exc:
            raise CommandError(str(exc)) from None
        state = "stored" if added else "unchanged (same files as the current version)"
        self.stdout.write(f"{corpus}: {corpus.files.count()} files {state}")
