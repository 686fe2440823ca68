import random

import numpy as np
import pytest

from benchmark.compare import SeedResult, compare_experiments, medal_gap, sign_flip_p_value


def outcomes(rate: float, n_comp: int, n_seeds: int, seed: int) -> dict:
    rng = random.Random(seed)
    return {
        f"c{i:02d}": [SeedResult(rng.random() < rate, rng.randint(0, 5)) for _ in range(n_seeds)]
        for i in range(n_comp)
    }


def direct_bootstrap(a: dict, b: dict, n: int, seed: int) -> tuple[float, float]:
    """The bootstrap written the slow, obvious way: draw competitions, then each
    experiment's seeds with replacement, one by one."""
    rng = random.Random(seed)
    comps = sorted(a)
    diffs = []
    for _ in range(n):
        drawn = [rng.choice(comps) for _ in comps]
        rate = {}
        for name, runs in (("a", a), ("b", b)):
            per_comp = []
            for c in drawn:
                seeds = [rng.choice(runs[c]).any_medal for _ in runs[c]]
                per_comp.append(sum(seeds) / len(seeds))
            rate[name] = sum(per_comp) / len(per_comp)
        diffs.append(100 * (rate["a"] - rate["b"]))
    return tuple(np.percentile(diffs, [2.5, 97.5]))


def test_difference_and_bootstrap_interval_agree_with_direct_computation():
    a, b = outcomes(0.45, 40, 3, 1), outcomes(0.25, 40, 3, 2)
    result = compare_experiments("A", a, "B", b, n_bootstrap=20000, seed=3)
    rate = lambda runs: 100 * np.mean([np.mean([o.any_medal for o in r]) for r in runs.values()])  # noqa: E731
    assert result.difference == pytest.approx(rate(a) - rate(b))
    lower, upper = direct_bootstrap(a, b, 4000, seed=4)
    # Two Monte Carlo estimates of the same interval: equal within simulation noise.
    assert result.ci_lower == pytest.approx(lower, abs=1.5)
    assert result.ci_upper == pytest.approx(upper, abs=1.5)
    assert result.wins + result.ties + result.losses == 40


def test_sentences_say_who_wins_or_that_it_is_unclear():
    a, b = outcomes(0.6, 75, 5, 1), outcomes(0.2, 75, 5, 2)
    clear = compare_experiments("AIDE", a, "MLAB", b)
    assert clear.sentence().startswith("AIDE beats MLAB by ")
    assert clear.p_value < 0.01
    same = compare_experiments("X", a, "Y", a)
    assert same.difference == 0 and same.p_value == 1.0
    assert same.sentence().startswith("No clear difference")


def test_sign_flip_p_value_exact_for_few_competitions():
    rng = np.random.default_rng(0)
    # 3 positive differences of 1: of the 8 sign patterns, 2 reach |sum| = 3.
    assert sign_flip_p_value(np.array([1.0, 1.0, 1.0, 0.0]), rng) == pytest.approx(2 / 8)


def test_no_shared_competition_is_an_error():
    with pytest.raises(ValueError, match="no competition in common"):
        compare_experiments("A", {"x": [SeedResult(True, 3)]}, "B", {"y": [SeedResult(True, 3)]})


@pytest.mark.parametrize(
    ("score", "median", "gold", "lower", "expected"),
    [
        (0.9, 0.8, 1.0, False, 0.5),
        (1.0, 0.8, 1.0, False, 1.0),
        (0.7, 0.8, 1.0, False, -0.5),
        (0.15, 0.2, 0.1, True, 0.5),
        (None, 0.2, 0.1, True, None),
        (0.5, 0.5, 0.5, False, None),
    ],
)
def test_medal_gap(score, median, gold, lower, expected):
    assert medal_gap(score, median, gold, lower) == (
        pytest.approx(expected) if expected is not None else None
    )


