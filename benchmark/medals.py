"""Kaggle's medal rules exactly as MLE-bench applies them (``Grader.rank_score``).

Given the private leaderboard's scores best first, the gold, silver and bronze thresholds
are the scores at positions that depend on the number of teams N (kaggle.com/progression;
the table is in docs/architecture.md). A score equal to a threshold earns that medal; a
run gets only its best medal; "above median" is strictly better than the median of all
the leaderboard's scores (pandas' median: NaN scores skipped).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

# The medals, best first: a run's medal is the best it reached (``medal_level``).
MEDALS = ("gold", "silver", "bronze")


def medal_level(*, gold: bool, silver: bool, bronze: bool) -> str:
    """The best medal of a graded run ("gold", "silver", "bronze"), or "" for none."""
    for name, won in zip(MEDALS, (gold, silver, bronze), strict=True):
        if won:
            return name
    return ""


@dataclass(frozen=True)
class MedalThresholds:
    """The medal lines of one private leaderboard, in the leaderboard's own score units."""

    gold: float
    silver: float
    bronze: float
    median: float
    n_teams: int
    lower_is_better: bool

    def to_dict(self) -> dict:
        """The thresholds as a JSON-friendly dict (keys as the dataclass fields)."""
        return asdict(self)


def medal_positions(n_teams: int) -> tuple[int, int, int]:
    """The 1-based leaderboard positions of the (gold, silver, bronze) thresholds for N teams.

    Integer arithmetic here equals MLE-bench's ``int(N * fraction)`` for every N (the
    tests check it up to 100,000 teams). Raises ValueError when N < 1.
    """
    n = n_teams
    if n < 1:
        raise ValueError("a leaderboard needs at least one team to have medal thresholds")
    top_10_plus = 10 + n // 500  # "top 10 + 0.2% of N"
    if n < 100:
        return max(1, n // 10), max(1, n // 5), max(1, n * 2 // 5)
    if n < 250:
        return 10, n // 5, n * 2 // 5
    if n < 1000:
        return top_10_plus, 50, 100
    return top_10_plus, n // 20, n // 10


def _median_like_pandas(values: np.ndarray) -> float:
    present = values[~np.isnan(values)]
    if present.size == 0:
        return math.nan
    return float(np.median(present))


def medal_thresholds(scores: Sequence[float], lower_is_better: bool) -> MedalThresholds:
    """The medal thresholds of a leaderboard whose ``scores`` are given best first.

    The thresholds are the scores at the positions of ``medal_positions(len(scores))``;
    the median is over all scores. ``lower_is_better`` is recorded, not used to reorder:
    the caller passes the scores in leaderboard order, as MLE-bench does. Raises
    ValueError for an empty leaderboard.
    """
    values = np.asarray(scores, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("a leaderboard needs at least one team to have medal thresholds")
    gold_at, silver_at, bronze_at = medal_positions(int(values.size))
    return MedalThresholds(
        gold=float(values[gold_at - 1]),
        silver=float(values[silver_at - 1]),
        bronze=float(values[bronze_at - 1]),
        median=_median_like_pandas(values),
        n_teams=int(values.size),
        lower_is_better=bool(lower_is_better),
    )


def _at_least_as_good(score: float, threshold: float, lower_is_better: bool) -> bool:
    return score <= threshold if lower_is_better else score >= threshold


def rank_score(score: float | None, thresholds: MedalThresholds | None) -> dict:
    """Place ``score`` against ``thresholds`` exactly as MLE-bench's ``rank_score`` does.

    Returns MLE-bench's keys: ``gold_medal``, ``silver_medal``, ``bronze_medal``,
    ``above_median`` (bools; medals are exclusive, the best one wins), ``any_medal``,
    and ``gold_threshold``, ``silver_threshold``, ``bronze_threshold``,
    ``median_threshold`` (floats). A ``None`` score (no valid submission) earns nothing;
    a NaN score compares false everywhere and earns nothing either. ``thresholds`` None
    (no leaderboard) -> no medals and all thresholds None.
    """
    if thresholds is None:
        gold_t = silver_t = bronze_t = median_t = None
    else:
        gold_t, silver_t, bronze_t = thresholds.gold, thresholds.silver, thresholds.bronze
        median_t = thresholds.median
    gold = silver = bronze = above_median = False
    if score is not None and thresholds is not None:
        if isinstance(score, bool) or not isinstance(score, (int, float, np.number)):
            raise TypeError(f"score must be a number or None, not {type(score).__name__}")
        value = float(score)
        lower = thresholds.lower_is_better
        gold = _at_least_as_good(value, gold_t, lower)
        silver = not gold and _at_least_as_good(value, silver_t, lower)
        bronze = not gold and not silver and _at_least_as_good(value, bronze_t, lower)
        above_median = value < median_t if lower else value > median_t
    return {
        "gold_medal": gold,
        "silver_medal": silver,
        "bronze_medal": bronze,
        "any_medal": gold or silver or bronze,
        "above_median": above_median,
        "gold_threshold": gold_t,
        "silver_threshold": silver_t,
        "bronze_threshold": bronze_t,
        "median_threshold": median_t,
    }


def leaderboard_percentile(
    score: float | None, scores: Sequence[float], lower_is_better: bool
) -> float | None:
    """The percentage (0-100) of the leaderboard's teams that ``score`` beats; ties count half.

    100 means better than every team, 0 worse than (or, alone, tied with none of) them;
    equal to every team gives 50. NaN team scores are ignored. Returns None when the
    score is None or NaN, or the leaderboard has no scores.
    """
    if score is None or math.isnan(float(score)):
        return None
    values = np.asarray(scores, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    value = float(score)
    if lower_is_better:
        beaten = np.count_nonzero(values > value)
    else:
        beaten = np.count_nonzero(values < value)
    tied = np.count_nonzero(values == value)
    return float(100.0 * (beaten + 0.5 * tied) / values.size)
