"""The contamination analyses (``benchmark.contamination``): deadline against medal rate
with Spearman's correlation and a trend line, before/after a knowledge cutoff with Welch's
t-test and its interval, familiarity against results with Pearson's r; and the reasons
given where a statistic is undefined."""

import datetime as dt

import numpy as np
import pytest

from benchmark.contamination import CompetitionResult, date_view, familiarity_view


def result(cid, medals, seeds=3, deadline=None, percentile=None, familiarity=None):
    return CompetitionResult(cid, seeds, medals, deadline, percentile, familiarity)


DATED = [
    result("a", 3, deadline=dt.date(2014, 5, 1)),
    result("b", 2, deadline=dt.date(2016, 3, 2)),
    result("c", 2, deadline=dt.date(2018, 7, 9)),
    result("d", 1, deadline=dt.date(2020, 6, 16)),
    result("e", 0, deadline=dt.date(2022, 8, 11)),
    result("f", 1, deadline=dt.date(2023, 3, 1)),
    result("g", 0, deadline=dt.date(2024, 8, 5)),
]


def ranks(values):
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def test_the_date_view_orders_points_and_gives_spearman_and_a_trend():
    view = date_view(reversed(DATED + [result("demo-wine", 3)]))
    assert [p["competition_id"] for p in view["points"]] == list("abcdefg")
    assert view["points"][0] == {
        "competition_id": "a",
        "deadline": "2014-05-01",
        "medal_rate": 100.0,
        "medals": 3,
        "seeds": 3,
    }
    assert view["without_deadline"] == ["demo-wine"]
    # Spearman's rho is Pearson's r of the ranks (ties averaged), computed here by hand.
    days = [r.deadline.toordinal() for r in DATED]
    rates = [100 * r.medals / 3 for r in DATED]
    expected = np.corrcoef(ranks(days), ranks(rates))[0, 1]
    correlation = view["correlation"]
    assert correlation["method"] == "Spearman's rank correlation" and correlation["n"] == 7
    assert correlation["statistic"] == pytest.approx(expected)
    assert correlation["statistic"] < -0.8 and 0 < correlation["p_value"] < 0.05
    # The trend line is least squares: numpy's fit, per year.
    slope, intercept = np.polyfit(days, rates, 1)
    trend = view["trend"]
    assert trend["slope_per_year"] == pytest.approx(slope * 365.25)
    assert trend["start"]["deadline"] == "2014-05-01" and trend["end"]["deadline"] == "2024-08-05"
    assert trend["start"]["medal_rate"] == pytest.approx(intercept + slope * days[0])
    assert view["cutoff"] is None


def test_before_and_after_a_cutoff_with_welchs_test_and_its_interval():
    view = date_view(DATED, cutoff=dt.date(2018, 7, 9))  # "c" ended on the cutoff: before
    cut = view["cutoff"]
    before, after = [100.0, 200 / 3, 200 / 3], [100 / 3, 0.0, 100 / 3, 0.0]
    assert cut["before"] == {"n": 3, "mean": pytest.approx(np.mean(before))}
    assert cut["after"] == {"n": 4, "mean": pytest.approx(np.mean(after))}
    assert cut["difference"] == pytest.approx(np.mean(before) - np.mean(after))
    # Welch's statistic and degrees of freedom by hand; the p-value and interval from them.
    from scipy import stats

    va, vb = np.var(before, ddof=1) / 3, np.var(after, ddof=1) / 4
    t = (np.mean(before) - np.mean(after)) / np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 3)
    assert cut["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), df))
    half = stats.t.ppf(0.975, df) * np.sqrt(va + vb)
    assert cut["ci_lower"] == pytest.approx(cut["difference"] - half)
    assert cut["ci_upper"] == pytest.approx(cut["difference"] + half)
    assert cut["method"] == "Welch's t-test" and "reason" not in cut


def test_undefined_statistics_say_why():
    two = date_view(DATED[:2])
    assert two["correlation"]["reason"].startswith("too few competitions for a correlation (2")
    assert two["trend"] is None
    flat = date_view([result(c.competition_id, 0, deadline=c.deadline) for c in DATED])
    assert "same medal rate" in flat["correlation"]["reason"]
    nothing = date_view([result("demo-wine", 1), result("demo-digits", 2)])
    assert nothing["points"] == [] and nothing["without_deadline"] == ["demo-digits", "demo-wine"]
    assert "too few" in nothing["correlation"]["reason"]
    one_side = date_view(DATED, cutoff=dt.date(2030, 1, 1))["cutoff"]
    assert one_side["after"]["n"] == 0 and one_side["difference"] is None
    assert "too few competitions on one side" in one_side["reason"]
    still = date_view(
        [result(c.competition_id, 0, deadline=c.deadline) for c in DATED],
        cutoff=dt.date(2018, 1, 1),
    )["cutoff"]
    assert still["difference"] == 0 and "do not vary" in still["reason"]


def test_familiarity_against_medal_rate_and_percentile_with_pearson():
    data = [
        result("a", 3, familiarity=0.71, percentile=96.0),
        result("b", 1, familiarity=0.55, percentile=61.5),
        result("c", 0, familiarity=0.40, percentile=None),
        result("d", 2, familiarity=0.62, percentile=80.0),
        result("e", 0, familiarity=0.33, percentile=12.0),
        result("f", 1, familiarity=None, percentile=50.0),
    ]
    view = familiarity_view(data)
    assert [p["competition_id"] for p in view["points"]] == ["e", "c", "b", "d", "a"]
    assert view["without_familiarity"] == ["f"]
    fam = [0.33, 0.40, 0.55, 0.62, 0.71]
    rates = [0.0, 0.0, 100 / 3, 200 / 3, 100.0]
    assert view["medal_rate"]["method"] == "Pearson's r"
    assert view["medal_rate"]["statistic"] == pytest.approx(np.corrcoef(fam, rates)[0, 1])
    assert view["medal_rate"]["n"] == 5
    # The percentile is correlated over the competitions that have one ("c" has none).
    assert view["percentile"]["n"] == 4
    assert view["percentile"]["statistic"] == pytest.approx(
        np.corrcoef([0.33, 0.55, 0.62, 0.71], [12.0, 61.5, 80.0, 96.0])[0, 1]
    )
    # Pearson's p-value from its t statistic, by hand.
    from scipy import stats

    r, n = view["medal_rate"]["statistic"], 5
    t = r * np.sqrt((n - 2) / (1 - r**2))
    assert view["medal_rate"]["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), n - 2))
    assert "too few" in familiarity_view(data[:2])["medal_rate"]["reason"]
