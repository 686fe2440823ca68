"""The contamination section of the experiment and compare pages: the figures' numbers are
``benchmark.contamination``'s over the experiment's own per-competition medal counts and
the catalogue's deadlines; the empty states say why a figure is missing."""

import datetime as dt
import html
import json
import re

import pytest
from django.core.management import call_command
from django.db.models import Avg

from benchmark.contamination import CompetitionResult, date_view, familiarity_view
from tests.support.contamination_fixtures import import_experiment
from tests.support.factories import import_runs
from webapp.competitions.models import Competition, Familiarity
from webapp.competitions.services import catalogue_sync
from webapp.core.formatting import format_p, format_statistic
from webapp.results.models import Experiment, GradeReport
from webapp.results.pages import contamination

pytestmark = pytest.mark.django_db


@pytest.fixture
def experiment(tmp_path):
    catalogue_sync(include_demo=True)
    imported = import_experiment(tmp_path, "aide-gpt-4o", "gpt-4o-2024-08-06")
    Experiment.objects.filter(pk=imported.pk).update(knowledge_cutoff=dt.date(2023, 10, 1))
    imported.refresh_from_db()
    return imported


def figure(page: str, figure_id: str) -> dict:
    match = re.search(
        rf'<script id="{figure_id}-data" type="application/json">(.*?)</script>', page, re.S
    )
    assert match, f"no {figure_id} on the page"
    return json.loads(match.group(1))


def by_hand(experiment) -> list[CompetitionResult]:
    """The experiment's competitions from its stored reports, counted here."""
    deadlines = dict(Competition.objects.values_list("slug", "deadline"))
    counts: dict[str, list[int]] = {}
    for slug, medal in GradeReport.objects.filter(experiment=experiment).values_list(
        "competition__slug", "any_medal"
    ):
        counts.setdefault(slug, [0, 0])
        counts[slug][0] += 1
        counts[slug][1] += medal
    return [CompetitionResult(slug, n, m, deadlines[slug]) for slug, (n, m) in counts.items()]


def visible_text(page: str) -> str:
    start = page.index('<section id="contamination">')
    section = page[start : page.index("</section>", start)]
    return html.unescape(re.sub(r"<script.*?</script>", "", section, flags=re.S))


def test_the_date_view_of_an_imported_experiment(client, experiment):
    page = client.get(experiment.get_absolute_url()).content.decode()
    drawn = figure(page, "contamination-dates")
    points, trend = drawn["data"][0], drawn["data"][1]
    assert len(points["x"]) == 75 and len(points["y"]) == 75
    expected = date_view(by_hand(experiment), dt.date(2023, 10, 1))
    assert points["x"] == [p["deadline"] for p in expected["points"]]
    assert points["y"] == pytest.approx([p["medal_rate"] for p in expected["points"]])
    rho = expected["correlation"]
    assert (
        f"ρ = {format_statistic(rho['statistic'])}, {format_p(rho['p_value'])}, n = 75"
        in points["name"]
    )
    assert rho["statistic"] < 0  # the fixture's older competitions medal more often
    assert trend["mode"] == "lines" and trend["x"] == ["2012-09-21", "2024-08-05"]
    assert drawn["layout"]["shapes"][0]["x0"] == "2023-10-01"  # the cutoff's line
    text = visible_text(page)
    cut = expected["cutoff"]
    assert (
        f"({cut['before']['n']} competitions)" in text
        and f"({cut['after']['n']} competitions)" in text
    )
    assert cut["before"]["n"] + cut["after"]["n"] == 75
    assert "95% CI" in text and "Welch's t-test, p" in text
    # Numbers as the formatter prints them: no float noise anywhere in the section.
    assert not re.search(r"\d\.\d{5,}", text), re.findall(r"\d\.\d{5,}", text)
    # No familiarity measured yet: said so, no empty figure.
    assert contamination.NO_FAMILIARITY in text
    assert 'id="contamination-familiarity-medals"' not in page


