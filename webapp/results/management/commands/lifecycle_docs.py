from pathlib import Path

from django.core.management.base import BaseCommand

from webapp.work.docs import lifecycle_markdown


class Command(BaseCommand):
    help = "Print the declared lifecycle of each kind of work as Markdown, or --write it."

    def add_arguments(self, parser):
        parser.add_argument("--write", metavar="PATH", help="write it here (docs/lifecycle.md)")

    def handle(self, *args, write=None, **options):
        text = lifecycle_markdown()
        if write:
            Path(write).write_text(text)
            self.stdout.write(f"wrote {write}")
        else:
            self.stdout.write(text, ending="")
