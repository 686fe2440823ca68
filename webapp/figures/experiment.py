"""An experiment's page: the funnel, the breakdowns by category and complexity, pass@k and
the score over hours."""

from collections.abc import Sequence

from webapp.figures.layout import LAYOUT_BASE, narrow, percent_axis


def funnel(stages: Sequence[dict]) -> dict:
    """Bar per funnel stage: ``stages`` items have ``label``, ``mean``, ``standard_error``
    and ``per_seed`` (percentages); per-seed values are drawn as points over the bars."""
    labels = [s["label"] for s in stages]
    data = [
        {
            "type": "bar",
            "x": labels,
            "y": [s["mean"] for s in stages],
            "error_y": {
                "type": "data",
                "array": [s["standard_error"] or 0 for s in stages],
                "visible": True,
            },
            "marker": {"color": ["#4a6fa5", "#5b8bd0", "#7aa6e0", "#2e7d32"][: len(stages)]},
            "name": "mean ± SEM",
            "hovertemplate": "%{x}: %{y:.1f}%<extra></extra>",
        }
    ]
    xs, ys = [], []
    for s in stages:
        for value in s.get("per_seed") or []:
            xs.append(s["label"])
            ys.append(value)
    if xs:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": xs,
                "y": ys,
                "name": "per seed",
                "marker": {"color": "#222", "size": 6, "opacity": 0.6},
                "hovertemplate": "%{x}: %{y:.1f}%<extra>seed</extra>",
            }
        )
    return {
        "data": data,
        "layout": {
            **LAYOUT_BASE,
            "yaxis": {"title": {"text": "% of competitions"}, "range": [0, 105]},
            "showlegend": True,
            "legend": {"orientation": "h", "y": -0.2},
        },
        # A phone: stage names on two lines, level (tilted, they ran into the legend and
        # off the box), and the legend below them.
        "narrow": narrow(stacked_labels(labels)),
    }


def stacked_labels(labels: Sequence[str]) -> dict:
    """A layout whose x axis writes each category's words one under the other, level,
    with the legend under them."""
    return {
        "xaxis": {
            "tickvals": list(labels),
            "ticktext": [label.replace(" ", "<br>") for label in labels],
            "tickangle": 0,
        },
        "margin": {"b": 70},
        "legend": {"orientation": "h", "y": -0.32, "yanchor": "top"},
    }


def breakdown_bars(groups: dict, *, title: str = "") -> dict:
    """Any Medal % per group (category or complexity): ``groups`` maps a name to
    ``{"num_competitions", "metrics": {"any_medal_percentage": {mean, standard_error}}}``
    as ``benchmark.aggregate`` gives them."""
    names = list(groups)
    means = [groups[n]["metrics"]["any_medal_percentage"]["mean"] for n in names]
    errors = [groups[n]["metrics"]["any_medal_percentage"]["standard_error"] for n in names]
    labels = [f"{n} ({groups[n]['num_competitions']})" for n in names]
    return {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                "y": labels,
                "x": means,
                "error_x": {"type": "data", "array": errors, "visible": True},
                "marker": {"color": "#5b8bd0"},
                "hovertemplate": "%{y}: %{x:.1f}%<extra></extra>",
            }
        ],
        "layout": {
            **LAYOUT_BASE,
            "margin": {"l": 220, "r": 20, "t": 30, "b": 50},
            "title": {"text": title, "font": {"size": 14}},
            "xaxis": percent_axis("Any Medal % (mean ± SEM)", means),
            "yaxis": {"automargin": True, "autorange": "reversed"},
            "height": max(260, 28 * len(names) + 90),
        },
        # A phone: the names take the room they need (220 px left the bars a third of the
        # box), and the axis title fits.
        "narrow": narrow(
            {"margin": {"l": 10, "r": 12}, "xaxis": {"title": {"text": "Any Medal %"}}}
        ),
    }


def _k_step(largest_k: int, most_ticks: int = 12) -> int:
    """A whole tick step for the k axis: every k up to 12 seeds, then 2, 5, 10, 20, ..."""
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500):
        if largest_k / step <= most_ticks:
            return step
    return max(1, largest_k // most_ticks)


def pass_at_k_curves(curves: Sequence[tuple[str, Sequence[dict]]]) -> dict:
    """pass@k (Any Medal) against k, one line per (label, [{"k", "percentage"}])."""
    largest_k = max((p["k"] for _, points in curves for p in points), default=1)
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": label,
                "x": [p["k"] for p in points],
                "y": [p["percentage"] for p in points],
                "hovertemplate": "pass@%{x}: %{y:.1f}%<extra>" + label + "</extra>",
            }
            for label, points in curves
        ],
        "layout": {
            **LAYOUT_BASE,
            "xaxis": {"title": {"text": "k (seeds)"}, "dtick": _k_step(largest_k), "tick0": 0},
            "yaxis": percent_axis(
                "pass@k, Any Medal %",
                [p["percentage"] for _, points in curves for p in points],
            ),
            "legend": {"orientation": "h", "y": -0.25},
        },
        "narrow": narrow({}),
    }


def time_scaling(points: Sequence[dict]) -> dict:
    """Any Medal % against elapsed hours, from graded hourly snapshots."""
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "line": {"shape": "hv"},
                "x": [p["elapsed_hours"] for p in points],
                "y": [p["any_medal_percentage"] for p in points],
                "hovertemplate": "%{x:.2f} h: %{y:.1f}%<extra></extra>",
            }
        ],
        "layout": {
            **LAYOUT_BASE,
            "xaxis": {"title": {"text": "elapsed hours"}, "rangemode": "tozero"},
            "yaxis": percent_axis(
                "Any Medal % (latest snapshot)", [p["any_medal_percentage"] for p in points]
            ),
        },
    }
