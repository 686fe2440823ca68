from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from webapp.competitions.familiarity import (
    MAX_TEXT_BYTES,
    FamiliarityRefused,
    familiarity_text_add,
)
from webapp.competitions.models import Competition


class Command(BaseCommand):
    help = (
        "Add texts to a competition's familiarity besides its description (for example its "
        "most-read discussion posts, one UTF-8 file each). A file whose name the competition "
        "already has replaces that text. Measure them with compute_familiarity."
    )

    def add_arguments(self, parser):
        parser.add_argument("competition")
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")

    def handle(self, *args, competition: str, files: list[Path], **options):
        target = Competition.objects.filter(slug=competition).first()
        if target is None:
            raise CommandError(f"{competition!r} is not a competition of this site")
        for path in files:
            if not path.is_file():
                raise CommandError(f"{path}: not a file")
            if path.stat().st_size > MAX_TEXT_BYTES:  # refused before it is read
                raise CommandError(f"{path}: larger than {MAX_TEXT_BYTES // 1024**2} MiB")
            try:
                row = familiarity_text_add(target, path.name, path.read_bytes())
            except FamiliarityRefused as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"{competition}: {row.name} ({len(row.text):,} characters)")
