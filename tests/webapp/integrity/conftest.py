"""Fixtures of the integrity checks' tests."""

import pytest


@pytest.fixture
def catalogue():
    """The catalogue's competitions in the database."""
    from webapp.competitions.services import catalogue_sync

    catalogue_sync()
