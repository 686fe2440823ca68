"""A competition's page: the human leaderboard's scores as a histogram, its medal lines,
and every agent's scores on it."""

import math
from collections.abc import Sequence

from webapp.core.formatting import format_score
from webapp.figures.layout import LAYOUT_BASE, MEDAL_COLOURS


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
