"""Rough edges a new user meets, in a real browser at a laptop's 1,280 px, with
screenshots in test-artifacts/: compare is easy to find and fits, the leaderboard's cells
are whole, entries graded here say they have reports."""

import pytest
from django.core.management import call_command

from tests.support.browser import shot
from webapp.results.models import Experiment, ExperimentAggregate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def published(page):
    """MLE-bench's published leaderboard; its best entry with integrity flags and graded
    here (no flag about reports); the page at 1,280 px."""
    call_command("load_published_results")
    entries = Experiment.objects.exclude(published_figures={}).order_by("pk")
    best, worst = entries.first(), entries.last()
    ExperimentAggregate.objects.update_or_create(
        experiment=best,
        defaults={"runs_checked": 8, "runs_flagged": 2, "runs_disqualified": 1},
    )
    Experiment.objects.filter(pk=best.pk).update(
        source=Experiment.Source.GRADED, grading_reports_available=None
    )
    page.set_viewport_size({"width": 1280, "height": 800})
    return best, worst


def _page_width(page) -> tuple[int, int]:
    return tuple(page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]"))


def test_compare_is_found_counted_sticky_and_fits(page, live_server, published):
    best, worst = published
    page.goto(live_server.url + "/")
    # The navigation has Compare; once the table is in the window, the selection bar is
    # on screen while the table goes on below (it sticks to the window's bottom).
    assert page.locator("header.top #nav-compare").inner_text() == "Compare"
    bar = page.locator("#compare-bar")
    assert page.locator("#compare-button").inner_text() == "Compare selected (0)"
    assert page.locator("#compare-button").is_disabled()
    page.evaluate("document.querySelector('#leaderboard').scrollIntoView({block: 'start'})")
    table = page.locator("#leaderboard").bounding_box()
    assert table["y"] + table["height"] > 800
    box = bar.bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= 800
    page.check(f'tr[data-experiment="{best.pk}"] input.compare-pick')
    assert page.locator("#compare-button").inner_text() == "Compare selected (1)"
    assert page.locator("#compare-hint").inner_text() == "Tick one more row."
    page.check(f'tr[data-experiment="{worst.pk}"] input.compare-pick')
    assert page.locator("#compare-button").inner_text() == "Compare selected (2)"
    shot(page, "edges-compare-bar")
    page.mouse.wheel(0, 1500)
    box = bar.bounding_box()
    assert box["y"] + box["height"] <= 800 + 1
    shot(page, "edges-compare-bar-scrolled")
    page.click("#compare-button")
    page.wait_for_url(f"**/compare/?experiments={best.pk},{worst.pk}")
    page.wait_for_selector("#compare-split-bars[data-rendered=true]", timeout=15000)
    # Far apart: every split says who is ahead, and the page is no wider than the window.
    assert page.locator("table.unpaired-comparison .badge.ahead").count() == 4
    scroll, inner = _page_width(page)
    assert scroll <= inner, (scroll, inner)
    shot(page, "edges-compare-ahead")
    assert page.console_errors == []


def test_compare_without_a_selection_offers_the_experiments(page, live_server, published):
    best, worst = published
    page.goto(live_server.url + "/")
    page.click("#nav-compare")
    page.wait_for_url("**/compare/")
    assert "Tick them below" in page.locator("#compare-intro").inner_text()
    assert page.locator("#compare-pick-table tbody tr").count() == Experiment.objects.count()
    page.check(f'#compare-pick-table input.compare-pick[value="{best.pk}"]')
    page.check(f'#compare-pick-table input.compare-pick[value="{worst.pk}"]')
    shot(page, "edges-compare-empty")
    page.click("#compare-button")
    page.wait_for_selector("table.unpaired-comparison")
    # One id only (a 400: the browser logs it): the same picker, that one already ticked.
    page.goto(f"{live_server.url}/compare/?experiments={best.pk}")
    assert page.console_errors.pop().endswith("status of 400 (Bad Request)")
    assert page.locator("#compare-error").is_visible()
    assert page.locator(f'input.compare-pick[value="{best.pk}"]').is_checked()
    assert page.locator("#compare-button").inner_text() == "Compare selected (1)"
    assert page.console_errors == []


