from django.core.management.base import BaseCommand

from webapp.competitions.services import catalogue_sync


class Command(BaseCommand):
    help = "Create or update every competition of mleboard's catalogue (75 + dev + demo)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--no-demo", action="store_true", help="Leave the demo competitions out."
        )

    def handle(self, *args, no_demo: bool = False, **options):
        result = catalogue_sync(include_demo=not no_demo)
        self.stdout.write(
            f"catalogue: {len(result.created)} created, {len(result.updated)} updated"
        )
