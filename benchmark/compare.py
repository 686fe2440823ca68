"""Is one agent really better than another? Paired statistics over the competitions two
experiments share.

Each experiment gives, per competition, a list of per-seed outcomes. The headline is the
difference in Any Medal % (mean over seeds of the % of competitions with a medal). Its
uncertainty comes from a paired bootstrap: competitions are resampled together for both
experiments (the pairing), and each experiment's seeds are resampled within every drawn
competition (seeds are not paired across experiments). The test is a paired sign-flip
permutation test on the per-competition medal-rate differences: under "no difference"
each competition's difference is as likely to have either sign.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

# Outcome levels, for per-competition win/tie/loss: the best thing that happened.
LEVELS = {"none": 0, "valid": 1, "above_median": 2, "bronze": 3, "silver": 4, "gold": 5}


@dataclass(frozen=True)
class SeedResult:
    """One seed of one competition, as a comparison of experiments counts it."""

    any_medal: bool
    level: int  # one of LEVELS' values


def outcome_level(
    *, valid: bool, above_median: bool, bronze: bool, silver: bool, gold: bool
) -> int:
    if gold:
        return LEVELS["gold"]
    if silver:
        return LEVELS["silver"]
    if bronze:
        return LEVELS["bronze"]
    if above_median:
        return LEVELS["above_median"]
    return LEVELS["valid"] if valid else LEVELS["none"]


def _binomial_cdfs(medals: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Per competition, the CDF of Binomial(n, medals/n) at 0..max(n) (padded with 1)."""
    width = int(seeds.max()) + 1
    cdf = np.ones((len(seeds), width))
    for c, (m, n) in enumerate(zip(medals, seeds, strict=True)):
        p = m / n
        pmf = [math.comb(int(n), k) * p**k * (1 - p) ** (int(n) - k) for k in range(int(n) + 1)]
        cdf[c, : int(n)] = np.cumsum(pmf)[: int(n)]
    return cdf


def _bootstrap_rates(
    medals: np.ndarray, seeds: np.ndarray, comp_idx: np.ndarray, rng
) -> np.ndarray:
    """Mean medal rate (0-1) per bootstrap sample. ``comp_idx`` (B x C) picks competitions;
    within each picked competition its seeds are drawn with replacement. For 0/1 outcomes
    the medals among n seeds drawn with replacement are Binomial(n, medals/n); they are
    drawn by inverting that CDF, which is much faster than drawing every seed."""
    cdf = _binomial_cdfs(medals, seeds)
    u = rng.random(comp_idx.shape)
    drawn = np.zeros(comp_idx.shape, dtype=np.int16)
    for k in range(cdf.shape[1]):  # a handful of seeds: gather one CDF column at a time
        drawn += u > cdf[:, k][comp_idx]
    return (drawn / seeds[comp_idx]).mean(axis=1)


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    competitions: tuple[str, ...]
    a_any_medal: float  # %
    b_any_medal: float  # %
    difference: float  # percentage points, a - b
    ci_lower: float
    ci_upper: float
    p_value: float
    wins: int
    ties: int
    losses: int
    per_competition: tuple[dict, ...]
    n_bootstrap: int

    def sentence(self) -> str:
        """The result in plain words."""
        n = len(self.competitions)
        ci = f"95% CI {self.ci_lower:.1f} to {self.ci_upper:.1f}"
        test = f"paired sign-flip test over {n} competitions, p = {self.p_value:.3g}"
        if self.ci_lower > 0:
            return f"{self.a} beats {self.b} by {self.difference:.1f} points of Any Medal % ({ci}; {test})."
        if self.ci_upper < 0:
            return f"{self.b} beats {self.a} by {-self.difference:.1f} points of Any Medal % ({ci}; {test})."
        return (
            f"No clear difference: {self.a} minus {self.b} is {self.difference:+.1f} points of Any Medal % "
            f"({ci}, which includes 0; {test})."
        )

    def to_dict(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "n_competitions": len(self.competitions),
            "a_any_medal_percentage": self.a_any_medal,
            "b_any_medal_percentage": self.b_any_medal,
            "difference": self.difference,
            "ci_lower": self.ci_lower,
            "ci_upper": self.ci_upper,
            "p_value": self.p_value,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "sentence": self.sentence(),
            "per_competition": list(self.per_competition),
            "n_bootstrap": self.n_bootstrap,
        }


def sign_flip_p_value(differences: np.ndarray, rng, n_permutations: int = 20000) -> float:
    """Two-sided p-value of the mean of paired ``differences`` under random sign flips;
    exact (all 2^m flips) when at most 16 differences are non-zero."""
    d = differences[differences != 0]
    m = len(d)
    if m == 0:
        return 1.0
    observed = abs(d.mean() * m)
    if m <= 16:
        signs = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1) * 2 - 1
        sums = np.abs(signs @ d)
        return float(np.mean(sums >= observed - 1e-12))
    signs = rng.integers(0, 2, size=(n_permutations, m), dtype=np.int8) * 2 - 1
    sums = np.abs(signs @ d)
    # Count the observed arrangement itself, so the p-value is never 0.
    return float((np.sum(sums >= observed - 1e-12) + 1) / (n_permutations + 1))


