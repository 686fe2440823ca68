from __future__ import annotations

import itertools

import pytest

from benchmark.passk import pass_at_k, pass_at_k_curve


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_estimator_equals_enumerating_every_k_subset(n):
    for c in range(n + 1):
        runs = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(runs, k))
            expected = sum(any(s) for s in subsets) / len(subsets)
            assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-15)


def test_edges():
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 5, 1) == 1.0
    assert pass_at_k(4, 1, 4) == 1.0  # every draw contains the success
    assert pass_at_k(4, 1, 1) == 0.25
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_curve_is_mean_over_competitions_in_percent():
    curve = pass_at_k_curve([0, 1, 3], n=3)
    assert [point["k"] for point in curve] == [1, 2, 3]
    assert curve[0]["percentage"] == pytest.approx(100 * (0 + 1 / 3 + 1) / 3)
    assert curve[-1]["percentage"] == pytest.approx(100 * 2 / 3)
    values = [point["percentage"] for point in curve]
    assert values == sorted(values)
    assert pass_at_k_curve([], 3) == [] and pass_at_k_curve([0], 0) == []
