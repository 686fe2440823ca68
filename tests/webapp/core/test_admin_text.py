"""The admin's sentences and lists say what is there: counts that agree with their nouns,
no "vNone", no "Launchs", changelists with the columns one decides on."""

import io
import zipfile

import pytest
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from benchmark.splits import split_label
from tests.support import integrity_cases as cases
from tests.support.factories import FULL_DISCLOSURE, import_runs
from webapp.competitions.models import Competition
from webapp.competitions.services import catalogue_sync
from webapp.core.wording import counted
from webapp.results.disclosure import disclosure_update
from webapp.results.models import Experiment, ExperimentAggregate
from webapp.runs.models import Launch

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported(tmp_path):
    catalogue_sync()
    return import_runs(tmp_path / "runs", {"aide-o1": 2, "mlab-gpt4o": 2})


def test_counted_agrees_in_number():
    assert counted(1, "file") == "1 file"
    assert counted(0, "file") == "0 files"
    assert counted(2, "corpus", "corpora") == "2 corpora"


def _unpublished_and_owned(admin_user):
    """The imported experiments as uploads by someone, waiting in the review queue."""
    Experiment.objects.update(is_published=False, owner=admin_user)
    for experiment in Experiment.objects.all():  # publishing asks for every condition
        disclosure_update(experiment, FULL_DISCLOSURE)


def test_publishing_from_the_review_queue_counts_right(admin_client, admin_user, imported):
    _unpublished_and_owned(admin_user)
    ids = [str(pk) for pk in Experiment.objects.values_list("pk", flat=True)]
    url = reverse("admin:results_reviewqueue_changelist")
    response = admin_client.post(
        url, {"action": "publish", "_selected_action": ids[:1]}, follow=True
    )
    html = response.content.decode()
    assert "1 experiment published on the public leaderboard." in html
    assert "already" not in html and "(-1" not in html
    response = admin_client.post(url, {"action": "publish", "_selected_action": ids}, follow=True)
    assert "1 experiment published on the public leaderboard." in response.content.decode()


def test_adding_a_reference_corpus_names_it_with_its_version(admin_client):
    catalogue_sync()
    competition = Competition.objects.get(slug="demo-wine")
    archive = SimpleUploadedFile(
        "refs.zip", cases.references_zip({"sources.csv": "path,source\n"}), "application/zip"
    )
    response = admin_client.post(
        reverse("admin:integrity_referencecorpus_add"),
        {"competition": competition.pk, "note": "top notebooks", "archive": archive},
        follow=True,
    )
    html = response.content.decode()
    assert "vNone" not in html
    assert "demo-wine references v1" in html
    assert "2 files;" in html
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as one_file:
        one_file.writestr("top-1/solution.py", cases.REFERENCE)
    one = SimpleUploadedFile("one.zip", buffer.getvalue(), "application/zip")
    response = admin_client.post(
        reverse("admin:integrity_referencecorpus_add"),
        {"competition": competition.pk, "note": "", "archive": one},
        follow=True,
    )
    html = response.content.decode()
    assert "references v2: 1 file;" in html


def test_launches_are_launches(admin_client):
    assert str(Launch._meta.verbose_name_plural) == "launches"
    assert "Launchs" not in admin_client.get(reverse("admin:index")).content.decode()


def test_changelists_show_more_than_a_name(admin_client, admin_user, rf, imported):
    """Every changelist has three columns or more (a name alone leaves 1,280 px empty)."""
    request = rf.get("/admin/")
    request.user = admin_user
    narrow = {
        model._meta.label: model_admin.get_list_display(request)
        for model, model_admin in admin.site._registry.items()
        if model._meta.app_label in ("results", "runs", "competitions", "integrity", "accounts")
        and len(model_admin.get_list_display(request)) < 3
    }
    assert narrow == {}
    html = admin_client.get(reverse("admin:results_scaffold_changelist")).content.decode()
    head = html.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert "agents" in head and "Url" in head


def test_review_queue_shows_figures_and_integrity(admin_client, admin_user, imported):
    _unpublished_and_owned(admin_user)
    aide = Experiment.objects.get(name="aide-o1")
    ExperimentAggregate.objects.filter(experiment=aide).update(
        runs_checked=44, runs_flagged=2, runs_disqualified=1
    )
    html = admin_client.get(reverse("admin:results_reviewqueue_changelist")).content.decode()
    value = aide.aggregate.summary["low"]
    assert f"{split_label('low')} {value['mean']:.1f} ± {value['standard_error']:.1f}" in html
    assert "44 checked · 2 flagged · 1 disqualified" in html
    assert "not checked" in html  # mlab-gpt4o's runs
    assert "Any Medal % (mean ± SEM)" in html


def test_review_queue_in_the_browser(page, live_server, admin_user, imported):
    from tests.support.browser import shot, sign_in_to

    _unpublished_and_owned(admin_user)
    sign_in_to(page, live_server, admin_user.username, "password", "/admin/")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(live_server.url + reverse("admin:results_reviewqueue_changelist"))
    assert page.locator("#result_list thead th").count() == 7  # the checkbox and six
    assert "not checked" in page.inner_text("#result_list")
    shot(page, "admin-review-queue")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    # Every column in view: the results box does not scroll sideways.
    assert page.evaluate(
        "(() => { const r = document.querySelector('.results');"
        " return r.scrollWidth <= r.clientWidth; })()"
    )
