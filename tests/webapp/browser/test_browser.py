"""The pages in a real browser (Playwright driving the system Chromium): charts render,
no console errors, filters work. Screenshots go to test-artifacts/ for a person to look at."""

import pytest
from django.core.management import call_command

from tests.support.browser import ARTIFACTS, shot
from tests.support.factories import write_runs_folder
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_home_and_experiment_funnel_render(page, live_server, site):
    page.goto(live_server.url + "/")
    assert "aide-o1" in page.locator("#leaderboard").inner_text()
    shot(page, "home")
    page.click("#leaderboard td a")
    page.wait_for_selector("#funnel[data-rendered=true]", timeout=15000)
    assert page.locator("#funnel .bars, #funnel g.trace.bars").count() >= 1
    shot(page, "experiment")
    assert page.console_errors == []


def test_competition_page_draws_leaderboard_and_medal_lines(page, live_server, site):
    page.goto(live_server.url + "/competitions/spaceship-titanic/")
    page.wait_for_selector("#leaderboard-distribution[data-rendered=true]", timeout=15000)
    # Three medal bands and four lines (gold, silver, bronze, median) are drawn as shapes.
    assert page.locator("#leaderboard-distribution .shapelayer path").count() == 4 + 3
    assert "Human teams" in page.locator("#leaderboard-distribution").inner_text()
    shot(page, "competition")
    assert page.console_errors == []


def test_competition_list_filter(page, live_server, site):
    page.goto(live_server.url + "/competitions/")
    assert "86 competitions" in page.locator("#competition-count").inner_text()
    page.select_option("select[name=split]", "low")
    page.click("#competition-filters button[type=submit]")
    page.wait_for_url("**split=low**")
    assert "22 competitions" in page.locator("#competition-count").inner_text()
    shot(page, "competitions")
    assert page.console_errors == []


@pytest.fixture
def two_agents(tmp_path):
    from webapp.competitions.models import KnownIssue

    catalogue_sync()
    runs = write_runs_folder(
        tmp_path / "runs", {"aide-o1": 3, "mlab-gpt4o": 3}, split="all", seed=7
    )
    call_command(
        "import_grading_reports",
        str(runs),
        experiments=runs / "run_group_experiments.csv",
        publish=True,
    )
    assert KnownIssue.objects.filter(excludes_from_clean_subset=True).exists()
    return list(Experiment.objects.order_by("name"))


def all_column_values(page, column_index: int) -> list[float]:
    cells = page.locator(f"#leaderboard tbody tr td:nth-child({column_index})")
    return [float(cells.nth(i).get_attribute("data-value")) for i in range(cells.count())]


def test_leaderboard_sort_filter_clean_subset_and_compare(page, live_server, two_agents):
    page.goto(live_server.url + "/")
    assert page.locator("#leaderboard tbody tr").count() == 2
    # Sorting: click the "All" header twice and the order flips.
    header = page.locator('#leaderboard th[data-split="all"]')
    index = [
        h.get_attribute("data-split") for h in page.locator("#leaderboard thead th").all()
    ].index("all") + 1
    header.click()
    first = all_column_values(page, index)
    assert first == sorted(first, reverse=True)
    header.click()
    second = all_column_values(page, index)
    assert second == sorted(second)
    shot(page, "leaderboard-sorted")
    # Filter by scaffold.
    page.select_option("select[name=scaffold]", "aide-o1")
    page.click("#leaderboard-filters button[type=submit]")
    page.wait_for_url("**scaffold=aide-o1**")
    assert page.locator("#leaderboard tbody tr").count() == 1
    # The clean-subset switch recomputes the figures.
    page.goto(live_server.url + "/")
    before = page.locator('#leaderboard tbody tr td[data-split="all"]').first.inner_text()
    page.check("#clean-subset")
    page.wait_for_url("**clean=1**")
    assert page.locator("#clean-notice").is_visible()
    after = page.locator('#leaderboard tbody tr td[data-split="all"]').first.inner_text()
    assert before != after
    shot(page, "leaderboard-clean")
    # Compare two rows.
    page.goto(live_server.url + "/")
    page.locator(".compare-pick").nth(0).check()
    assert page.locator("#compare-button").is_disabled()
    page.locator(".compare-pick").nth(1).check()
    page.click("#compare-button")
    page.wait_for_url("**/compare/?experiments=**")
    page.wait_for_selector("#compare-funnels[data-rendered=true]", timeout=15000)
    page.wait_for_selector("#compare-pass-at-k[data-rendered=true]", timeout=15000)
    verdict = page.locator("#verdicts li").first.inner_text()
    assert "95% CI" in verdict and ("beats" in verdict or "No clear difference" in verdict)
    # Each competition shows what decided it: the medal level, then the score.
    assert "medal level" in page.locator(".decision-rule").first.inner_text()
    results = page.locator(".compare-per-competition tbody tr").first
    assert results.locator("td.level").count() == 2 and results.locator("td.score").count() == 2
    shot(page, "compare")
    # Compared from the clean subset's leaderboard, compare shows the clean subset too.
    page.goto(live_server.url + "/?clean=1")
    page.locator(".compare-pick").nth(0).check()
    page.locator(".compare-pick").nth(1).check()
    page.click("#compare-button")
    page.wait_for_url("**/compare/?experiments=**clean=1**")
    assert page.locator("#clean-notice").is_visible() and page.locator("#clean-subset").is_checked()
    assert page.console_errors == []


