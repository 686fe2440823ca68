"""Plotly figures as plain dicts (Plotly's JSON schema): data in, figure out.

Pure functions with no Django, so they are tested without a browser; pages embed the
JSON and draw it with Plotly's JS served from our static files. Building the dicts
directly (rather than through plotly.graph_objects) keeps page rendering cheap.
"""

import math
from collections.abc import Sequence

from webapp.core.formatting import format_score

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


def leaderboard_distribution(
    scores: Sequence[float],
    thresholds: dict[str, float],
    *,
    lower_is_better: bool,
    agent_scores: Sequence[tuple[str, float]] = (),
    population_label: str = "Human teams",
) -> dict:
    """Histogram of the private leaderboard's scores with the medal lines and the median
    drawn as vertical lines, and each agent score (label, score) as a marker on top."""
    centres, counts, size = histogram_bins(scores, HISTOGRAM_BINS)
    data: list[dict] = [
        {
            # The histogram Plotly would draw from every score, as bars of its bins' counts:
            # the page sends a count per bin, not each team's score, and Plotly's bundle
            # needs no histogram trace.
            "type": "bar",
            "x": centres,
            "y": counts,
            "width": size * (1 - BAR_GAP),
            "customdata": [
                f"{format_score(c - size / 2)} – {format_score(c + size / 2)}" for c in centres
            ],
            "hovertemplate": "%{customdata}: %{y}",
            "name": population_label,
            "marker": {"color": "#c9d3e0"},
        }
    ]
    shapes, annotations = [], []
    # Medal bands: from each medal line to the next better one (gold: to the best score).
    if scores and all(thresholds.get(k) is not None for k in ("gold", "silver", "bronze")):
        best = min(scores) if lower_is_better else max(scores)
        edges = [
            ("gold", thresholds["gold"], best),
            ("silver", thresholds["silver"], thresholds["gold"]),
            ("bronze", thresholds["bronze"], thresholds["silver"]),
        ]
        for key, start, end in edges:
            shapes.append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "paper",
                    "x0": start,
                    "x1": end,
                    "y0": 0,
                    "y1": 1,
                    "fillcolor": MEDAL_COLOURS[key],
                    "opacity": 0.12,
                    "line": {"width": 0},
                    "layer": "below",
                }
            )
    for key in ("gold", "silver", "bronze", "median"):
        value = thresholds.get(key)
        if value is None:
            continue
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": value,
                "x1": value,
                "y0": 0,
                "y1": 1,
                "line": {
                    "color": MEDAL_COLOURS[key],
                    "width": 2,
                    "dash": "dot" if key == "median" else "solid",
                },
            }
        )
        annotations.append(
            {
                "x": value,
                "y": 1.0,
                "yanchor": "bottom",
                "xref": "x",
                "yref": "paper",
                "text": key,
                "hovertext": f"{key}: {format_score(value)}",
                "showarrow": False,
                "font": {"color": MEDAL_COLOURS[key], "size": 11},
            }
        )
    shown = score_axis_range(scores, thresholds)
    rows = _stagger_labels(
        annotations, [*scores, *(a["x"] for a in annotations)] if shown is None else shown
    )
    data.extend(_agent_markers(agent_scores, shown))
    if shown is not None:
        beyond = sum(1 for s in scores if not shown[0] <= s <= shown[1])
        if beyond:
            data[0]["name"] = f"{population_label} ({beyond} beyond the axis)"
    direction = "lower is better" if lower_is_better else "higher is better"
    return {
        "data": data,
        "layout": {
            **LAYOUT_BASE,
            "margin": {**LAYOUT_BASE["margin"], "t": 30 + LABEL_ROW_PX * (rows - 1), "b": 110},
            "shapes": shapes,
            "annotations": annotations,
            "xaxis": {
                "title": {"text": f"score ({direction})"},
                **({"range": list(shown)} if shown is not None else {}),
            },
            "yaxis": {"title": {"text": "teams"}},
            # The agents' markers, one row per agent above the axis, whatever the counts.
            "yaxis2": {
                "overlaying": "y",
                "range": [0, 1],
                "visible": False,
                "fixedrange": True,
            },
            "showlegend": True,
            "legend": {"orientation": "h", "y": -0.3, "yanchor": "top"},
            "bargap": BAR_GAP,
        },
    }


