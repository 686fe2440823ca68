"""What a test does when something it needs is not here (the right to mount a
filesystem, say): it fails, with what is missing and how to get it. Never a skip, which
would pass for a test that proved nothing; the suite skips nothing
(the house rule ``skipped-test``, tools/house_rules/rules.py)."""

from __future__ import annotations

from typing import NoReturn

import pytest


def missing(what: str) -> NoReturn:
    """Stop the test as failed: ``what`` the test needs is not here."""
    pytest.fail(f"this test cannot run here: {what}")