def test_experiment_page_charts(page, live_server, two_agents):
    experiment = two_agents[0]
    page.goto(f"{live_server.url}/experiments/{experiment.pk}/")
    for figure in ("funnel", "pass-at-k", "by-category", "by-complexity"):
        page.wait_for_selector(f"#{figure}[data-rendered=true]", timeout=15000)
    assert page.locator("#reports tbody tr").count() == 75 * 3
    with page.expect_download() as download:
        page.click("#download-json")
    assert download.value.suggested_filename.endswith("_grading_report.json")
    shot(page, "experiment-full")
    assert page.console_errors == []


def test_published_leaderboard_and_comparing_two_published_entries(page, live_server):
    """Every README row is on the leaderboard with its figures as printed, footnotes next
    to the figures they mark, and two published entries compare per split."""
    from benchmark.published import entries_from_yaml
    from webapp.results.management.commands.load_published_results import DEFAULT

    call_command("load_published_results")
    entries = entries_from_yaml(DEFAULT.read_text(encoding="utf-8"))
    page.goto(live_server.url + "/")
    table = page.locator("#leaderboard").inner_text()
    titles = page.locator("#leaderboard td[data-split]").evaluate_all(
        "cells => cells.map(c => c.title).join('\\n')"
    )
    for entry in entries:
        assert entry.agent in table
        for figure in entry.figures.values():
            # To the site's one decimal, and as printed on hover.
            assert f"{figure.mean:.1f}" in table and f"± {figure.standard_error:.1f}" in table
            assert f"as published: {figure.mean} ± {figure.standard_error}" in titles
    notes = page.locator("#leaderboard-footnotes").inner_text()
    assert "padding incomplete seeds" in notes
    shot(page, "published-leaderboard")

    picks = [
        Experiment.objects.get(name__startswith="R&D-Agent × o3 + GPT-4.1"),
        Experiment.objects.get(name__startswith="ML-Master × deepseek-r1"),
    ]
    for experiment in picks:
        page.check(f'tr[data-experiment="{experiment.pk}"] input.compare-pick')
    page.click("#compare-button")
    page.wait_for_selector("table.unpaired-comparison")
    verdicts = page.locator("#verdicts").inner_text()
    assert "unpaired: from published figures" in verdicts
    rows = page.locator("table.unpaired-comparison tbody tr")
    assert rows.count() == 4  # All, Low, Medium, High
    # All: 30.22 ± 0.89 vs 29.33 ± 0.77 -> +0.89, 95% interval -1.42 to 3.20 (one decimal)
    assert "0.9" in rows.nth(0).inner_text() and "-1.4 to 3.2" in rows.nth(0).inner_text()
    page.wait_for_selector("#compare-split-bars[data-rendered=true]", timeout=15000)
    assert page.locator("#compare-split-bars g.trace.bars").count() == 2
    assert "no competition in common" not in page.content()
    shot(page, "compare-published")
    assert page.console_errors == []


@pytest.mark.slow
def test_clean_subset_follows_a_known_issue_added_in_the_admin(
    page, live_server, site, celery_worker_process, django_user_model
):
    """An admin adds a known issue; the leaderboard's clean view changes by itself (the
    curation marks the figures due and the worker recomputes them)."""
    from webapp.results.models import GradeReport

    django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-1234")
    medalled = (
        GradeReport.objects.filter(experiment=site, is_current=True, any_medal=True)
        .values_list("competition__slug", flat=True)
        .first()
    )
    cell = f'tr[data-experiment="{site.pk}"] td[data-split="low"]'

    def clean_low() -> str:
        page.goto(live_server.url + "/?clean=1")
        return page.locator(cell).get_attribute("data-value")

    before = clean_low()
    page.goto(live_server.url + "/admin/competitions/knownissue/add/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw-root-1234")
    page.click("input[type=submit]")
    page.select_option("#id_competition", label=medalled)
    page.select_option("#id_kind", "leakage")
    page.fill("#id_note", "The test set leaks through the file names.")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")
    after = before
    for _ in range(60):
        after = clean_low()
        if after != before:
            break
        page.wait_for_timeout(500)
    shot(page, "leaderboard-clean-after-known-issue")
    assert after != before, f"clean-subset Any Medal % stayed {before}"


