"""The run's template database (tests/support/template_database.py): one left by a run killed before
its end is dropped a day later by the next run that builds one; a recent one (another run's,
still going) is left alone."""

import time
import uuid
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.support.template_database import STALE_AFTER_S, drop_stale_templates

pytestmark = pytest.mark.services


def test_templates_of_killed_runs_are_dropped_and_current_ones_kept(postgres):
    admin = urlunsplit(urlsplit(postgres("unused"))._replace(path="/postgres"))
    prefix = f"t{uuid.uuid4().hex[:8]}_template_"
    now = time.time()
    old, recent = int(now - STALE_AFTER_S - 60), int(now - 600)
    names = {
        "killed": f"{prefix}{old}_aaaaaa",
        "half-built": f"{prefix}{old}_bbbbbb_building",
        "running": f"{prefix}{recent}_cccccc",
    }
    with psycopg.connect(admin, autocommit=True) as conn:
        for name in names.values():
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            dropped = drop_stale_templates(conn.cursor(), prefix, now)
            left = {
                row[0]
                for row in conn.execute(
                    "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", [prefix]
                )
            }
        finally:
            for name in names.values():
                conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
    assert dropped == sorted([names["killed"], names["half-built"]])
    assert left == {names["running"]}