def test_leaderboard_cells_are_whole_at_1280_px(page, live_server, published):
    best, _ = published
    page.goto(live_server.url + "/")
    # The table does not scroll sideways: nothing of it is hidden at 1,280 px.
    widths = page.evaluate(
        "(() => { const t = document.querySelector('#leaderboard');"
        " return [t.scrollWidth, t.parentElement.clientWidth]; })()"
    )
    assert widths[0] <= widths[1], widths
    row = page.locator(f'tr[data-experiment="{best.pk}"]')
    cell = row.locator("td.integrity")
    assert cell.inner_text().split() == ["8", "checked", "2", "flagged", "1", "DQ"]
    inside = cell.evaluate(
        "c => { const r = c.getBoundingClientRect(); return [...c.querySelectorAll('*')]"
        ".every(e => e.getBoundingClientRect().right <= r.right + 0.5); }"
    )
    assert inside
    # Graded here: its reports are here, not "rep?".
    marks = row.locator("td.conditions .cond").all_inner_texts()
    assert "rep" in marks and "rep?" not in marks
    row.scroll_into_view_if_needed()
    shot(page, "edges-leaderboard-integrity")
    assert page.console_errors == []


def test_agents_on_the_human_distribution_have_markers_a_legend_and_a_readable_axis(
    page, live_server, tmp_path
):
    from benchmark.leaderboard import LeaderboardTable
    from tests.support.factories import import_runs
    from webapp.competitions.services import catalogue_sync, leaderboard_store
    from webapp.results.models import GradeReport

    catalogue_sync()
    import_runs(tmp_path / "runs", {"aide-o1": 3, "mlab-o1": 2})
    competition = GradeReport.objects.first().competition
    scores = tuple(round(0.85 - i * 0.002, 5) for i in range(150))
    none = (None,) * 150
    leaderboard_store(
        competition,
        LeaderboardTable(scores, none, none, none, "mlebench", False),
        source_name="test",
    )
    reports = GradeReport.objects.filter(
        competition=competition, is_current=True, experiment__name="aide-o1"
    ).order_by("seed")
    # One seed far below every team: it must not squeeze the medal band into a sliver.
    GradeReport.objects.filter(pk=reports[0].pk).update(score=0.01)
    GradeReport.objects.filter(competition=competition).exclude(pk=reports[0].pk).update(score=0.8)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/competitions/{competition.slug}/")
    page.wait_for_selector("#leaderboard-distribution[data-rendered=true]", timeout=15000)
    figure = page.evaluate(
        "(() => { const f = document.querySelector('#leaderboard-distribution');"
        " return {range: f.layout.xaxis.range, traces: f.data.map(t => ["
        "t.name, t.type, t.x, t.marker && t.marker.symbol, t.customdata])}; })()"
    )
    low, high = figure["range"]
    # The axis holds the teams' scores (0.552–0.85) and the medal lines, not the outlier.
    assert 0.5 < low < 0.552 and 0.85 < high < 0.9
    agents = {name: rest for name, kind, *rest in figure["traces"] if kind == "scatter"}
    assert set(agents) == {"aide-o1", "mlab-o1"}
    xs, symbols, hover = agents["aide-o1"]
    edge = [i for i, text in enumerate(hover) if text.endswith("(beyond the axis)")]
    assert len(edge) == 1 and xs[edge[0]] == low and symbols[edge[0]] == "triangle-left"
    assert hover[edge[0]] == "0.01 (beyond the axis)"
    assert agents["mlab-o1"][1][0] != agents["aide-o1"][1][-1]  # another symbol per agent
    legend = page.locator("#leaderboard-distribution .legend").text_content()
    assert "aide-o1" in legend and "mlab-o1" in legend
    page.locator("#leaderboard-distribution").scroll_into_view_if_needed()
    shot(page, "edges-distribution-agents")
    assert page.console_errors == []


def test_redoc_and_the_admin_fetch_nothing_elsewhere_and_have_an_icon(
    page, live_server, django_user_model
):
    django_user_model.objects.create_superuser("ada", "ada@example.org", "pw-ada-12345")
    asked = []
    page.on("request", lambda r: asked.append(r.url))
    failed = []
    page.on("response", lambda r: r.status >= 400 and failed.append(r.url))
    page.goto(live_server.url + "/api/redoc/")
    page.wait_for_selector("#redoc-container .api-content", timeout=20000)
    page.wait_for_load_state("networkidle")
    shot(page, "edges-redoc")
    page.goto(live_server.url + "/admin/login/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "pw-ada-12345")
    page.click("input[type=submit]")
    page.wait_for_url(live_server.url + "/admin/")
    page.wait_for_load_state("networkidle")
    elsewhere = [u for u in asked if not u.startswith((live_server.url, "blob:", "data:"))]
    assert elsewhere == []
    assert failed == []
    assert page.evaluate(
        "fetch('/favicon.ico').then(r => [r.ok, r.headers.get('content-type')])"
    ) == [True, "image/svg+xml"]
    assert page.console_errors == []
