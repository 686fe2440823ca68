"""Hourly snapshots (here: every second) of an agent's submission are graded like the
final one and drawn as Any Medal % against elapsed time on the experiment page."""

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission

from runner.spec import RunDirs
from tests.support.demo_builds import demo_site
from tests.support.polling import RELEASE, opened_for_writing, wait_until
from webapp.runs.models import AgentRun, SubmissionSnapshot
from webapp.runs.selectors import time_scaling
from webapp.runs.services.execution import agent_run_execute
from webapp.runs.services.launch import launch_create

pytestmark = pytest.mark.django_db

# Writes the sample submission, then a good one when the test says the harness has
# snapshotted the first (the harness's snapshots are out of the agent's reach), then ends
# when the test has seen the good one snapshotted: the curve must rise, however busy the
# machine. It waits on named pipes the test opens (tests.support.polling.RELEASE), never for a
# fixed time; the run's time limit ends a lost one.
IMPROVER = (
    RELEASE
    + """import shutil
shutil.copy("{sample}", submission)
release("write-the-good-one")
shutil.copy("{good}", submission)
release("stop")
"""
)


def steer(submission: Path, dirs: RunDirs) -> None:
    """The test's side of IMPROVER: let it write the good submission once a snapshot of
    the sample is taken, and let it stop once two more are after it has written the good
    one (one may have been copying the sample meanwhile; the last is of the good one)."""

    def taken() -> int:
        return len(list(dirs.snapshots.glob("submission_*s.csv")))

    def released(name: str) -> int:
        """The agent's pipe ``name`` held open to write: it waits there until closed."""
        return wait_until(lambda: opened_for_writing(submission / name), timeout=60)

    wait_until(lambda: taken() >= 1, timeout=60)
    os.close(released("write-the-good-one"))
    stop = released("stop")  # the agent has written the good one, and waits
    after = taken()
    wait_until(lambda: taken() >= after + 2, timeout=60)
    os.close(stop)


def test_snapshots_are_graded_and_drawn(tmp_path, settings, unisolated, django_user_model, client):
    build = demo_site(tmp_path, settings, competitions=("demo-wine",))
    agent = tmp_path / "agents" / "improver"
    agent.mkdir(parents=True)
    (agent / "agent.yaml").write_text(
        "name: improver\ndescription: improves\nstart: [python3, main.py]\n"
    )
    (agent / "Dockerfile").write_text("FROM scratch\n")
    settings.MLEBOARD_AGENT_DIRS = [tmp_path / "agents"]
    user = django_user_model.objects.create_user("hana", password="pw-hana-1234")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    launch = launch_create(
        owner=user,
        agent_name="improver",
        competitions=["demo-wine"],
        seeds=1,
        cpus=1,
        gpus=0,
        time_limit_s=60,
        snapshot_interval_s=1.0,
        backend="local",
    )
    run = AgentRun.objects.get(launch=launch)
    # The local backend runs the agent in its folder; it writes where the harness says.
    out = settings.MEDIA_ROOT / "agent-runs" / str(run.pk) / "submission"
    sample = (
        settings.MLEBOARD_DATA_DIR / "demo-wine" / "prepared" / "public" / "sample_submission.csv"
    )
    # The good submission travels with the agent: the site's data folder (where the
    # demo's reference submissions are) is out of a local agent's reach.
    good = agent / "good.csv"
    shutil.copy(build.submissions["linear"][0]["demo-wine"], good)
    dirs = RunDirs(out.parent, sample.parent)
    (agent / "main.py").write_text(IMPROVER.format(sample=sample, good=good))

    with ThreadPoolExecutor(1) as pool:
        steering = pool.submit(steer, out, dirs)
        finished = agent_run_execute(run.pk, token="t")
        steering.result()
    assert finished.status == AgentRun.Status.COMPLETED, (finished.message, finished.detail)
    snapshots = list(SubmissionSnapshot.objects.filter(agent_run=run).order_by("elapsed_s"))
    assert len(snapshots) >= 3 and all(s.valid_submission for s in snapshots)
    assert not snapshots[0].any_medal and snapshots[-1].any_medal
    curve = time_scaling(launch.experiment_id)
    assert curve[0]["any_medal_percentage"] == 0 and curve[-1]["any_medal_percentage"] == 100

    from webapp.results.grading.aggregates import experiment_aggregate_refresh
    from webapp.results.grading.services import run_grade

    run_grade(AgentRun.objects.get(pk=run.pk).result_run_id)
    experiment_aggregate_refresh(launch.experiment_id)
    client.login(username="hana", password="pw-hana-1234")
    page = client.get(f"/experiments/{launch.experiment_id}/").content.decode()
    assert 'id="time-scaling-data"' in page
