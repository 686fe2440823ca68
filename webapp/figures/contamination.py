"""The contamination figures as Plotly dicts, data in, figure out (as ``webapp.figures``):
medal rate against each competition's Kaggle deadline (the paper's Figure 9) and results
against the base model's familiarity with the competition (its Figure 5). Their input is
``benchmark.contamination``'s output, one series per experiment."""

from collections.abc import Sequence

from webapp.core.formatting import format_p, format_percent, format_statistic
from webapp.figures import LAYOUT_BASE

SERIES_COLOURS = ("#4a6fa5", "#c0392b", "#2e7d32", "#d4a017", "#7b52ab", "#8a8d91")
# Medal rates and percentiles are 0-100: a little room above and below keeps the points
# at 0 and 100 whole.
PERCENT_RANGE = [-4, 104]


def correlation_text(correlation: dict, symbol: str) -> str:
    """ "ρ = -0.12, p = 0.31, n = 40", or the reason there is none."""
    if "statistic" not in correlation:
        return correlation.get("reason", "")
    return (
        f"{symbol} = {format_statistic(correlation['statistic'])}, "
        f"{format_p(correlation['p_value'])}, n = {correlation['n']}"
    )


def _medal_text(point: dict) -> str:
    seeds = point["seeds"]
    return (
        f"medal rate {format_percent(point['medal_rate'])} "
        f"({point['medals']} of {seeds} seed{'s' if seeds != 1 else ''})"
    )


def deadline_scatter(series: Sequence[tuple[str, dict]]) -> dict:
    """Medal rate (%) against Kaggle deadline, one point per competition, per experiment
    (``(name, date_view)``): its trend line dashed, its knowledge cutoff as a vertical
    line; the legend carries each experiment's Spearman correlation."""
    data, shapes, annotations = [], [], []
    for i, (name, view) in enumerate(series):
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        points = view["points"]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"{name} ({correlation_text(view['correlation'], 'ρ')})",
                "x": [p["deadline"] for p in points],
                "y": [p["medal_rate"] for p in points],
                "text": [
                    f"{p['competition_id']}<br>deadline {p['deadline']}<br>{_medal_text(p)}"
                    for p in points
                ],
                "hovertemplate": "%{text}<extra></extra>",
                "marker": {"color": colour, "size": 9, "opacity": 0.8},
            }
        )
        trend = view.get("trend")
        if trend:
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": f"{name}: trend {format_statistic(trend['slope_per_year'], 1)} "
                    "points a year",
                    "x": [trend["start"]["deadline"], trend["end"]["deadline"]],
                    "y": [trend["start"]["medal_rate"], trend["end"]["medal_rate"]],
                    "line": {"color": colour, "dash": "dash", "width": 2},
                    "hoverinfo": "skip",
                }
            )
        cutoff = view.get("cutoff")
        if cutoff:
            shapes.append(
                {
                    "type": "line",
                    "xref": "x",
                    "yref": "paper",
                    "x0": cutoff["cutoff"],
                    "x1": cutoff["cutoff"],
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": colour, "width": 2, "dash": "dot"},
                }
            )
            annotations.append(
                {
                    "x": cutoff["cutoff"],
                    "y": 1,
                    "xref": "x",
                    "yref": "paper",
                    "yanchor": "bottom",
                    "yshift": 16 * i,
                    "text": f"knowledge cutoff {cutoff['cutoff']}"
                    + (f" ({name})" if len(series) > 1 else ""),
                    "showarrow": False,
                    "font": {"color": colour, "size": 11},
                }
            )
    return {
        "data": data,
        "layout": {
            **LAYOUT_BASE,
            "margin": {**LAYOUT_BASE["margin"], "t": 30 + 16 * max(0, len(annotations) - 1)},
            "xaxis": {"title": {"text": "Kaggle final submission deadline"}, "type": "date"},
            "yaxis": {"title": {"text": "medal rate over seeds (%)"}, "range": PERCENT_RANGE},
            "shapes": shapes,
            "annotations": annotations,
            "showlegend": True,
            "legend": {"orientation": "h", "y": -0.25},
        },
    }


def familiarity_scatter(series: Sequence[tuple[str, dict]], measure: str) -> dict:
    """``measure`` ("medal_rate" or "percentile") against the base model's familiarity
    (mean token probability), one point per competition, per experiment (``(name,
    familiarity_view)``); the legend carries each experiment's Pearson r."""
    key, label = {
        "medal_rate": ("medal_rate", "medal rate over seeds (%)"),
        "percentile": ("mean_percentile", "mean percentile over seeds"),
    }[measure]
    data = []
    for i, (name, view) in enumerate(series):
        points = [p for p in view["points"] if p[key] is not None]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"{name} ({correlation_text(view[measure], 'r')})",
                "x": [p["familiarity"] for p in points],
                "y": [p[key] for p in points],
                "text": [
                    f"{p['competition_id']}<br>familiarity {format_statistic(p['familiarity'], 3)}"
                    f"<br>{_medal_text(p)}"
                    + (
                        f", mean percentile {format_statistic(p['mean_percentile'], 1)}"
                        if p["mean_percentile"] is not None
                        else ""
                    )
                    for p in points
                ],
                "hovertemplate": "%{text}<extra></extra>",
                "marker": {"color": SERIES_COLOURS[i % len(SERIES_COLOURS)], "size": 9},
            }
        )
    return {
        "data": data,
        "layout": {
            **LAYOUT_BASE,
            "xaxis": {
                "title": {"text": "familiarity (mean token probability)"},
                "tickformat": ".2f",
            },
            "yaxis": {"title": {"text": label}, "range": PERCENT_RANGE},
            "showlegend": True,
            "legend": {"orientation": "h", "y": -0.3},
        },
    }
