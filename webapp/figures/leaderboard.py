"""The leaderboard's chart: each entry's Any Medal % per split, as dots."""

from collections.abc import Sequence

from webapp.figures.layout import LAYOUT_BASE, SPLIT_COLOURS, narrow, percent_axis, row_range


def leaderboard_dots_from_table(
    entries: Sequence[dict], splits: Sequence[tuple[str, str]], table_id: str
) -> dict:
    """``leaderboard_dots`` without its figures, which the page's table already holds: each
    trace names the split whose cells (``static/js/figures.js``) fill its dots (the
    ``data-value`` mean of ``td[data-split]``, its "± SEM") and the rows' names (the
    agent link's title), so each number is sent once."""
    figure = leaderboard_dots(entries, splits)
    shown = [key for key, label in splits for t in figure["data"] if t["name"] == label]
    for trace in figure["data"]:
        del trace["x"], trace["y"], trace["error_x"]["array"]
    figure["table"] = {"id": table_id, "splits": shown}
    return figure


def leaderboard_dots(entries: Sequence[dict], splits: Sequence[tuple[str, str]]) -> dict:
    """Any Medal % per split as dots with ± SEM bars, one row per leaderboard entry (in
    the table's order, best at the top), one colour per split. ``entries``: the
    leaderboard's (``name``, ``splits`` -> {"mean", "standard_error"}); ``splits``:
    (key, label). Rows are labelled with the entry's name."""
    counts: dict[str, int] = {}
    for e in entries:
        counts[e["name"]] = counts.get(e["name"], 0) + 1
    # One row per entry: two entries of one name are told apart by their id.
    names = [e["name"] if counts[e["name"]] == 1 else f"{e['name']} #{e['id']}" for e in entries]
    data = []
    for i, (key, label) in enumerate(splits):
        values = [(e["splits"].get(key) or {}) for e in entries]
        if not any(v.get("mean") is not None for v in values):
            continue
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": label,
                "x": [v.get("mean") for v in values],
                "y": names,
                "error_x": {
                    "type": "data",
                    "array": [v.get("standard_error") or 0 for v in values],
                    "visible": True,
                    "thickness": 1.5,
                    "width": 3,
                },
                "marker": {"size": 9, "color": SPLIT_COLOURS[i % len(SPLIT_COLOURS)]},
                "hovertemplate": "%{y}, " + label + ": %{x:.1f}% ± %{error_x.array:.1f}"
                "<extra></extra>",
            }
        )
    means = [x for trace in data for x in trace["x"]]
    return {
        "data": data,
        "layout": {
            **LAYOUT_BASE,
            "margin": {"l": 20, "r": 20, "t": 110, "b": 20},
            # The scale at the top, where the reading starts (a board is hundreds of rows).
            "xaxis": {**percent_axis("Any Medal % (mean ± SEM)", means), "side": "top"},
            # Best at the top, and exactly the rows: a scatter's autorange would pad each end
            # by 5% of them (blank bands of ten rows on a 200-row board).
            "yaxis": {"automargin": True, "type": "category", "range": row_range(len(names))},
            # .figure is at least 360 px high: fill it rather than leave a gap.
            "height": max(360, 26 * len(names) + 120),
            "legend": {
                "orientation": "h",
                "x": 0,
                "y": 1,
                "yref": "container",
                "yanchor": "top",
            },
            "showlegend": True,
        },
        # A phone: the names cut to half the box (the plot had some 80 px of 360), the
        # legend across the whole box, not squeezed beside the names, a shorter title.
        "narrow": narrow(
            {
                "xaxis": {"title": {"text": "Any Medal %"}},
                "yaxis": {"tickfont": {"size": 11}},
                "legend": {"xref": "container", "x": 0, "font": {"size": 11}},
                "margin": {"l": 8, "r": 12},
            },
            shorten_labels_of="y",
            label_share=0.45,
            char_px=6.2,
        ),
    }


def medal_against_cost(points: Sequence[dict], axis_title: str, tick_format: str) -> dict:
    """Any Medal % (± SEM) against a cost per run, one point per entry (``label``,
    ``cost``, ``mean``, ``standard_error``, ``frontier``), and the Pareto frontier (the
    entries no other beats: as cheap or cheaper with a higher figure) as a step line."""
    frontier = sorted((p for p in points if p["frontier"]), key=lambda p: p["cost"])
    data = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": "entries",
            "x": [p["cost"] for p in points],
            "y": [p["mean"] for p in points],
            "text": [p["label"] for p in points],
            "error_y": {
                "type": "data",
                "array": [p["standard_error"] or 0 for p in points],
                "visible": True,
                "thickness": 1.2,
            },
            "marker": {
                "size": 9,
                "color": [SPLIT_COLOURS[0] if p["frontier"] else "#9aa5b1" for p in points],
            },
            "hovertemplate": "%{text}: %{y:.1f}% any medal at %{x:" + tick_format + "}"
            "<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": "Pareto frontier",
            "line": {"shape": "hv", "dash": "dot", "color": SPLIT_COLOURS[0]},
            "x": [p["cost"] for p in frontier],
            "y": [p["mean"] for p in frontier],
            "hoverinfo": "skip",
        },
    ]
    if len(points) <= LABELLED_POINTS:
        data[0]["mode"] = "markers+text"
        data[0]["textposition"] = "top center"
        data[0]["textfont"] = {"size": 11}
    return {
        "data": data,
        "layout": {
            **LAYOUT_BASE,
            "showlegend": True,
            "legend": {"orientation": "h", "y": -0.3},
            "xaxis": {
                "title": {"text": axis_title},
                "rangemode": "tozero",
                "tickformat": tick_format,
            },
            "yaxis": percent_axis("Any Medal %", [p["mean"] for p in points]),
        },
    }


# Up to this many points carry their names on the chart; more would cover each other.
LABELLED_POINTS = 12
