"""``mleboard submit`` against a real site (Django's live server, a real Celery worker, the
configured database and broker), through a proxy that cuts the connection once at about
40% of the bytes: the command exits 3, the same command then completes, and the site has
exactly one experiment with every run graded. Also: login, refusals and their exit codes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.demo import DEMO_COMPETITIONS
from tests.support.cut_proxy import CutProxy
from webapp.accounts.tokens import token_create
from webapp.results.models import Experiment, GradeReport, PartialUpload, Run, Upload

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
REPO_ROOT = Path(__file__).resolve().parents[3]


def run_groups(tmp_path: Path, build, seeds: int = 2, log_bytes: int = 1_500_000) -> list[Path]:
    """MLE-bench run-group folders (one per seed) of the demo's linear reference agent,
    with logs large enough that the upload takes many pieces."""
    folders = []
    for seed in range(seeds):
        group = tmp_path / "runs" / f"2024-10-0{seed + 1}T00-00-00-GMT_run-group_linear"
        runs = {}
        for index, cid in enumerate(DEMO_COMPETITIONS):
            run = group / f"{cid}_{index:08d}-0000-0000-0000-{seed:012d}"
            (run / "submission").mkdir(parents=True)
            (run / "logs").mkdir()
            (run / "code").mkdir()
            (run / "submission" / "submission.csv").write_bytes(
                build.submissions["linear"][0][cid].read_bytes()
            )
            # Incompressible, like real logs are not: the bytes must all go over the wire.
            (run / "logs" / "run.log").write_bytes(os.urandom(log_bytes))
            (run / "code" / "train.py").write_text("print('train')\n")
            runs[run.name] = {"success": True}
        (group / "metadata.json").write_text(
            json.dumps({"run_group": group.name, "created_at": "2024-10-01", "runs": runs})
        )
        folders.append(group)
    return folders


def mleboard(*args: str, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli_env(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    env.pop("MLEBOARD_TOKEN", None)
    env.pop("MLEBOARD_DATA_DIR", None)
    return env


@pytest.mark.slow
def test_an_interrupted_submit_completes_once(
    tmp_path, live_server, demo_leaderboards, celery_worker_process, django_user_model, cli_env
):
    user = django_user_model.objects.create_user("sam", password="pw-sam-12345")
    _row, token = token_create(user, "cluster")
    folders = run_groups(tmp_path, demo_leaderboards)
    port = int(live_server.url.rsplit(":", 1)[1])
    total = sum(f.stat().st_size for g in folders for f in g.rglob("*") if f.is_file())
    proxy = CutProxy(port, cut_at=int(total * 0.4))
    env = {**cli_env, "MLEBOARD_TOKEN": token}
    command = [
        "submit",
        *map(str, folders),
        "--site",
        proxy.url,
        "--scaffold",
        "reference",
        "--model",
        "linear",
        "--chunk-size",
        "1",
    ]
    try:
        first = mleboard(*command, env=env)
        assert first.returncode == 3, first.stderr
        assert proxy.cuts == 1
        assert "run the same command again" in first.stderr
        partial = PartialUpload.objects.get()
        assert 0 < partial.offset < partial.length and partial.state == "receiving"
        assert Upload.objects.count() == 0
        sent_before = proxy.sent_up

        second = mleboard(*command, env=env)
        assert second.returncode == 0, second.stderr + second.stdout
        assert "Continuing an interrupted upload" in second.stderr
        # It continued: far fewer bytes went over the wire the second time than in all.
        assert proxy.sent_up - sent_before < 0.75 * partial.length
    finally:
        proxy.close()
    assert Upload.objects.count() == 1 and Experiment.objects.count() == 1
    upload = Upload.objects.get()
    assert upload.status == "graded" and upload.size == partial.length
    runs = Run.objects.filter(experiment=upload.experiment)
    assert runs.count() == 2 * len(DEMO_COMPETITIONS)
    assert set(runs.values_list("status", flat=True)) == {"graded"}
    assert GradeReport.objects.filter(experiment=upload.experiment, is_current=True).count() == 8
    assert f"/experiments/{upload.experiment_id}/" in second.stdout
    assert "Any Medal % (mean ± SEM over seeds)" in second.stdout
    # Sent again from another machine (no record of the first): the archive is the same
    # bytes, so the site recognises it and nothing new is made.
    again = [*command[:-2], "--no-wait"]
    again[again.index(proxy.url)] = live_server.url
    third = mleboard(*again, env={**env, "XDG_CACHE_HOME": str(tmp_path / "elsewhere")})
    assert third.returncode == 0, third.stderr
    assert Upload.objects.count() == 1 and Experiment.objects.count() == 1
    print(first.stderr, second.stderr, second.stdout, sep="\n")


def test_after_login_submit_needs_no_site(
    tmp_path, live_server, demo_leaderboards, django_user_model, cli_env
):
    user = django_user_model.objects.create_user("lou", password="pw-lou-12345")
    _row, token = token_create(user, "laptop")
    login = mleboard("login", "--site", live_server.url, "--token", token, env=cli_env)
    assert login.returncode == 0, login.stderr
    folders = run_groups(tmp_path, demo_leaderboards, seeds=1, log_bytes=1000)
    command = ["submit", *map(str, folders), "--scaffold", "reference", "--model", "linear"]
    sent = mleboard(*command, "--no-wait", env=cli_env)
    assert sent.returncode == 0, sent.stderr
    assert f"{live_server.url}/uploads/" in sent.stdout
    assert Upload.objects.get().owner == user
