"""A real MLE-bench competition's page shows a visitor what is known about it (facts,
the Kaggle link, the experiments that ran it, visible ones only) and keeps the operators'
instructions for operators."""

import pytest
from django.urls import reverse

from tests.support.browser import shot
from webapp.results.models import Experiment, GradeReport

pytestmark = pytest.mark.django_db

SLUG = "denoising-dirty-documents"


def test_competition_page_shows_a_visitor_what_is_known(client, imported, alice):
    private = Experiment.objects.get(name="mlab-gpt4o")
    Experiment.objects.filter(pk=private.pk).update(is_published=False, owner=alice)
    url = reverse("competition-detail", args=[SLUG])
    page = client.get(url).content.decode()
    for fact in ("Image To Image", "Low", "rmse", "lower is better", "Kaggle simple competition"):
        assert fact in page, fact
    assert f'href="https://www.kaggle.com/competitions/{SLUG}"' in page
    assert "git lfs pull" not in page and 'id="import-hint"' not in page
    assert "Not on this site yet. Kaggle's private leaderboard of this competition" in page
    # The experiments that ran it: the published one, not alice's private one.
    table = page.split('id="experiments-run"', 1)[1].split("</table>", 1)[0]
    assert "aide-o1" in table and "mlab-gpt4o" not in table
    seeds = GradeReport.objects.filter(
        competition__slug=SLUG, experiment__name="aide-o1", is_current=True
    ).count()
    medalled = GradeReport.objects.filter(
        competition__slug=SLUG, experiment__name="aide-o1", is_current=True, any_medal=True
    ).count()
    assert f'<td class="num">{seeds}</td><td class="num">{medalled} of {seeds}</td>' in table
    # alice sees her own experiment there too.
    client.force_login(alice)
    table = client.get(url).content.decode().split('id="experiments-run"', 1)[1]
    assert "mlab-gpt4o" in table.split("</table>", 1)[0]


def test_operators_keep_the_import_instructions(client, imported, operator):
    client.force_login(operator)
    page = client.get(reverse("competition-detail", args=[SLUG])).content.decode()
    assert 'id="import-hint"' in page and "git lfs pull" in page
    assert "manage.py import_mlebench PATH/TO/mle-bench" in page


def test_demo_competitions_have_no_kaggle_link(client, imported):
    page = client.get(reverse("competition-detail", args=["demo-wine"])).content.decode()
    assert 'id="kaggle-link"' not in page
    assert 'id="experiments-run-empty"' in page


def test_competition_page_in_the_browser(page, live_server, imported):
    page.goto(live_server.url + reverse("competition-detail", args=[SLUG]))
    assert page.locator("#experiments-run tbody tr").count() == 2
    assert page.evaluate("document.documentElement.scrollWidth") <= 1300
    shot(page, "competition-facts")
    assert page.console_errors == []
