"""Fixtures of the browser tests that span the site."""

import pytest
from django.core.management import call_command

from tests.support.factories import write_runs_folder
from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync, leaderboard_store
from webapp.results.models import Experiment


@pytest.fixture
def site(tmp_path):
    from benchmark.leaderboard import LeaderboardTable

    catalogue_sync()
    runs = write_runs_folder(tmp_path / "runs", {"aide-o1": 3})
    call_command(
        "import_grading_reports",
        str(runs),
        experiments=runs / "run_group_experiments.csv",
        publish=True,
    )
    comp = Competition.objects.get(slug="spaceship-titanic")
    scores = tuple(round(0.85 - i * 0.002, 5) for i in range(150))
    leaderboard_store(
        comp,
        LeaderboardTable(scores, (None,) * 150, (None,) * 150, (None,) * 150, "mlebench", False),
        source_name="test",
    )
    return Experiment.objects.get(name="aide-o1")