HISTOGRAM_BINS = 60  # at most, as Plotly's histogram ``nbinsx``
BAR_GAP = 0.02  # between the histogram's bars, as a share of a bin
_ROUNDING = 1e-9  # Plotly's allowance for float error when it puts a value in a bin


def histogram_bins(values: Sequence[float], most: int) -> tuple[list[float], list[int], float]:
    """The bins Plotly's histogram trace gives ``values`` with ``nbinsx`` = ``most`` on a
    linear axis (its ``autoBin``): a round size (2, 5 or 10 × 10^n) from the range over
    ``most``, the edges on multiples of it, shifted half a bin when the values sit on the
    edges, then the bins from the first to the last that holds a value. Returns the bins'
    centres, their counts and the size."""
    data = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not data:
        return [], [], 1.0
    low, high = min(data), max(data)
    if low == high:
        return [low], [len(data)], 1.0
    rough = (high - low) / most
    base = math.pow(10, math.floor(math.log(rough) / math.log(10)))
    size = base * _round_up(rough / base, (2, 5, 10))
    first_tick = math.ceil((low - (high - low) * 1e-4) / size) * size
    start = _shift_bins(_increment(first_tick, -size), data, size, low, high)
    centres, counts, edge = [], [], start
    end = start + (1 + math.floor((high - start) / size)) * size
    while edge < end - size / 1e6:
        following = _increment(edge, size)
        centres.append((edge + following) / 2)
        counts.append(0)
        if following <= edge:
            break
        edge = following
    for value in data:
        i = math.floor((value - start) / size + _ROUNDING)
        if 0 <= i < len(counts):
            counts[i] += 1
    held = [i for i, n in enumerate(counts) if n]
    first, last = (held[0], held[-1]) if held else (0, -1)
    return centres[first : last + 1], counts[first : last + 1], size


def _round_up(value: float, steps: Sequence[float]) -> float:
    """Plotly's ``Lib.roundUp``: the first of ``steps`` above ``value`` (the last at most)."""
    low, high, tries = 0, len(steps) - 1, 0
    while low < high and tries < 100:
        tries += 1
        middle = (low + high) // 2
        if steps[middle] <= value:
            low = middle + 1
        else:
            high = middle
    return steps[low]


def _increment(x: float, delta: float) -> float:
    """Plotly's ``Lib.increment``: x + delta with the float error it rounds off."""
    scale = 1 / abs(delta)
    result = (scale * x + scale * delta) / scale if scale > 1 else x + delta
    if len(repr(result)) > 16 and len(repr(result)) >= len(repr(x)) + len(repr(delta)):
        rounded = float(f"{result:.12g}")
        if "e+" not in f"{result:.12g}":
            result = rounded
    return result


def _shift_bins(start: float, data: list[float], size: float, low: float, high: float) -> float:
    """Plotly's ``autoShiftNumericBins``: integers get edges between them; values piled on
    the edges (and few in the middles) move the edges half a bin."""

    def near_edge(v: float) -> bool:
        return math.fmod(1 + (v - start) * 100 / size, 100) < 2

    integers = sum(1 for v in data if v % 1 == 0)
    on_edges = sum(1 for v in data if near_edge(v))
    in_middles = sum(1 for v in data if near_edge(v + size / 2))
    if integers == len(data):
        if size < 1:
            return low - 0.5 * size
        start -= 0.5
        return start + size if start + size < low else start
    if in_middles < len(data) * 0.1 and (
        on_edges > len(data) * 0.3 or near_edge(low) or near_edge(high)
    ):
        return start + (size / 2 if start + size / 2 < low else -size / 2)
    return start


AGENT_SYMBOLS = ("triangle-up", "diamond", "square", "circle", "star", "pentagon", "hexagon")
AGENT_COLOURS = ("#c0392b", "#1f6fb4", "#2a9d3c", "#8e44ad", "#d35400", "#16a2b8", "#6d4c41")
AGENT_ROW = 0.07  # the agents' rows, as a share of the plot's height
EDGE_PAD = 0.06  # room beyond the outermost score or medal line, as a share of the range
KEPT_SHARE = 0.01  # the human scores beyond these quantiles may fall off the axis


