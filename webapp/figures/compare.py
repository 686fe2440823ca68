"""Compare: funnels side by side and Any Medal % by split."""

from collections.abc import Sequence

from webapp.figures.experiment import stacked_labels
from webapp.figures.layout import LAYOUT_BASE, narrow, percent_axis


def funnels_side_by_side(series: Sequence[tuple[str, Sequence[dict]]]) -> dict:
    """Grouped funnel bars, one group per stage and one colour per experiment."""
    return {
        "data": [
            {
                "type": "bar",
                "name": label,
                "x": [s["label"] for s in stages],
                "y": [s["mean"] for s in stages],
                "error_y": {
                    "type": "data",
                    "array": [s["standard_error"] or 0 for s in stages],
                    "visible": True,
                },
                "hovertemplate": "%{x}: %{y:.1f}%<extra>" + label + "</extra>",
            }
            for label, stages in series
        ],
        "layout": {
            **LAYOUT_BASE,
            "barmode": "group",
            "yaxis": {"title": {"text": "% of competitions"}, "range": [0, 105]},
            "legend": {"orientation": "h", "y": -0.2},
        },
        "narrow": narrow(stacked_labels([s["label"] for s in series[0][1]] if series else [])),
    }


def split_bars(series: Sequence[tuple[str, dict]], splits: Sequence[tuple[str, str]]) -> dict:
    """Any Medal % per split, one bar colour per experiment, ± SEM as error bars.
    ``series``: (name, split -> {"mean", "standard_error"}); ``splits``: (key, label)."""
    return {
        "data": [
            {
                "type": "bar",
                "name": name,
                "x": [label for key, label in splits],
                "y": [(values.get(key) or {}).get("mean") for key, _ in splits],
                "error_y": {
                    "type": "data",
                    "array": [
                        (values.get(key) or {}).get("standard_error") or 0 for key, _ in splits
                    ],
                    "visible": True,
                },
                "hovertemplate": "%{x}: %{y:.2f}% ± %{error_y.array:.2f}<extra>"
                + name
                + "</extra>",
            }
            for name, values in series
        ],
        "layout": {
            **LAYOUT_BASE,
            "barmode": "group",
            "yaxis": percent_axis(
                "Any Medal %",
                [(values.get(key) or {}).get("mean") for _, values in series for key, _ in splits],
            ),
            "legend": {"orientation": "h", "y": -0.2},
        },
        # A phone: the experiments' names (the legend) cut to a line each.
        "narrow": narrow({}),
    }
