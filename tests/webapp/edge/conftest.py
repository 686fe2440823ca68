"""Fixtures of the serving layer's tests."""

import pytest

from webapp.edge import page_cache


@pytest.fixture
def page_cache_on(settings):
    """The page cache on and empty around a test (the suite runs with it off)."""
    settings.MLEBOARD_PAGE_CACHE = True
    page_cache.clear()
    page_cache.changed()
    yield
    page_cache.clear()