def score_axis_range(
    scores: Sequence[float], thresholds: dict[str, float]
) -> tuple[float, float] | None:
    """The x range that keeps the medal band readable: the leaderboard's scores from the
    1st to the 99th percentile and every medal line, padded; None without scores. A
    score beyond it (an agent's 0.1 where teams score 0.9) is drawn at the edge."""
    values = sorted(s for s in scores if s is not None)
    if not values:
        return None
    last = len(values) - 1
    kept = [values[int(KEPT_SHARE * last)], values[last - int(KEPT_SHARE * last)]]
    kept += [v for v in thresholds.values() if v is not None]
    low, high = min(kept), max(kept)
    span = (high - low) or abs(high) or 1.0
    return low - EDGE_PAD * span, high + EDGE_PAD * span


def _agent_markers(agent_scores: Sequence[tuple], shown: tuple[float, float] | None) -> list:
    """One trace per agent (its own symbol and colour, named in the legend), each on its own
    row; a score beyond the axis sits at the edge as an arrow, its hover saying so."""
    by_agent: dict[str, list[tuple[str, float]]] = {}
    for item in agent_scores:
        agent, label, score = item if len(item) == 3 else (item[0], item[0], item[1])
        by_agent.setdefault(agent, []).append((label, score))
    traces = []
    for i, (agent, points) in enumerate(by_agent.items()):
        xs, symbols, hover = [], [], []
        symbol = AGENT_SYMBOLS[i % len(AGENT_SYMBOLS)]
        for _label, score in points:
            x, mark, note = score, symbol, ""
            if shown is not None and score < shown[0]:
                x, mark, note = shown[0], "triangle-left", " (beyond the axis)"
            elif shown is not None and score > shown[1]:
                x, mark, note = shown[1], "triangle-right", " (beyond the axis)"
            xs.append(x)
            symbols.append(mark)
            hover.append(f"{format_score(score)}{note}")
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "yaxis": "y2",
                "x": xs,
                "y": [AGENT_ROW * (1 + i % 12)] * len(xs),
                "text": [label for label, _ in points],
                "customdata": hover,
                "name": agent,
                "legendgroup": "agents",
                "marker": {
                    "symbol": symbols,
                    "size": 11,
                    "color": AGENT_COLOURS[i % len(AGENT_COLOURS)],
                    "line": {"width": 1, "color": "#fff"},
                },
                "cliponaxis": False,
                "hovertemplate": "%{text}: %{customdata}<extra></extra>",
            }
        )
    return traces


LABEL_ROW_PX = 18  # one row of medal-line labels (an 11 px label is 17 px high)
LABEL_MIN_GAP = 0.12  # labels closer than this share of the x range go on different rows


def _stagger_labels(annotations: list[dict], xs: Sequence[float]) -> int:
    """Give each medal-line label a row (``yshift``) so that no two labels on one row are
    closer than LABEL_MIN_GAP of the x range; returns the number of rows used."""
    finite = [x for x in xs if x is not None]
    span = (max(finite) - min(finite)) if finite else 0.0
    last_on_row: list[float] = []
    for annotation in sorted(annotations, key=lambda a: a["x"]):
        row = next(
            (
                i
                for i, x in enumerate(last_on_row)
                if span > 0 and annotation["x"] - x >= LABEL_MIN_GAP * span
            ),
            len(last_on_row),
        )
        if row == len(last_on_row):
            last_on_row.append(annotation["x"])
        else:
            last_on_row[row] = annotation["x"]
        annotation["yshift"] = LABEL_ROW_PX * row
    return max(1, len(last_on_row))


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
        "narrow": narrow(_stacked_labels(labels)),
    }


def _stacked_labels(labels: Sequence[str]) -> dict:
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
        "narrow": narrow(_stacked_labels([s["label"] for s in series[0][1]] if series else [])),
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


SPLIT_COLOURS = ("#2e7d32", "#5b8bd0", "#d4a017", "#c0392b", "#8a8d91", "#7b52ab", "#b06a2c")


def row_range(rows: int) -> list[float]:
    """A category axis of ``rows`` rows, the first at the top."""
    return [rows - 0.5, -0.5]


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
