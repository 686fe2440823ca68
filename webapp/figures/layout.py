"""What every figure shares: the layout, the medals' and the splits' colours, the narrow
layout for phones, a percent axis."""

MEDAL_COLOURS = {"gold": "#d4a017", "silver": "#8a8d91", "bronze": "#b06a2c", "median": "#4a6fa5"}


LAYOUT_BASE = {
    "margin": {"l": 60, "r": 20, "t": 30, "b": 50},
    "paper_bgcolor": "rgba(0,0,0,0)",
    "plot_bgcolor": "rgba(0,0,0,0)",
    "font": {"family": "system-ui, sans-serif", "size": 13},
}


# A figure's box narrower than this (a phone) draws with the figure's ``narrow`` layout
# merged over its own (static/js/figures.js, fitNarrow).
NARROW_BELOW_PX = 600


def narrow(layout: dict, **shorten) -> dict:
    """A figure's ``narrow`` part: ``layout`` merged over the figure's layout in a box
    narrower than ``NARROW_BELOW_PX``; with ``shorten_labels_of`` ("x" or "y"), that
    axis's category labels are cut to ``label_share`` of the box at ``char_px`` a
    character (the full name stays in the hover)."""
    return {"below": NARROW_BELOW_PX, "layout": layout, **shorten}


def percent_axis(title: str, values) -> dict:
    """A percentage axis from 0: Plotly's autorange when something is above 0; 0–100
    when everything is 0 or missing (autorange would draw 0–1, which reads as fractions)."""
    axis = {"title": {"text": title}, "rangemode": "tozero"}
    if not any(v for v in values if v is not None):
        axis["range"] = [0, 100]
    return axis


SPLIT_COLOURS = ("#2e7d32", "#5b8bd0", "#d4a017", "#c0392b", "#8a8d91", "#7b52ab", "#b06a2c")


def row_range(rows: int) -> list[float]:
    """A category axis of ``rows`` rows, the first at the top."""
    return [rows - 0.5, -0.5]
