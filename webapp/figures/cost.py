"""Plotly figures of what runs cost in tokens, as plain dicts: data in, figure out
(``webapp.figures``' conventions; these live apart so that the cost views stay one piece)."""

from collections.abc import Sequence

from webapp.figures import LAYOUT_BASE, percent_axis


def medal_against_tokens(points: Sequence[dict]) -> dict:
    """Any Medal % (± SEM) against tokens per run, one point per experiment:
    ``[{"label", "tokens_per_run", "mean", "standard_error", "source"}]``. Declared
    figures are drawn hollow."""
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "markers",
                "name": p["label"],
                "x": [p["tokens_per_run"]],
                "y": [p["mean"]],
                "error_y": {"type": "data", "array": [p["standard_error"] or 0], "visible": True},
                "marker": {
                    "size": 11,
                    "symbol": "circle-open" if p["source"] == "declared" else "circle",
                },
                "hovertemplate": "%{x:,.0f} tokens per run: %{y:.1f}% any medal<extra>"
                + p["label"]
                + f" ({p['source']})</extra>",
            }
            for p in points
        ],
        "layout": {
            **LAYOUT_BASE,
            "showlegend": True,
            "legend": {"orientation": "h", "y": -0.25},
            "xaxis": {
                "title": {"text": "tokens per run (prompt + completion)"},
                "rangemode": "tozero",
                "tickformat": "~s",
            },
            "yaxis": percent_axis("Any Medal %", [p["mean"] for p in points]),
        },
    }


def pass_at_k_against_tokens(curves: Sequence[tuple[str, Sequence[dict]]]) -> dict:
    """pass@k against k × tokens per run, one line per (label, [{"k", "percentage",
    "tokens"}])."""
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": label,
                "x": [p["tokens"] for p in points],
                "y": [p["percentage"] for p in points],
                "customdata": [p["k"] for p in points],
                "hovertemplate": "pass@%{customdata} at %{x:,.0f} tokens: %{y:.1f}%<extra>"
                + label
                + "</extra>",
            }
            for label, points in curves
        ],
        "layout": {
            **LAYOUT_BASE,
            "xaxis": {
                "title": {"text": "k × tokens per run"},
                "rangemode": "tozero",
                "tickformat": "~s",
            },
            "yaxis": percent_axis(
                "pass@k, Any Medal %", [p["percentage"] for _, points in curves for p in points]
            ),
            "legend": {"orientation": "h", "y": -0.25},
        },
    }
