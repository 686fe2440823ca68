"""Fixtures of the corrections log's tests."""

from __future__ import annotations

import pytest

from tests.support.corrections import SPLIT
from tests.support.factories import import_runs
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment


@pytest.fixture
def imported(tmp_path):
    """Two published experiments of imported reports on the demo split."""
    catalogue_sync()
    import_runs(tmp_path / "runs", {"a": 3, "b": 3}, split=SPLIT, seed=21)
    return tuple(Experiment.objects.order_by("pk"))
