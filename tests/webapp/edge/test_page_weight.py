"""Page weight: static files under hashed names with a year's cache, Plotly's partial
bundle, a histogram sent as its bins' counts, and the leaderboard's figures sent once."""

import json
import re

import pytest
from django.templatetags.static import static

from tests.support.browser import shot
from tests.support.factories import import_runs
from webapp import figures
from webapp.competitions.services import catalogue_sync
from webapp.results.models import Experiment

HASHED = re.compile(r"\.[0-9a-f]{12}\.\w+$")
YEAR = 365 * 24 * 3600


@pytest.mark.django_db
def test_pages_link_hashed_static_files_cached_for_a_year(client):
    html = client.get("/").content.decode()
    urls = re.findall(r'(?:href|src)="(/static/[^"]+)"', html)
    assert len(urls) >= 3, urls  # the stylesheet, the icon, the table's script
    plotly = static("vendor/plotly/plotly-basic.min.js")
    for url in [*urls, plotly]:
        assert HASHED.search(url), url
        response = client.get(url)
        assert response.status_code == 200, url
        assert f"max-age={YEAR}" in response["Cache-Control"], (url, response["Cache-Control"])
        assert "immutable" in response["Cache-Control"]
        response.close()
    # Compressed for a client that takes it (webapp/project/static_storage.py).
    stylesheet = next(url for url in urls if url.endswith(".css"))
    packed = client.get(stylesheet, HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert packed["Content-Encoding"] == "gzip", stylesheet
    packed.close()
    # A name without its hash (nothing links it) is still served, briefly cached: it changes.
    unhashed = client.get("/static/css/site.css", HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert unhashed.status_code == 200
    assert f"max-age={YEAR}" not in unhashed["Cache-Control"]
    assert "Content-Encoding" not in unhashed  # only the linked names are compressed
    unhashed.close()


def test_collectstatic_compresses_the_linked_names_only(tmp_path, settings):
    """The hashed copies the pages link are compressed; originals and source maps are not
    (half of collectstatic's work went to those)."""
    from django.core.management import call_command

    settings.STATIC_ROOT = tmp_path / "static"
    call_command("collectstatic", interactive=False, verbosity=0)
    gz = {
        p.relative_to(settings.STATIC_ROOT).as_posix() for p in settings.STATIC_ROOT.rglob("*.gz")
    }
    manifest = json.loads((settings.STATIC_ROOT / "staticfiles.json").read_text())["paths"]
    assert f"{manifest['css/site.css']}.gz" in gz
    assert f"{manifest['vendor/plotly/plotly-basic.min.js']}.gz" in gz
    assert "css/site.css.gz" not in gz
    assert not [name for name in gz if name.endswith(".map.gz")]
    assert gz <= {f"{name}.gz" for name in manifest.values()}


def test_the_bundle_draws_every_trace_the_figures_use():
    """Plotly's basic bundle has scatter, bar and pie: every figure's traces are of those."""
    bundle_traces = {"scatter", "bar", "pie"}
    scores = [0.5 + i / 1000 for i in range(300)]
    drawn = [
        figures.leaderboard_distribution(
            scores,
            {"gold": 0.78, "silver": 0.75, "bronze": 0.7, "median": 0.65},
            lower_is_better=False,
            agent_scores=[("agent", "agent (seed 0)", 0.72)],
        ),
        figures.funnel([{"label": "Valid", "mean": 50, "standard_error": 2, "per_seed": [49]}]),
        figures.leaderboard_dots(
            [{"id": 1, "name": "a", "splits": {"all": {"mean": 10, "standard_error": 1}}}],
            [("all", "All")],
        ),
    ]
    assert {trace["type"] for figure in drawn for trace in figure["data"]} <= bundle_traces


@pytest.mark.parametrize(
    "values, centres, counts, size",
    [
        # As Plotly 4.1.1's histogram (nbinsx 60) bins them, read from its calcdata.
        ([0.1, 0.2, 0.3], [0.1, 0.3], [1, 1], 0.005),
        ([1, 2, 2, 3, 3, 3, 10], [1.0, 10.0], [1, 1], 0.2),
        ([0.5] * 10 + [0.75] * 10 + [1.0] * 5, [0.5, 1.0], [10, 5], 0.01),
        ([i / 100 for i in range(101)], [0.01, 1.01], [2, 1], 0.02),
    ],
)
def test_histogram_bins_are_plotlys(values, centres, counts, size):
    got_centres, got_counts, got_size = figures.histogram_bins(values, 60)
    assert got_size == pytest.approx(size)
    assert [got_centres[0], got_centres[-1]] == pytest.approx(centres)
    assert [got_counts[0], got_counts[-1]] == counts
    assert sum(got_counts) == len(values)


@pytest.mark.django_db
def test_leaderboard_sends_the_dot_plots_figures_once(client, imported):
    """The dot plot names the table's columns it draws; its numbers are the table's."""
    html = client.get("/").content.decode()
    figure = json.loads(
        re.search(r'<script id="leaderboard-dots-data"[^>]*>(.*?)</script>', html, re.S).group(1)
    )
    assert figure["table"]["id"] == "leaderboard" and figure["table"]["splits"]
    for trace in figure["data"]:
        assert "x" not in trace and "y" not in trace and "array" not in trace["error_x"]
    for key in figure["table"]["splits"]:
        assert re.search(rf'data-split="{key}" data-value="[\d.]+">[\d.]+ <span class="pm">', html)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_leaderboard_dots_and_tooltips_are_drawn_from_the_table(page, live_server, tmp_path):
    catalogue_sync()
    import_runs(tmp_path / "runs", {"aide-o1": 3, "mlab-gpt4o": 2})
    aide = Experiment.objects.get(name="aide-o1")
    Experiment.objects.filter(pk=aide.pk).update(
        internet_access=True, test_feedback=None, source_available=False, known_leakage=False
    )
    page.goto(live_server.url + "/")
    page.wait_for_selector("#leaderboard-dots[data-rendered=true]", timeout=15000)
    drawn = page.evaluate(
        """() => document.getElementById('leaderboard-dots').data.map(
             t => ({split: t.name, x: t.x, y: t.y, e: t.error_x.array}))"""
    )
    cells = page.evaluate(
        """() => [...document.querySelectorAll('#leaderboard tbody tr')].map(r => ({
             name: r.querySelector('td.agent a').title,
             values: Object.fromEntries([...r.querySelectorAll('td[data-split]')].map(
               c => [c.dataset.split, c.textContent.trim()]))}))"""
    )
    assert [t["y"] for t in drawn] == [[c["name"] for c in cells]] * len(drawn)
    splits = dict(
        page.evaluate(
            "() => [...document.querySelectorAll('#leaderboard th[data-split]')]"
            ".map(h => [h.textContent.replace(/[↕↑↓]/g, '').trim(), h.dataset.split])"
        )
    )
    for trace in drawn:
        for x, error, cell in zip(trace["x"], trace["e"], cells, strict=True):
            shown = cell["values"][splits[trace["split"]]]
            if x is None:
                assert shown == "—"
            else:
                assert shown.startswith(f"{x:.1f} ± {error:.1f}"), (shown, x, error)
    row = page.locator(f'tr[data-experiment="{aide.pk}"] td.conditions')
    title = row.get_attribute("title")
    assert "Internet access during the run: yes" in title
    assert "Used feedback from the test set: ?" in title and "Known leakage: no" in title
    net = row.locator('.cond[data-flag="internet_access"]')
    assert net.get_attribute("title") == "Internet access during the run"
    assert row.locator('.cond[data-flag="test_feedback"]').get_attribute("title") == (
        "Used feedback from the test set: not stated"
    )
    shot(page, "page-weight-leaderboard")
    assert page.console_errors == []
