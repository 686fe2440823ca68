"""Rough edges a new user found on the results pages and uploads, each with the test that
would have caught it: figures kept in range, compare with nothing in common, an unranked
entry, upload progress and answers, the admin's publish and review wording."""

import re

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse

from tests.support.factories import FULL_DISCLOSURE
from webapp.competitions.services import catalogue_sync
from webapp.results.disclosure import disclosure_update
from webapp.results.models import Experiment

pytestmark = pytest.mark.django_db


def test_experiment_page_interval_never_passes_100(client, imported):
    experiment = Experiment.objects.get(name="aide-o1")
    aggregate = experiment.aggregate
    metric = aggregate.figures["splits"]["low"]["metrics"]["any_medal_percentage"]
    metric.update({"mean": 66.7, "standard_error": 33.3, "ci_lower": 1.3, "ci_upper": 132.0})
    aggregate.save()
    html = client.get(reverse("experiment-detail", args=[experiment.pk]) + "?split=low")
    html = html.content.decode()
    assert "132.0" not in html
    assert "95% CI 1.3–100.0" in html
    assert 'id="ci-note"' in html and "clipped to 0–100" in html
    # The stored (published-compatible) figure is unchanged.
    experiment.aggregate.refresh_from_db()
    assert experiment.aggregate.figures["splits"]["low"]["metrics"]["any_medal_percentage"][
        "ci_upper"
    ] == pytest.approx(132.0)


# Compare with nothing in common: a sentence, not empty axes.


def test_compare_with_no_split_in_common_says_so(client, imported):
    from webapp.results.grading.aggregates import summary_of

    aide = Experiment.objects.get(name="aide-o1")
    mlab = Experiment.objects.get(name="mlab-gpt4o")
    for experiment, keep in ((aide, "low"), (mlab, "dev")):
        aggregate = experiment.aggregate
        splits = aggregate.figures["splits"]
        aggregate.figures["splits"] = {keep: splits.get("low") or next(iter(splits.values()))}
        # The summary the compare page reads goes with the figures, as a refresh stores it.
        aggregate.summary = summary_of(aggregate.figures)
        aggregate.save()
    response = client.get(reverse("compare") + f"?experiments={aide.pk},{mlab.pk}")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="compare-nothing-in-common"' in html
    assert "no split in common" in html
    assert "aide-o1</a> has figures on Low (Lite)" in html
    assert "mlab-gpt4o</a> has figures on Dev" in html
    assert "plotly_figure" not in html and "compare-split-bars" not in html
    assert "resamples" not in html and "( " not in html


# An entry with figures only over the competitions it ran: shown, and not ranked.


def test_entry_without_a_figure_on_the_ranking_split_is_unranked(client, imported):
    from webapp.results.pages.leaderboard import LeaderboardFilters, leaderboard_entries

    aide = Experiment.objects.get(name="aide-o1")
    mlab = Experiment.objects.get(name="mlab-gpt4o")
    aggregate = mlab.aggregate
    # One competition only: no split covered, figures on `ran` only, and a high mean.
    aggregate.summary = {
        "ran": {"mean": 100.0, "standard_error": 0.0, "n_seeds": 2, "n_competitions": 1}
    }
    aggregate.save()
    entries = leaderboard_entries(user=AnonymousUser(), filters=LeaderboardFilters())
    by_name = {e["name"]: e for e in entries}
    assert by_name["aide-o1"]["rank"] == 1
    assert by_name["mlab-gpt4o"]["rank"] is None
    assert [e["name"] for e in entries] == ["aide-o1", "mlab-gpt4o"]
    html = client.get(reverse("home")).content.decode()
    row = re.search(rf'<tr data-experiment="{mlab.pk}">.*?</tr>', html, re.S).group(0)
    assert re.search(r'<td class="num" data-value="\d+"[^>]*>—</td>', row)
    assert "Competitions run (1): 100.0 ± 0.0" in row
    assert 'id="ranking-note"' in html and "unranked" in html
    aide_row = re.search(rf'<tr data-experiment="{aide.pk}">.*?</tr>', html, re.S).group(0)
    assert ">1</td>" in aide_row


# Upload progress: failed runs and invalid submissions named apart, counts matching lists.


def test_upload_progress_counts_match_their_lists(imported, django_user_model):
    from webapp.results.models import Run, Upload
    from webapp.results.uploads.progress import upload_progress

    experiment = Experiment.objects.get(name="aide-o1")
    Run.objects.filter(experiment=experiment).update(status=Run.Status.GRADED, error="")
    runs = list(Run.objects.filter(experiment=experiment).order_by("pk")[:3])
    Run.objects.filter(pk=runs[0].pk).update(error="invalid: 3 rows missing")
    Run.objects.filter(pk=runs[1].pk).update(
        status=Run.Status.FAILED, error="grading ran out of memory"
    )
    owner = django_user_model.objects.create_user("uploader", password="x")
    upload = Upload.objects.create(
        owner=owner,
        archive="a.tar.gz",
        original_name="a.tar.gz",
        size=1,
        sha256="0" * 64,
        status=Upload.Status.GRADED,
        experiment=experiment,
    )
    progress = upload_progress(upload)
    assert progress["runs_failed"] == len(progress["failures"]) == 1
    assert progress["failures"][0]["reason"] == "grading ran out of memory"
    assert progress["runs_invalid"] == len(progress["invalid_submissions"]) == 1
    assert progress["invalid_submissions"][0]["reason"].startswith("invalid")
    # None failed: no failure listed next to runs_failed 0.
    Run.objects.filter(pk=runs[1].pk).update(status=Run.Status.GRADED, error="")
    progress = upload_progress(upload)
    assert progress["runs_failed"] == 0 and progress["failures"] == []
    assert progress["runs_invalid"] == 1


# Admin: publish and withdraw confirm what they did; the review queue reads plainly.


def test_admin_publish_and_withdraw_confirm(admin_client, imported):
    experiments = list(Experiment.objects.order_by("pk"))
    for experiment in experiments:  # publishing asks for every condition
        disclosure_update(experiment, FULL_DISCLOSURE)
    url = reverse("admin:results_experiment_changelist")
    ids = [str(e.pk) for e in experiments]
    response = admin_client.post(url, {"action": "unpublish", "_selected_action": ids}, follow=True)
    html = response.content.decode()
    assert "2 experiments withdrawn from the public leaderboard." in html
    assert not Experiment.objects.filter(is_published=True).exists()
    response = admin_client.post(
        url, {"action": "publish", "_selected_action": ids[:1]}, follow=True
    )
    assert "1 experiment published on the public leaderboard." in response.content.decode()
    response = admin_client.post(url, {"action": "publish", "_selected_action": ids}, follow=True)
    assert "1 experiment published on the public leaderboard (1 already was)." in (
        response.content.decode()
    )


def test_review_queue_wording(admin_client, imported):
    html = admin_client.get(reverse("admin:results_reviewqueue_changelist")).content.decode()
    assert "review queue (unpublished experiments)" not in html
    assert "experiments awaiting review" in html.lower()


# The same archive again with other metadata: the answer says the metadata was not applied.


def test_resent_archive_with_new_metadata_says_it_is_not_applied(media, django_user_model, client):
    import json

    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from tests.support import archive_builders as ab
    from webapp.results.models import Upload

    catalogue_sync()
    alice = django_user_model.objects.create_user("alice", password="pw-alice-123")
    api = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")
    data = ab.zip_bytes(ab.run_group_files("rg", ["spaceship-titanic"]))

    def send(metadata):
        return api.post(
            "/api/uploads/",
            {"archive": SimpleUploadedFile("runs.zip", data), "metadata": json.dumps(metadata)},
        ).json()

    first = send({"scaffold": "aide", "model": "gpt-4o"})
    same = send({"scaffold": "aide", "model": "gpt-4o"})
    assert same["duplicate"] is True and same["metadata_ignored"] is False
    changed = send({"scaffold": "aide", "model": "o1"})
    assert changed["id"] == first["id"] and changed["metadata_ignored"] is True
    assert "not applied" in changed["message"]
    assert Upload.objects.get().metadata["model"] == "gpt-4o"
    # The page says so too.
    client.login(username="alice", password="pw-alice-123")
    response = client.post(
        "/uploads/new/",
        {"archive": SimpleUploadedFile("runs.zip", data), "scaffold": "aide", "model": "o3"},
        follow=True,
    )
    assert "was not applied" in response.content.decode()


# The upload form suggests the scaffold and model names already in use.


def test_upload_form_suggests_existing_names(client, imported, django_user_model):
    django_user_model.objects.create_user("alice", password="pw-alice-123")
    client.login(username="alice", password="pw-alice-123")
    html = client.get(reverse("upload-new")).content.decode()
    assert 'list="scaffold-choices"' in html and 'list="model-choices"' in html
    experiment = Experiment.objects.select_related("agent__scaffold", "agent__model").first()
    scaffolds = re.search(r'<datalist id="scaffold-choices">(.*?)</datalist>', html, re.S).group(1)
    models = re.search(r'<datalist id="model-choices">(.*?)</datalist>', html, re.S).group(1)
    assert f'value="{experiment.agent.scaffold.name}"' in scaffolds
    assert f'value="{experiment.agent.model.name}"' in models


def test_leaderboard_dots_follow_the_filters(client, imported):
    """The dots are drawn from the table's rows (static/js/figures.js), which follow the
    filters: one row per entry shown, named by its agent link's title."""
    import json

    def drawn(html: str) -> set[str]:
        figure = json.loads(
            re.search(r'<script id="leaderboard-dots-data"[^>]*>(.*?)</script>', html, re.S)[1]
        )
        assert figure["table"]["id"] == "leaderboard"
        body = re.search(r"<tbody>.*?</tbody>", html, re.S)[0]
        return set(re.findall(r'<td class="agent"[^>]*><a href="[^"]*" title="([^"]*)"', body))

    assert drawn(client.get(reverse("home")).content.decode()) == {"aide-o1", "mlab-gpt4o"}
    aide = Experiment.objects.select_related("agent__scaffold").get(name="aide-o1")
    html = client.get(reverse("home"), {"scaffold": aide.agent.scaffold.name}).content.decode()
    assert "aide-o1" in drawn(html)
    assert drawn(html) <= {"aide-o1"} | (
        {"mlab-gpt4o"}
        if Experiment.objects.get(name="mlab-gpt4o").agent.scaffold_id == aide.agent.scaffold_id
        else set()
    )
