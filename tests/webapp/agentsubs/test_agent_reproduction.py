"""End to end: a small scikit-learn agent with one hash-pinned wheel is submitted through
the CLI and through the API, approved, built by a real worker on the Docker engine with no
network, and run over the demo split × 3 seeds to reproduce an uploaded experiment of the
same agent; the verdict is on the reproduction's page, both experiments' pages and the
leaderboard, looked at in a browser at 1280 and 390 pixels."""

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

from benchmark.catalogue import competitions_in_split
from benchmark.reproduction import Z_95
from cli.main import main as mleboard
from tests.support import archive_builders as ab
from tests.support.browser import shot, sign_in
from tests.support.demo_builds import demo_site
from tests.support.factories import FULL_DISCLOSURE
from tests.support.polling import wait_until as wait_for
from webapp.agentsubs.models import AgentSubmission, Reproduction
from webapp.results.models import Experiment, ExperimentAggregate, Upload

pytestmark = [
    pytest.mark.services,
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

AGENT_DIR = Path(__file__).resolve().parents[2] / "agents" / "sklearn_submitted"
SEEDS = 3


@pytest.fixture
def site(tmp_path, settings, monkeypatch):
    import docker

    from runner.images import build_base_image

    build_base_image(docker.from_env())
    monkeypatch.setenv("MLEBOARD_RUN_BACKEND", "docker")
    settings.MLEBOARD_RUN_BACKEND = "docker"
    return demo_site(tmp_path, settings)


def api_for(user) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


def reported_archive() -> bytes:
    """What the agent's author says it scored: a grading report of the demo split, 3
    seeds, a medal on half the competitions."""
    ids = [c.id for c in competitions_in_split("demo")]
    reports = []
    for seed in range(SEEDS):
        for n, cid in enumerate(ids):
            report = ab.competition_report_dict(cid, score=0.95, seed=seed)
            report.update(any_medal=n % 2 == 0, gold_medal=n % 2 == 0, above_median=True)
            reports.append(report)
    return ab.grading_report_bytes(reports)


def test_a_submitted_agent_is_built_offline_and_reproduces_an_upload(
    site, celery_worker_process, live_server, page, django_user_model, operator, capsys
):
    sam = django_user_model.objects.create_user("sam", password="pw-sam-12345")
    sam.user_permissions.add(Permission.objects.get(codename="submit_agents"))
    token = Token.objects.create(user=sam).key
    sam_api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    ops = api_for(operator)

    # The author uploads what the agent scored; an operator publishes it.
    metadata = {
        "scaffold": "sklearn-submitted",
        "model": "none (no LLM)",
        "name": "sklearn-submitted as its author reported it",
        "disclosure": FULL_DISCLOSURE,
    }
    archive = SimpleUploadedFile("r_grading_report.json", reported_archive())
    sent = sam_api.post("/api/uploads/", {"archive": archive, "metadata": json.dumps(metadata)})
    assert sent.status_code == 202, sent.content
    upload = Upload.objects.get(pk=sent.json()["id"])
    wait_for(
        lambda: ExperimentAggregate.objects.filter(
            experiment__upload=upload, n_reports=SEEDS * 4
        ).exists(),
        timeout=60,
    )
    reported = Experiment.objects.get(upload=upload)
    assert reported.source == Experiment.Source.REPORTED
    published = ops.post(
        f"/api/experiments/{reported.pk}/publish/", {"publish": True}, "application/json"
    )
    assert published.status_code == 200, published.content

    # Through the CLI (the folder, packed) and through the API (a zip): one agent, one sha256.
    code = mleboard(
        [
            "agent",
            "submit",
            str(AGENT_DIR),
            "--site",
            live_server.url,
            "--token",
            token,
            "--experiment",
            str(reported.pk),
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out
    cli_sent = json.loads(out.out.strip().splitlines()[-1])
    files = {p.name: p.read_bytes() for p in AGENT_DIR.iterdir() if p.is_file()}
    via_api = sam_api.post(
        "/api/agents/",
        {"archive": SimpleUploadedFile("agent.zip", ab.zip_bytes(files))},
    )
    assert via_api.status_code == 201, via_api.content
    assert via_api.json()["sha256"] == cli_sent["sha256"] and via_api.json()["version"] == 2
    pk = cli_sent["id"]

    # Approved, it is built by the worker with no network.
    review = ops.post(
        f"/api/agents/{pk}/review/",
        {"decision": "approve", "reason": "reads only /home/data"},
        "application/json",
    )
    assert review.status_code == 200, review.content
    submission = wait_for(
        lambda: (s := AgentSubmission.objects.get(pk=pk)).is_final and s, timeout=120
    )
    assert submission.status == "built", (submission.reason, submission.build_log[-3000:])
    assert sam_api.get(f"/api/agents/{pk}/").json()["reason"] == "reads only /home/data"

    # The operator reproduces the claimed experiment over the demo split × 3 seeds.
    started = ops.post(
        f"/api/agents/{pk}/reproductions/",
        {"split": "demo", "seeds": SEEDS, "cpus": 1, "memory": "2g"},
        "application/json",
    )
    assert started.status_code == 201, started.content
    rid = started.json()["id"]
    reproduction = wait_for(
        lambda: (r := Reproduction.objects.get(pk=rid)).is_final and r,
        timeout=240,
        interval=1,
    )
    assert reproduction.status == "done", (
        reproduction.error,
        celery_worker_process.log_path.read_text()[-3000:],
    )
    reproduced = reproduction.launch.experiment
    assert reproduced.source == Experiment.Source.REPRODUCED and reproduction.target == reported
    assert reproduced.seeds == SEEDS
    demo = next(v for v in reproduction.verdicts if v["split"] == "demo")
    assert demo["reported"] == pytest.approx(50.0) and demo["method"] == "paired"
    low = demo["reproduced"] - Z_95 * demo["reproduced_standard_error"]
    high = demo["reproduced"] + Z_95 * demo["reproduced_standard_error"]
    if low - 1e-9 <= 50.0 <= high + 1e-9:
        assert reproduction.verdict == "reproduced: agrees"
    else:
        way = "lower" if demo["reproduced"] < 50.0 else "higher"
        gap = abs(demo["reproduced"] - 50.0)
        assert reproduction.verdict == f"reproduced: {way} by {gap:.1f} points"
    assert demo["ci_lower"] <= demo["difference"] <= demo["ci_upper"]
    assert reproduction.cost["run_hours"] > 0 and "total_tokens" in reproduction.cost

    # The verdict on both experiments' pages, the reproduction's page and the leaderboard.
    viewer = Client()
    viewer.force_login(operator)
    for experiment in (reported, reproduced):
        html = viewer.get(f"/experiments/{experiment.pk}/").content.decode()
        assert reproduction.verdict in html and f"/agents/reproductions/{rid}/" in html
    anonymous = Client()
    assert reproduction.verdict in anonymous.get(f"/agents/reproductions/{rid}/").content.decode()
    board = anonymous.get("/").content.decode()
    assert reproduction.verdict in board and 'class="badge verdict' in board

    # In a browser: the reproduction, the reported experiment and the leaderboard.
    sign_in(page, live_server, "otto", "pw-otto-123")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/agents/reproductions/{rid}/")
        assert page.locator("#reproduction-verdict").inner_text() == reproduction.verdict
        shot(page, f"reproduction-{width}")
        page.goto(f"{live_server.url}/experiments/{reported.pk}/#reproductions")
        assert page.locator("#reproductions").is_visible()
        shot(page, f"reproduced-experiment-{width}")
        page.goto(f"{live_server.url}/agents/{pk}/")
        assert page.locator("#build-log").is_visible()
        shot(page, f"agent-submission-{width}")
        page.goto(f"{live_server.url}/")
        badge = page.locator(f'tr[data-experiment="{reported.pk}"] .badge.verdict')
        assert badge.inner_text() == reproduction.verdict
        shot(page, f"leaderboard-verdict-{width}")
        overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth + 1")
        assert not overflow or width == 390 and page.locator(".table-scroll").count()
    assert page.console_errors == []