def column_by_column_rates(medals, seeds, comp_idx, rng):
    """The binomial draws as first written: the uniform compared with every CDF value,
    one column of seeds at a time (slow at 67 seeds)."""
    from benchmark.compare import _binomial_cdfs

    cdf = _binomial_cdfs(medals, seeds)
    u = rng.random(comp_idx.shape)
    drawn = np.zeros(comp_idx.shape, dtype=np.int64)
    for k in range(cdf.shape[1]):
        drawn += u > cdf[:, k][comp_idx]
    return (drawn / seeds[comp_idx]).mean(axis=1)


@pytest.mark.parametrize("max_seeds", [1, 3, 5, 67, 200])
def test_bootstrap_draws_are_those_of_the_direct_inversion(max_seeds):
    from benchmark.compare import _bootstrap_rates

    rng = np.random.default_rng(max_seeds)
    seeds = rng.integers(1, max_seeds + 1, size=40)
    medals = np.array([rng.integers(0, n + 1) for n in seeds], dtype=float)
    medals[:3] = 0  # never a medal
    medals[3:6] = seeds[3:6]  # a medal every time
    comp_idx = rng.integers(0, len(seeds), size=(3000, len(seeds)))
    fast = _bootstrap_rates(medals, seeds, comp_idx, np.random.default_rng(1))
    slow = column_by_column_rates(medals, seeds, comp_idx, np.random.default_rng(1))
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


def test_comparison_from_counts_is_the_comparison_from_outcomes():
    from benchmark.compare import compare_tallies, tally

    a, b = outcomes(0.5, 30, 7, seed=5), outcomes(0.3, 30, 6, seed=6)
    from_outcomes = compare_experiments("A", a, "B", b, n_bootstrap=2000, seed=2)
    from_counts = compare_tallies(
        "A",
        {c: tally(o) for c, o in a.items()},
        "B",
        {c: tally(o) for c, o in b.items()},
        n_bootstrap=2000,
        seed=2,
    )
    assert from_counts == from_outcomes


def test_a_competition_is_decided_on_the_medal_level_then_the_score():
    from benchmark.compare import CompetitionTally, compare_tallies, decide

    gold = CompetitionTally(seeds=2, medals=2, level_sum=10, mean_score=0.95)
    bronze = CompetitionTally(seeds=2, medals=2, level_sum=6, mean_score=0.99)
    # Both won a medal every time (1.00 vs 1.00): the level decides, whatever the score.
    assert decide(gold, bronze) == ("win", "medal level")
    assert decide(bronze, gold) == ("loss", "medal level")
    # Equal levels: the mean score, in the metric's direction.
    higher = CompetitionTally(seeds=2, medals=2, level_sum=10, mean_score=0.97)
    assert decide(higher, gold) == ("win", "score")
    lower_better = CompetitionTally(2, 2, 10, mean_score=0.5, lower_is_better=True)
    assert decide(lower_better, CompetitionTally(2, 2, 10, 0.6, True)) == ("win", "score")
    # Equal on both, or no score to compare: a tie.
    assert decide(gold, CompetitionTally(seeds=2, medals=2, level_sum=10, mean_score=0.95)) == (
        "tie",
        "",
    )
    assert decide(CompetitionTally(1, 0, 0), CompetitionTally(1, 0, 0)) == ("tie", "")

    result = compare_tallies(
        "A", {"x": gold, "y": higher}, "B", {"x": bronze, "y": gold}, n_bootstrap=200
    ).to_dict()
    rows = {r["competition_id"]: r for r in result["per_competition"]}
    assert (rows["x"]["a_medal_rate"], rows["x"]["b_medal_rate"]) == (1.0, 1.0)
    assert (rows["x"]["a_level_text"], rows["x"]["b_level_text"]) == ("gold", "bronze")
    assert (rows["x"]["result"], rows["x"]["decided_by"]) == ("win", "medal level")
    assert (rows["y"]["a_score"], rows["y"]["b_score"]) == (0.97, 0.95)
    assert (rows["y"]["result"], rows["y"]["decided_by"]) == ("win", "score")
    assert "medal level" in result["decision_rule"] and "tie" in result["decision_rule"]


def test_a_mean_level_between_two_is_said_so():
    from benchmark.compare import level_text

    assert level_text(5.0) == "gold"
    assert level_text(0.0) == "no valid submission"
    assert level_text(11 / 3) == "3.67, between bronze and silver"
