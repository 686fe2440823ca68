"""Medal outcomes against an independent re-statement of MLE-bench's rule (N = 1..2000)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from benchmark.medals import (
    leaderboard_percentile,
    medal_positions,
    medal_thresholds,
    rank_score,
)

# ----------------------------------------------------------------------------------------
# The reference: MLE-bench's rule table restated from kaggle.com/progression as MLE-bench
# encodes it (float fractions truncated with int(), positions 1-based, pandas for the
# leaderboard and its median), and its comparisons (ties earn a medal, the best medal
# only, strictly above the median).


def reference_positions(n: int) -> tuple[int, int, int]:
    if n < 100:
        return max(1, int(n * 0.1)), max(1, int(n * 0.2)), max(1, int(n * 0.4))
    if n < 250:
        return 10, max(1, int(n * 0.2)), max(1, int(n * 0.4))
    if n < 1000:
        return 10 + int(n * 0.002), 50, 100
    return 10 + int(n * 0.002), max(1, int(n * 0.05)), max(1, int(n * 0.1))


def reference_thresholds(board: pd.DataFrame) -> tuple[float, float, float, float]:
    column = board["score"]
    gold_at, silver_at, bronze_at = reference_positions(len(board))
    return (
        float(column.iloc[gold_at - 1]),
        float(column.iloc[silver_at - 1]),
        float(column.iloc[bronze_at - 1]),
        float(column.median()),
    )


def reference_rank(score, board: pd.DataFrame | tuple, lower_is_better: bool) -> dict:
    if isinstance(board, pd.DataFrame):
        board = reference_thresholds(board)
    gold_t, silver_t, bronze_t, median_t = board

    def reaches(threshold):
        return score <= threshold if lower_is_better else score >= threshold

    if score is None:
        gold = silver = bronze = above = False
    else:
        gold = reaches(gold_t)
        silver = reaches(silver_t) and not gold
        bronze = reaches(bronze_t) and not gold and not silver
        above = score < median_t if lower_is_better else score > median_t
    return {
        "gold_medal": gold,
        "silver_medal": silver,
        "bronze_medal": bronze,
        "any_medal": gold or silver or bronze,
        "above_median": above,
        "gold_threshold": gold_t,
        "silver_threshold": silver_t,
        "bronze_threshold": bronze_t,
        "median_threshold": median_t,
    }


def same(a: dict, b: dict) -> bool:
    """Equal dicts, with NaN equal to NaN."""
    if a.keys() != b.keys():
        return False
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if x != y or type(x) is not type(y):
            return False
    return True


def leaderboard_with_ties(rng: np.random.Generator, n: int, lower_is_better: bool) -> np.ndarray:
    """A best-first leaderboard of n scores tied around every threshold and the median."""
    spread = max(3, n // 3)  # few distinct values: ties happen naturally too
    scores = np.sort(rng.integers(0, spread, size=n).astype(float) / 7.0)
    if not lower_is_better:
        scores = scores[::-1].copy()
    tie_positions = set(reference_positions(n)) | {(n + 1) // 2, n // 2 + 1}
    for position in tie_positions:
        index = position - 1
        low, high = max(0, index - 1), min(n, index + 2)
        scores[low:high] = scores[index]  # keeps the order: neighbours meet the middle
    return scores


def candidate_scores(rng: np.random.Generator, scores: np.ndarray) -> list:
    thresholds = [scores[p - 1] for p in reference_positions(len(scores))]
    thresholds.append(float(np.median(scores)))
    candidates: list = [None, math.nan, math.inf, -math.inf]
    for t in thresholds:
        candidates += [
            t,
            np.nextafter(t, math.inf),
            np.nextafter(t, -math.inf),
            t + 1 / 7,
            t - 1 / 7,
        ]
    candidates += list(rng.choice(scores, size=3))
    candidates += list(rng.uniform(scores.min() - 1, scores.max() + 1, size=3))
    return [c if c is None else float(c) for c in candidates]


@pytest.mark.parametrize("lower_is_better", [False, True])
def test_every_n_from_1_to_2000_matches_mlebench(lower_is_better):
    rng = np.random.default_rng(20240 + lower_is_better)
    mismatches = []
    for n in range(1, 2001):
        # One leaderboard tied around every threshold, one of distinct scores (where a
        # threshold one position off would show).
        distinct = np.sort(rng.permutation(n * 3)[:n] / 3.0)
        for scores in (
            leaderboard_with_ties(rng, n, lower_is_better),
            distinct if lower_is_better else distinct[::-1].copy(),
        ):
            board = reference_thresholds(pd.DataFrame({"score": scores}))
            thresholds = medal_thresholds(scores.tolist(), lower_is_better)
            assert thresholds.n_teams == n
            for score in candidate_scores(rng, scores):
                ours = rank_score(score, thresholds)
                reference = reference_rank(score, board, lower_is_better)
                if not same(ours, reference):
                    mismatches.append((n, score, ours, reference))
    assert not mismatches, mismatches[:3]


def test_positions_equal_mlebench_float_arithmetic_up_to_100000():
    bad = [n for n in range(1, 100_001) if medal_positions(n) != reference_positions(n)]
    assert bad == []


def test_progression_table_examples():
    assert medal_positions(1) == (1, 1, 1)
    assert medal_positions(99) == (9, 19, 39)
    assert medal_positions(100) == (10, 20, 40)
    assert medal_positions(249) == (10, 49, 99)
    assert medal_positions(250) == (10, 50, 100)
    assert medal_positions(999) == (11, 50, 100)
    assert medal_positions(1000) == (12, 50, 100)
    assert medal_positions(5000) == (20, 250, 500)
    with pytest.raises(ValueError):
        medal_positions(0)


def test_leaderboard_with_missing_scores_like_pandas():
    # MLE-bench keeps NaN rows in N; pandas' median skips them.
    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 40, 101, 300, 1200):
        scores = rng.normal(size=n)
        scores[rng.random(n) < 0.2] = math.nan
        scores = scores.tolist()
        board = pd.DataFrame({"score": scores})
        for lower in (False, True):
            thresholds = medal_thresholds(scores, lower)
            for score in (0.0, 1.5, -1.5, math.nan):
                assert same(rank_score(score, thresholds), reference_rank(score, board, lower))


def test_medals_are_exclusive_and_ties_earn_them():
    thresholds = medal_thresholds([10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0], False)
    assert (thresholds.gold, thresholds.silver, thresholds.bronze) == (10.0, 9.0, 7.0)
    assert thresholds.median == 5.5
    gold = rank_score(10.0, thresholds)
    assert gold["gold_medal"] and not gold["silver_medal"] and not gold["bronze_medal"]
    bronze = rank_score(7.0, thresholds)
    assert bronze["bronze_medal"] and bronze["any_medal"] and bronze["above_median"]
    assert rank_score(5.5, thresholds)["above_median"] is False  # strict


def test_no_score_and_no_leaderboard():
    thresholds = medal_thresholds([3.0, 2.0, 1.0], False)
    nothing = rank_score(None, thresholds)
    assert not any(nothing[k] for k in ("gold_medal", "any_medal", "above_median"))
    assert nothing["gold_threshold"] == 3.0
    assert rank_score(5.0, None) == {
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "any_medal": False,
        "above_median": False,
        "gold_threshold": None,
        "silver_threshold": None,
        "bronze_threshold": None,
        "median_threshold": None,
    }
    with pytest.raises(ValueError):
        medal_thresholds([], False)
    with pytest.raises(TypeError):
        rank_score("0.5", thresholds)  # type: ignore[arg-type]


def test_percentile():
    scores = [5.0, 4.0, 3.0, 2.0]
    assert leaderboard_percentile(6.0, scores, False) == 100.0
    assert leaderboard_percentile(0.0, scores, False) == 0.0
    assert leaderboard_percentile(4.0, scores, False) == 62.5  # beats 2, ties 1
    assert leaderboard_percentile(4.0, scores[::-1], True) == 37.5
    assert leaderboard_percentile(None, scores, False) is None
    assert leaderboard_percentile(math.nan, scores, False) is None