def compare_experiments(
    name_a: str,
    outcomes_a: Mapping[str, Sequence[SeedResult]],
    name_b: str,
    outcomes_b: Mapping[str, Sequence[SeedResult]],
    *,
    n_bootstrap: int = 10000,
    seed: int = 0,
) -> Comparison:
    """Compare two experiments on the competitions both have runs for.

    ``outcomes_x`` maps competition id -> that experiment's per-seed outcomes. Raises
    ValueError when they share no competition.
    """
    shared = tuple(sorted(set(outcomes_a) & set(outcomes_b)))
    shared = tuple(c for c in shared if outcomes_a[c] and outcomes_b[c])
    if not shared:
        raise ValueError(f"{name_a} and {name_b} have no competition in common")
    rng = np.random.default_rng(seed)
    med_a = np.array([sum(o.any_medal for o in outcomes_a[c]) for c in shared], dtype=float)
    med_b = np.array([sum(o.any_medal for o in outcomes_b[c]) for c in shared], dtype=float)
    n_a = np.array([len(outcomes_a[c]) for c in shared])
    n_b = np.array([len(outcomes_b[c]) for c in shared])
    rate_a = med_a / n_a
    rate_b = med_b / n_b
    difference = 100 * (rate_a.mean() - rate_b.mean())

    comp_idx = rng.integers(0, len(shared), size=(n_bootstrap, len(shared)))
    boot = 100 * (
        _bootstrap_rates(med_a, n_a, comp_idx, rng) - _bootstrap_rates(med_b, n_b, comp_idx, rng)
    )
    lower, upper = np.percentile(boot, [2.5, 97.5])
    p_value = sign_flip_p_value(rate_a - rate_b, rng)

    per_competition = []
    wins = ties = losses = 0
    for i, competition in enumerate(shared):
        level_a = float(np.mean([o.level for o in outcomes_a[competition]]))
        level_b = float(np.mean([o.level for o in outcomes_b[competition]]))
        if abs(level_a - level_b) < 1e-9:
            verdict, ties = "tie", ties + 1
        elif level_a > level_b:
            verdict, wins = "win", wins + 1
        else:
            verdict, losses = "loss", losses + 1
        per_competition.append(
            {
                "competition_id": competition,
                "a_medal_rate": float(rate_a[i]),
                "b_medal_rate": float(rate_b[i]),
                "a_level": level_a,
                "b_level": level_b,
                "result": verdict,
            }
        )
    return Comparison(
        a=name_a,
        b=name_b,
        competitions=shared,
        a_any_medal=float(100 * rate_a.mean()),
        b_any_medal=float(100 * rate_b.mean()),
        difference=float(difference),
        ci_lower=float(lower),
        ci_upper=float(upper),
        p_value=p_value,
        wins=wins,
        ties=ties,
        losses=losses,
        per_competition=tuple(per_competition),
        n_bootstrap=n_bootstrap,
    )


def medal_gap(
    score: float | None, median: float | None, gold: float | None, lower_is_better: bool
) -> float | None:
    """Where a score sits between the leaderboard median (0) and the gold line (1):
    negative below the median, above 1 beyond gold. None when undefined."""
    if score is None or median is None or gold is None:
        return None
    if not all(np.isfinite([score, median, gold])) or gold == median:
        return None
    span = (median - gold) if lower_is_better else (gold - median)
    offset = (median - score) if lower_is_better else (score - median)
    return float(offset / span)


UNPAIRED_LABEL = "unpaired: from published figures"
_Z95 = 1.959963984540054  # two-sided 95% quantile of the standard normal


@dataclass(frozen=True)
class SplitDifference:
    """A minus B on one split, from the two published means and SEMs alone.

    With no per-competition reports there is nothing to pair, so the interval treats the
    two means as independent and normal: difference ± 1.96 · sqrt(SEM_a² + SEM_b²).
    """

    split: str
    a_mean: float
    a_standard_error: float
    b_mean: float
    b_standard_error: float

    @property
    def difference(self) -> float:
        return self.a_mean - self.b_mean

    @property
    def half_width(self) -> float:
        return _Z95 * math.hypot(self.a_standard_error, self.b_standard_error)

    def to_dict(self) -> dict:
        return {
            "split": self.split,
            "a_mean": self.a_mean,
            "a_standard_error": self.a_standard_error,
            "b_mean": self.b_mean,
            "b_standard_error": self.b_standard_error,
            # Rounded past the published figures' precision (no 0.8900000000000006).
            "difference": round(self.difference, 6),
            "ci_lower": round(self.difference - self.half_width, 6),
            "ci_upper": round(self.difference + self.half_width, 6),
            "method": UNPAIRED_LABEL,
        }


def compare_split_figures(
    name_a: str,
    figures_a: Mapping[str, Mapping[str, float]],
    name_b: str,
    figures_b: Mapping[str, Mapping[str, float]],
    splits: Sequence[str],
) -> dict:
    """Compare two experiments split by split from their Any Medal % means and SEMs
    (``figures_x``: split -> {"mean", "standard_error"}), on the ``splits`` both have.
    Raises ValueError when they share none."""
    rows = [
        SplitDifference(
            split=s,
            a_mean=float(figures_a[s]["mean"]),
            a_standard_error=float(figures_a[s].get("standard_error") or 0.0),
            b_mean=float(figures_b[s]["mean"]),
            b_standard_error=float(figures_b[s].get("standard_error") or 0.0),
        )
        for s in splits
        if s in figures_a and s in figures_b
    ]
    if not rows:
        raise ValueError(f"{name_a} and {name_b} have no split in common")
    return {
        "a": name_a,
        "b": name_b,
        "method": UNPAIRED_LABEL,
        "splits": [r.to_dict() for r in rows],
    }