# Each cell's text box (a Range over its contents) and whether it spills out of its cell.
CELL_BOXES = """() => {
  const table = document.querySelector('table');
  return Array.from(table.rows).map(row => Array.from(row.cells).map(cell => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    const r = range.getBoundingClientRect();
    return {x: r.x, y: r.y, width: r.width, height: r.height,
            spills: cell.scrollWidth > cell.clientWidth + 1, text: cell.innerText.trim()};
  }));
}"""


def test_published_leaderboard_fits_a_1280_window(page, live_server):
    """With MLE-bench's published entries loaded, the leaderboard fits a 1280 px window:
    no horizontal scroll, one agent cell, no cell's text over another's."""
    call_command("load_published_results")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(live_server.url + "/")
    page.wait_for_selector("#leaderboard-dots[data-rendered=true]", timeout=15000)
    assert page.evaluate("document.querySelector('table').id") == "leaderboard"
    headers = [h.inner_text().strip(" ↕↑↓") for h in page.locator("#leaderboard thead th").all()]
    splits = ["Low (Lite)", "Medium", "High", "All"]
    assert headers == [
        "",
        "#",
        "Agent",
        *splits,
        "Seeds",
        "Class",
        "Run",
        "Conditions",
        "Integrity",
    ], headers
    geometry = page.evaluate(
        """() => {
          const table = document.querySelector('table');
          const box = table.getBoundingClientRect();
          return {scrollWidth: table.scrollWidth, left: box.left, right: box.right,
                  inner: window.innerWidth, page: document.documentElement.scrollWidth,
                  wrap: table.parentElement.scrollWidth, wrapShown: table.parentElement.clientWidth};
        }"""
    )
    margin = geometry["left"]  # the page's side margin, on each side
    assert geometry["inner"] == 1280
    assert geometry["scrollWidth"] <= 1280 - 2 * margin, geometry
    assert geometry["right"] <= 1280 - margin, geometry
    assert geometry["page"] <= 1280 and geometry["wrap"] <= geometry["wrapShown"], geometry
    # The narrowest the table can be laid out (its columns' minimum widths) fits as well.
    narrowest = page.evaluate(
        """() => { const t = document.querySelector('table'); t.style.width = '1px';
                   const w = t.scrollWidth; t.style.width = ''; return w; }"""
    )
    assert narrowest <= 1280 - 2 * margin, narrowest
    rows = page.evaluate(CELL_BOXES)
    assert len(rows) == 1 + Experiment.objects.count()
    for cells in rows:
        for i, a in enumerate(cells):
            assert not a["spills"], a
            for b in cells[i + 1 :]:
                if a["width"] and b["width"]:
                    assert not _overlap(a, b), (a, b)
    shot(page, "leaderboard-1280")
    # What covers the middle of each cell of the first rows is that cell (nothing drawn over).
    covered = page.evaluate(
        """() => Array.from(document.querySelectorAll('#leaderboard tbody tr')).slice(0, 8)
          .flatMap(row => Array.from(row.cells)).filter(cell => {
            cell.scrollIntoView({block: 'center'});
            const r = cell.getBoundingClientRect();
            const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
            return !cell.contains(hit);
          }).map(cell => cell.innerText)"""
    )
    assert covered == []
    # The table's first rows at full size, in the window, with the chart above folded away.
    page.evaluate("document.getElementById('leaderboard-dots-box').open = false")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / "leaderboard-1280-table-top.png"))
    # The folded columns still sort: Run by date, Conditions by leakage first.
    page.click('#leaderboard th:has-text("Run")')
    dates = [v.get_attribute("data-value") for v in page.locator("#leaderboard td.run").all()]
    assert dates == sorted(dates, reverse=True)
    page.click('#leaderboard th:has-text("Conditions")')
    first = page.locator("#leaderboard tbody tr").first.locator("td.conditions")
    assert "leak" in first.inner_text()
    assert page.console_errors == []


def _overlap(a, b) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )
