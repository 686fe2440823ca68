from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from webapp.accounts.tokens import token_create


class Command(BaseCommand):
    help = (
        "Make a named API token for USER and print it on the last line (shown once; only its "
        "digest is stored). Revoke it on the API tokens page or in the admin."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="made with create_token")

    def handle(self, *args, username, name, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        row, token = token_create(user, name)
        self.stdout.write(f"API token {row.name!r} for {user.username} (shown once):")
        self.stdout.write(token)
