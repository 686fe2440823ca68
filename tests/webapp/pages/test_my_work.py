"""My work (/me/): a signed-in person's uploads, launches and experiments in one place,
with status, Any Medal % and what to do next; nothing of anyone else's."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmark.splits import split_label
from tests.support.browser import shot, sign_in_to
from tests.support.factories import import_runs
from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment, PartialUpload, Upload
from webapp.runs.models import AgentRun, Launch

pytestmark = pytest.mark.django_db


def _work_of(owner, other, tmp_path):
    """alice's: a failed upload, a graded one with a private experiment, an archive still
    arriving, a launch with a run going; bob's: a failed upload."""
    catalogue_sync()
    import_runs(tmp_path / "runs", {"aide-o1": 2})
    experiment = Experiment.objects.get(name="aide-o1")
    experiment.owner = owner
    experiment.is_published = False
    experiment.save()
    Upload.objects.create(
        owner=owner,
        original_name="broken.zip",
        size=10,
        sha256="a" * 64,
        status=Upload.Status.FAILED,
        error="not an archive",
    )
    Upload.objects.create(
        owner=owner,
        original_name="aide-runs.zip",
        size=10,
        sha256="b" * 64,
        status=Upload.Status.GRADED,
        experiment=experiment,
    )
    Upload.objects.create(
        owner=other, original_name="bobs-secret.zip", size=10, sha256="c" * 64, status="failed"
    )
    PartialUpload.objects.create(
        owner=owner,
        length=1000,
        offset=250,
        filename="big-runs.tar.gz",
        expires_at=timezone.now() + dt.timedelta(hours=1),
        updated_at=timezone.now(),
    )
    launch = Launch.objects.create(
        owner=owner, agent_name="dummy", competitions=["demo-wine"], seeds=2
    )
    wine = Competition.objects.get(slug="demo-wine")
    AgentRun.objects.create(launch=launch, competition=wine, seed=0, status="completed")
    AgentRun.objects.create(launch=launch, competition=wine, seed=1, status="running")
    return experiment


def test_my_work_lists_own_work_with_status_scores_and_next_steps(client, alice, bob, tmp_path):
    experiment = _work_of(alice, bob, tmp_path)
    client.force_login(alice)
    home = client.get("/").content.decode()
    assert f'href="{reverse("my-work")}"' in home  # linked in the navigation
    page = client.get(reverse("my-work")).content.decode()
    assert "bobs-secret.zip" not in page
    # Each upload with its status and next step.
    assert "broken.zip" in page and "see why it failed" in page
    assert "big-runs.tar.gz" in page and "25% received" in page
    assert "continue the upload" in page
    assert "aide-runs.zip" in page
    # The experiment's Any Medal %, printed as the leaderboard prints it (one decimal).
    value = experiment.aggregate.summary["low"]
    assert f"{split_label('low')} {value['mean']:.1f} ± {value['standard_error']:.1f}" in page
    # Private, and alice cannot publish: she is told who does.
    assert "an admin publishes it" in page
    # The launch: one of two runs finished, follow the runs.
    assert "dummy on 1 competition × 2 seeds" in page
    assert "1 of 2 runs finished" in page and "follow the runs" in page


def test_my_work_offers_publishing_to_whom_may(client, operator, bob, tmp_path):
    experiment = _work_of(operator, bob, tmp_path)
    client.force_login(operator)
    page = client.get(reverse("my-work")).content.decode()
    change = reverse("admin:results_experiment_change", args=[experiment.pk])
    assert f'href="{change}">publish</a>' in page


def test_my_work_empty_says_how_to_start(client, bob, alice, tmp_path):
    _work_of(alice, bob, tmp_path)
    Upload.objects.filter(owner=bob).delete()
    client.force_login(bob)
    page = client.get(reverse("my-work")).content.decode()
    assert 'id="my-work-empty"' in page
    assert reverse("upload-new") in page and "mleboard submit" in page
    assert "aide-runs.zip" not in page


def test_my_work_needs_sign_in(client):
    response = client.get(reverse("my-work"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_my_work_in_the_browser(page, live_server, alice, bob, tmp_path):
    _work_of(alice, bob, tmp_path)
    sign_in_to(page, live_server, "alice", "pw-alice-123")
    page.click("#nav-my-work")
    page.wait_for_url(live_server.url + reverse("my-work"))
    assert page.locator("#my-work-uploads tbody tr").count() == 3
    assert page.locator("#my-work-launches tbody tr").count() == 1
    assert page.locator("#my-work-experiments tbody tr").count() == 1
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1300, width
    shot(page, "my-work")
    # On a phone the page keeps its width; a wide table scrolls inside its box.
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "my-work-phone")
    page.set_viewport_size({"width": 1300, "height": 900})
    page.click("#my-work-uploads >> text=see why it failed")
    assert "not an archive" in page.content()
    assert page.console_errors == []


@pytest.mark.parametrize(
    "counts, text, key",
    [
        ({}, "no runs", "queued"),
        ({"queued": 1, "completed": 1}, "1 of 2 runs finished", "processing"),
        ({"completed": 1, "other": 2}, "2 of 3 runs did not complete", "failed"),
        ({"completed": 3}, "all 3 runs completed", "graded"),
    ],
)
def test_a_launch_status_in_words(counts, text, key):
    from webapp.pages.my_work import _launch_status

    assert _launch_status(counts) == (text, key)
