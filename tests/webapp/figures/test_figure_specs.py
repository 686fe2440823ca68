"""The figures' specs (``webapp.figures``): hover text formatted, percentage axes that run
to 100 when every value is 0, medal-line labels that never overlap, the leaderboard's
dots per split."""

import pytest

from webapp import figures
from webapp.figures import competition as competition_figures

# A score as float arithmetic leaves it: 0.137555 with noise in the last digits.
NOISY = 0.13755499999999998


def test_histogram_hover_text_is_formatted():
    figure = figures.leaderboard_distribution(
        [0.1, 0.2, 0.3],
        {"gold": 0.3, "silver": 0.2, "bronze": 0.15, "median": NOISY},
        lower_is_better=False,
        agent_scores=[("agent (seed 0)", NOISY)],
    )
    agents = figure["data"][1]
    assert agents["customdata"] == ["0.137555"]
    assert "%{customdata}" in agents["hovertemplate"]
    bins = figure["data"][0]
    assert "%{customdata}" in bins["hovertemplate"]
    assert bins["customdata"][0] == "0.0975 – 0.1025"


# Percentage axes run 0–100 when every value is 0 (Plotly's autorange would give 0–1).


def test_pass_at_k_axis_of_an_all_zero_experiment_runs_to_100():
    zero = figures.pass_at_k_curves(
        [("x", [{"k": 1, "percentage": 0.0}, {"k": 2, "percentage": 0.0}])]
    )
    assert zero["layout"]["yaxis"]["range"] == [0, 100]
    some = figures.pass_at_k_curves([("x", [{"k": 1, "percentage": 12.0}])])
    assert "range" not in some["layout"]["yaxis"]
    assert some["layout"]["yaxis"]["rangemode"] == "tozero"
    bars = figures.split_bars(
        [("x", {"all": {"mean": 0.0, "standard_error": 0.0}})], [("all", "All")]
    )
    assert bars["layout"]["yaxis"]["range"] == [0, 100]
    assert figures.time_scaling([{"elapsed_hours": 1, "any_medal_percentage": 0}])["layout"][
        "yaxis"
    ]["range"] == [0, 100]


# Medal-line labels never overlap: close lines put their labels on different rows.


def _label_rows(figure):
    return [(a["x"], a["yshift"], a["text"]) for a in figure["layout"]["annotations"]]


@pytest.mark.parametrize(
    "thresholds",
    [
        {"gold": 0.951, "silver": 0.95, "bronze": 0.949, "median": 0.9},
        {"gold": 0.5, "silver": 0.5, "bronze": 0.5, "median": 0.5},
        {"gold": 0.99, "silver": 0.7, "bronze": 0.4, "median": 0.1},
    ],
)
def test_histogram_threshold_labels_never_overlap(thresholds):
    scores = [i / 100 for i in range(101)]
    figure = figures.leaderboard_distribution(scores, thresholds, lower_is_better=False)
    labels = _label_rows(figure)
    assert len(labels) == 4
    span = max(scores) - min(scores)
    for i, (x1, shift1, _) in enumerate(labels):
        for x2, shift2, _ in labels[i + 1 :]:
            # Same row: far enough apart; otherwise a whole label height apart.
            assert (
                abs(x1 - x2) >= competition_figures.LABEL_MIN_GAP * span
                or abs(shift1 - shift2) >= 17
            )
    rows = len({shift for _, shift, _ in labels})
    assert figure["layout"]["margin"]["t"] >= 30 + competition_figures.LABEL_ROW_PX * (rows - 1)
    if thresholds["gold"] - thresholds["median"] > 0.5:
        assert rows == 1  # far apart: one row, no wasted space
    hover = [a["hovertext"] for a in figure["layout"]["annotations"]]
    assert all(": " in h for h in hover)


# Above the leaderboard: Any Medal % per split as dots with SEM bars, one row per entry.


def test_leaderboard_dots_figure_spec():
    entries = [
        {"id": 1, "name": "a", "splits": {"all": {"mean": 20.0, "standard_error": 2.0}}},
        {"id": 2, "name": "b", "splits": {"all": {"mean": 10.0, "standard_error": 1.0}}},
        {"id": 3, "name": "b", "splits": {"all": None, "low": {"mean": 5, "standard_error": 0}}},
    ]
    figure = figures.leaderboard_dots(entries, [("all", "All"), ("low", "Low (Lite)")])
    assert [t["name"] for t in figure["data"]] == ["All", "Low (Lite)"]
    all_trace = figure["data"][0]
    assert all_trace["y"] == ["a", "b #2", "b #3"]  # one row per entry, table order
    assert all_trace["x"] == [20.0, 10.0, None]
    assert all_trace["error_x"]["array"] == [2.0, 1.0, 0]
    # The first row at the top, no blank band beyond the rows.
    assert figure["layout"]["yaxis"]["range"] == [2.5, -0.5]
