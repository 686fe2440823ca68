"""The experiment page's per-competition table: every seed for a few seeds, one row per
competition (its seeds on demand) for many."""

import re

import pytest
from django.urls import reverse

from tests.support.factories import import_runs
from webapp.competitions.services import catalogue_sync
from webapp.integrity.models import RunCheck
from webapp.results.models import Experiment, GradeReport

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported(tmp_path):
    catalogue_sync()
    return import_runs(tmp_path / "runs", {"many-seeds": 8, "few-seeds": 2}, seed=3)


def table_of(html: str, table_id: str) -> str:
    return html.split(f'id="{table_id}"')[1].split("</table>")[0]


def visible_text(html: str) -> str:
    """What a reader sees: no scripts, no attributes."""
    html = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    return re.sub(r"<[^>]*>", " ", html)


def test_a_few_seeds_are_listed_one_by_one(client, imported):
    few = Experiment.objects.get(name="few-seeds")
    html = client.get(reverse("experiment-detail", args=[few.pk])).content.decode()
    table = table_of(html, "reports")
    assert table.count("<tr>") == 1 + 22 * 2  # the header and every seed
    assert table.count('class="run-link"') == 22 * 2
    assert ">Seed</th>" in table and 'class="folded"' not in table


def test_many_seeds_fold_into_one_row_per_competition(client, imported):
    many = Experiment.objects.get(name="many-seeds")
    reports = GradeReport.objects.filter(experiment=many, is_current=True)
    slug = reports.order_by("competition__slug").values_list("competition__slug", flat=True)[0]
    of_slug = reports.filter(competition__slug=slug)
    medaled = of_slug.filter(gold_medal=True) | of_slug.filter(silver_medal=True)
    medaled = medaled | of_slug.filter(bronze_medal=True)
    # One medal struck by the integrity review, one seed flagged.
    struck = medaled.order_by("seed").first()
    RunCheck.objects.create(run_id=struck.run_id, status=RunCheck.Status.DISQUALIFIED)
    flagged = of_slug.exclude(pk=struck.pk).order_by("seed").first()
    RunCheck.objects.create(run_id=flagged.run_id, status=RunCheck.Status.FLAGGED)

    response = client.get(reverse("experiment-detail", args=[many.pk]))
    html = response.content.decode()
    table = table_of(html, "reports")
    assert table.count('<tr class="folded">') == 22
    assert "run-link" not in table and ">Seeds</th>" in table
    assert len(html) < 200_000

    row = next(r for r in table.split('<tr class="folded">')[1:] if f">{slug}</a>" in r)
    counts = {
        medal: of_slug.filter(**{f"{medal}_medal": True}).exclude(pk=struck.pk).count()
        for medal in ("gold", "silver", "bronze")
    }
    text = " ".join(visible_text(row).split())
    for medal, count in counts.items():
        if count:
            assert f"{medal} {count}" in text
    assert "of 8 seeds" in text
    assert "1 disqualified" in text and "1 medal" in text and "1 flagged" in text
    assert "<s " in row  # the struck medal
    assert f"?seeds={slug}#seeds" in row
    # Sortable: every sortable column of a row has its number.
    assert re.search(r'data-value="0\.\d+" class="medal-counts"', row)
    # Means print to the metric's precision, not as float noise.
    assert not re.search(r"\d\.\d{12,}", visible_text(html))


def test_one_competitions_seeds_on_demand(client, imported):
    many = Experiment.objects.get(name="many-seeds")
    slug = (
        GradeReport.objects.filter(experiment=many)
        .order_by("competition__slug")
        .values_list("competition__slug", flat=True)[1]
    )
    url = reverse("experiment-detail", args=[many.pk])
    html = client.get(url + f"?split=low&seeds={slug}").content.decode()
    seeds = table_of(html, "seed-rows")
    assert seeds.count('class="run-link"') == 8
    assert seeds.count(f">{slug}</a>") == 8
    assert table_of(html, "reports").count('<tr class="folded">') == 22  # still all there
    assert 'href="?split=low#reports"' in html  # back, keeping the split
    assert "?split=low&amp;seeds=" in html  # the other competitions' links keep it too
    # An unknown competition: the folded table alone.
    html = client.get(url + "?seeds=no-such-thing").content.decode()
    assert 'id="seed-rows"' not in html
