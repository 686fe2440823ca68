"""Page weight: static files under hashed names with a year's cache, Plotly's partial
bundle, a histogram sent as its bins' counts, and the leaderboard's figures sent once."""

import json
import re

import pytest
from django.templatetags.static import static

from webapp import figures

from .test_results_pages import imported  # noqa: F401, F811

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
    # A name without its hash (nothing links it) is still served, briefly cached: it changes.
    unhashed = client.get("/static/css/site.css")
    assert unhashed.status_code == 200
    assert f"max-age={YEAR}" not in unhashed["Cache-Control"]
    unhashed.close()


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
def test_leaderboard_sends_the_dot_plots_figures_once(client, imported):  # noqa: F811
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