def test_without_a_cutoff_it_says_how_to_give_one(client, experiment):
    Experiment.objects.filter(pk=experiment.pk).update(knowledge_cutoff=None)
    page = client.get(experiment.get_absolute_url()).content.decode()
    assert contamination.NO_CUTOFF.split(":")[0] in visible_text(page)
    assert figure(page, "contamination-dates")["layout"]["shapes"] == []


def test_competitions_without_deadlines_say_why_nothing_is_drawn(client, tmp_path):
    catalogue_sync(include_demo=True)
    import_runs(tmp_path / "runs", {"demo-agent": 2}, split="demo")
    demo = Experiment.objects.get(name="demo-agent")
    page = client.get(demo.get_absolute_url()).content.decode()
    assert contamination.NO_DEADLINES in visible_text(page)
    assert 'id="contamination-dates-data"' not in page
    assert "0 of 4" in visible_text(page)


def test_compare_draws_one_series_per_experiment(client, experiment, tmp_path):
    other = import_experiment(tmp_path, "aide-o1", "o1-preview", bias=0.0)
    page = client.get(f"/compare/?experiments={experiment.pk},{other.pk}").content.decode()
    drawn = figure(page, "contamination-dates")
    names = [trace["name"] for trace in drawn["data"] if trace["mode"] == "markers"]
    assert (
        len(names) == 2
        and names[0].startswith("aide-gpt-4o (ρ")
        and names[1].startswith("aide-o1 (ρ")
    )
    rows = visible_text(page).count("<tr>")
    assert rows >= 2 and "no cutoff stated" in visible_text(page)  # aide-o1 states none


def test_the_familiarity_view_uses_the_measured_values(client, experiment, settings, tmp_path):
    from tests.support.fake_base_model import FakeBaseModel

    with FakeBaseModel() as fake:
        settings.MLEBOARD_FAMILIARITY_BASE_URL = fake.base_url
        settings.MLEBOARD_FAMILIARITY_MODEL = "fake-base"
        for competition in Competition.objects.filter(is_demo=False):
            competition.description = (
                f"{competition.name}. {competition.category}. {competition.metric}."
            )
            competition.save(update_fields=["description"])
        call_command("compute_familiarity")
    values = dict(Familiarity.objects.values_list("competition__slug", "value"))
    assert len(values) == 82
    page = client.get(experiment.get_absolute_url()).content.decode()
    medals = figure(page, "contamination-familiarity-medals")["data"][0]
    # MLE-bench's reports carry no percentile: said so, not an empty figure.
    assert contamination.NO_PERCENTILES in visible_text(page)
    assert 'id="contamination-familiarity-percentile-data"' not in page
    results = [
        CompetitionResult(r.competition_id, r.seeds, r.medals, familiarity=values[r.competition_id])
        for r in by_hand(experiment)
    ]
    expected = familiarity_view(results)
    r = expected["medal_rate"]
    assert (
        f"r = {format_statistic(r['statistic'])}, {format_p(r['p_value'])}, n = 75"
        in medals["name"]
    )
    assert medals["x"] == pytest.approx([p["familiarity"] for p in expected["points"]])
    assert 'id="familiarity-model">fake-base<' in page
    # With percentiles (as graded here), their mean per competition against familiarity.
    for i, report in enumerate(GradeReport.objects.filter(experiment=experiment).order_by("pk")):
        GradeReport.objects.filter(pk=report.pk).update(percentile=float(i % 97))
    page = client.get(experiment.get_absolute_url()).content.decode()
    drawn = figure(page, "contamination-familiarity-percentile")["data"][0]
    means = dict(
        GradeReport.objects.filter(experiment=experiment)
        .values_list("competition__slug")
        .annotate(mean=Avg("percentile"))
    )
    ranked = [
        CompetitionResult(
            r.competition_id,
            r.seeds,
            r.medals,
            None,
            means[r.competition_id],
            values[r.competition_id],
        )
        for r in by_hand(experiment)
    ]
    r = familiarity_view(ranked)["percentile"]
    assert (
        f"r = {format_statistic(r['statistic'])}, {format_p(r['p_value'])}, n = 75" in drawn["name"]
    )
    assert drawn["y"] == pytest.approx(
        [p["mean_percentile"] for p in familiarity_view(ranked)["points"]]
    )
