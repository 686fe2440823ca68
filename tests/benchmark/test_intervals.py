"""The hierarchical bootstrap, rank ranges and P(A > B) (benchmark/intervals.py)."""

import numpy as np
import pytest

from benchmark import intervals as iv


def test_resamples_are_shared_by_a_split_and_reproducible():
    a = iv.competition_resamples(22, split="low")
    assert a.shape == (iv.REPLICATES, 22)
    assert np.array_equal(a, iv.competition_resamples(22, split="low"))
    assert not np.array_equal(a, iv.competition_resamples(22, split="medium"))


def test_replicates_centre_on_the_figure_and_widen_at_small_n():
    # 3 seeds; 10 of 22 competitions always medal, the rest never: 45.45 %.
    medals, runs = [3] * 10 + [0] * 12, [3] * 22
    draws = iv.competition_resamples(22, split="low")
    replicates = iv.any_medal_replicates(medals, runs, draws, key=1)
    assert abs(float(replicates.mean()) - 100 * 10 / 22) < 1.5
    low, high = iv.interval(replicates)
    assert low < 100 * 10 / 22 < high
    # The spread is the competitions' (about sqrt(p(1-p)/22) = 10.6 points), far wider than
    # the seeds' SEM (0 here: every seed gave the same figure).
    assert high - low > 30
    again = iv.any_medal_replicates(medals, runs, draws, key=1)
    assert np.array_equal(replicates, again)


def test_seed_noise_is_drawn_within_each_competition():
    draws = np.tile(np.arange(4), (iv.REPLICATES, 1))  # every competition, every time
    replicates = iv.any_medal_replicates([1, 1, 1, 1], [2, 2, 2, 2], draws, key="x")
    assert 40 < replicates.mean() < 60 and replicates.std() > 5


def test_a_competition_without_runs_counts_as_no_medal():
    draws = np.tile(np.arange(2), (10, 1))
    assert iv.any_medal_replicates([0, 2], [0, 2], draws, key=0).tolist() == [50.0] * 10


def test_rank_ranges_count_entries_strictly_ahead():
    replicates = np.array(
        [
            [90, 90, 90, 90],
            [50, 60, 40, 50],
            [50, 40, 60, 50],
            [10, 10, 10, 10],
        ],
        dtype=np.float32,
    )
    ranges = iv.rank_ranges(replicates, level=1.0)
    assert ranges == [(1, 1), (2, 3), (2, 3), (4, 4)]
    assert iv.overlapping(ranges, 1, 2) and not iv.overlapping(ranges, 0, 1)


def test_rank_ranges_match_a_direct_count():
    rng = np.random.default_rng(0)
    replicates = rng.integers(0, 20, size=(30, 200)).astype(np.float32)
    direct = (replicates[None, :, :] > replicates[:, None, :]).sum(axis=1) + 1
    expected = [
        (int(np.percentile(r, 2.5, method="lower")), int(np.percentile(r, 97.5, method="higher")))
        for r in direct
    ]
    assert iv.rank_ranges(replicates) == expected


def test_probability_greater_counts_ties_half():
    a = np.array([1, 2, 3, 4], dtype=np.float32)
    b = np.array([0, 2, 4, 4], dtype=np.float32)
    assert iv.probability_greater(a, b) == pytest.approx((1 + 0.5 + 0 + 0.5) / 4)


def test_published_figures_get_wider_replicates_than_their_sem():
    replicates = iv.normal_replicates(40.0, 1.0, 75, key="published")
    low, high = iv.interval(replicates)
    assert low < 40 < high and high - low > 2 * 1.96 * 1.0
    assert replicates.min() >= 0 and replicates.max() <= 100


def test_replicates_round_trip_as_bytes():
    replicates = iv.normal_replicates(40.0, 1.0, 75, key=3)
    assert np.array_equal(iv.from_bytes(iv.to_bytes(replicates)), replicates)
