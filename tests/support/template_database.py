"""The test databases of one run, on PostgreSQL, made from one migrated template.

Migrating a test database costs each test process ~5 s of CPU (plus PostgreSQL's own); six
processes starting together spent half a minute of both cores doing the same work. Here the
first process of a run to need a database migrates a template (under an advisory lock, so
the others wait for it instead of migrating too), and every process's test database is a
copy of it (``CREATE DATABASE … TEMPLATE``, a file copy). The template belongs to the run:
its name carries a token the main process makes and hands to its workers (with the time it
was made), and the main process drops it at the end; a template whose run was killed first is
dropped by the first run that builds one a day later (``STALE_AFTER_S``). On SQLite,
pytest-django's own set-up is used unchanged.
"""

from __future__ import annotations

import re
import time
import uuid
import zlib

import pytest

WORKERINPUT_KEY = "mleboard_template_database"
# Where the run's token is kept on the config of the process that made it.
TOKEN = pytest.StashKey[str]()
# A run lasts minutes (CI allows 90): a template older than this was left by a killed run.
STALE_AFTER_S = 24 * 3600


def run_token(config: pytest.Config) -> str:
    """This run's token: made by the main process, handed to each worker."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and WORKERINPUT_KEY in workerinput:
        return workerinput[WORKERINPUT_KEY]
    if TOKEN not in config.stash:
        config.stash[TOKEN] = f"{int(time.time())}_{uuid.uuid4().hex[:6]}"
    return config.stash[TOKEN]


def on_postgresql() -> bool:
    from django.conf import settings

    return settings.DATABASES["default"]["ENGINE"].endswith("postgresql")


def template_name(token: str) -> str:
    """The template's name: the site's database name and the run's token (with the
    ``_building`` suffix, within PostgreSQL's 63 characters)."""
    return f"{_template_prefix()}{token}"


def _template_prefix() -> str:
    from django.conf import settings

    return f"{settings.DATABASES['default']['NAME'][:24]}_template_"


def drop_stale_templates(cursor, prefix: str, now: float) -> list[str]:
    """Drop the templates (and half-built ones) named ``prefix<time>_…`` made more than
    ``STALE_AFTER_S`` before ``now``: left by runs killed before their end. ``cursor``: any
    DB-API cursor on the server. Returns their names."""
    cursor.execute("SELECT datname FROM pg_database WHERE starts_with(datname, %s)", [prefix])
    stale = []
    for (name,) in cursor.fetchall():
        made = re.match(r"(\d+)_", name[len(prefix) :])
        if made and now - int(made.group(1)) > STALE_AFTER_S:
            quoted = '"' + name.replace('"', '""') + '"'
            cursor.execute(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")
            stale.append(name)
    return sorted(stale)


def _lock_key(name: str) -> int:
    """A 32-bit key for ``pg_advisory_lock``, the same in every process."""
    return zlib.crc32(name.encode())


def set_up(token: str, verbosity: int):
    """Make this process's test database from the run's template (migrating the template
    first if no process has yet). Returns what ``teardown_databases`` takes."""
    from django.conf import settings
    from django.db import connections

    connection = connections["default"]
    creation = connection.creation
    quote = connection.ops.quote_name
    old_name = connection.settings_dict["NAME"]
    test_name = creation._get_test_db_name()
    template = template_name(token)
    with creation._nodb_cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [_lock_key(template)])
        try:
            if not creation._database_exists(cursor, template):
                drop_stale_templates(cursor, _template_prefix(), time.time())
                _migrate_template(connection, template, verbosity)
            cursor.execute(f"DROP DATABASE IF EXISTS {quote(test_name)}")
            cursor.execute(f"CREATE DATABASE {quote(test_name)} TEMPLATE {quote(template)}")
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_lock_key(template)])
    settings.DATABASES["default"]["NAME"] = test_name
    connection.settings_dict["NAME"] = test_name
    connection.ensure_connection()
    return [(connection, old_name, True)]


def _migrate_template(connection, template: str, verbosity: int) -> None:
    """Migrate a database under a name of its own and rename it to ``template`` once
    done, so a template that exists is always whole (a process killed half-way leaves
    only the ``_building`` one, dropped by the next attempt)."""
    from django.conf import settings

    quote = connection.ops.quote_name
    building = f"{template}_building"
    old_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict["TEST"]
    old_test_name = test_settings.get("NAME")
    test_settings["NAME"] = building
    try:
        connection.creation.create_test_db(
            verbosity=verbosity, autoclobber=True, serialize=False, keepdb=False
        )
    finally:
        test_settings["NAME"] = old_test_name
        connection.close()
        connection.close_pool()
        settings.DATABASES["default"]["NAME"] = old_name
        connection.settings_dict["NAME"] = old_name
    with connection.creation._nodb_cursor() as cursor:
        cursor.execute(f"ALTER DATABASE {quote(building)} RENAME TO {quote(template)}")


def drop(token: str) -> None:
    """Drop the run's template (the main process, at the end of the run)."""
    from django.db import connections

    connection = connections["default"]
    with connection.creation._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(template_name(token))}")
