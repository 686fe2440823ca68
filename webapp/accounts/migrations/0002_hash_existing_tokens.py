"""Tokens made before API tokens were named and hashed (``rest_framework.authtoken``, kept
in clear) become hashed tokens: the same string keeps working, and no clear copy stays."""

import hashlib

from django.db import migrations

LEGACY_NAME = "token from before named tokens (migrated)"


def hash_existing(apps, schema_editor):
    Token = apps.get_model("authtoken", "Token")
    ApiToken = apps.get_model("accounts", "ApiToken")
    for legacy in Token.objects.all().iterator():
        digest = hashlib.sha512(legacy.key.encode()).hexdigest()
        ApiToken.objects.get_or_create(
            digest=digest,
            defaults={"token_key": legacy.key[:15], "user_id": legacy.user_id, "name": LEGACY_NAME},
        )
        ApiToken.objects.filter(digest=digest).update(created=legacy.created)
    Token.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("authtoken", "0004_alter_tokenproxy_options"),
    ]

    operations = [migrations.RunPython(hash_existing, migrations.RunPython.noop)]
