"""Plotly figures as plain dicts (Plotly's JSON schema): data in, figure out.

Pure functions with no Django, so they are tested without a browser; pages embed the
JSON and draw it with Plotly's JS served from our static files. Building the dicts
directly (rather than through plotly.graph_objects) keeps page rendering cheap.
"""

from webapp.figures.compare import funnels_side_by_side, split_bars
from webapp.figures.competition import histogram_bins, leaderboard_distribution, score_axis_range
from webapp.figures.experiment import breakdown_bars, funnel, pass_at_k_curves, time_scaling
from webapp.figures.layout import LAYOUT_BASE, MEDAL_COLOURS, narrow, percent_axis, row_range
from webapp.figures.leaderboard import (
    leaderboard_dots,
    leaderboard_dots_from_table,
    medal_against_cost,
)

__all__ = [
    "narrow",
    "percent_axis",
    "row_range",
    "leaderboard_distribution",
    "histogram_bins",
    "score_axis_range",
    "funnel",
    "breakdown_bars",
    "pass_at_k_curves",
    "time_scaling",
    "funnels_side_by_side",
    "split_bars",
    "leaderboard_dots_from_table",
    "leaderboard_dots",
    "medal_against_cost",
    "LAYOUT_BASE",
    "MEDAL_COLOURS",
]
