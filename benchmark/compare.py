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

from benchmark.medals import MEDALS, medal_level

# Outcome levels, for per-competition win/tie/loss: the best thing that happened.
LEVELS = {
    "none": 0,
    "valid": 1,
    "above_median": 2,
    **{medal: 3 + rank for rank, medal in enumerate(reversed(MEDALS))},  # lowest first
}
# What people read for each level, lowest first.
LEVEL_LABELS = {
    "none": "no valid submission",
    "valid": "valid",
    "above_median": "above median",
    "bronze": "bronze",
    "silver": "silver",
    "gold": "gold",
}
# How one competition is decided between two experiments, in words: every page and the
# API say this rule, ``decide`` applies it.
DECISION_RULE = (
    "a competition is won on the medal level (the mean over seeds of each run's best "
    "outcome: "
    + ", ".join(
        f"{LEVEL_LABELS[name]} {value}"
        for name, value in sorted(LEVELS.items(), key=lambda item: item[1])
    )
    + "), then, when the levels are equal, on the mean score in the metric's direction; "
    "equal on both (or no score to compare) is a tie"
)


@dataclass(frozen=True)
class SeedResult:
    """One seed of one competition, as a comparison of experiments counts it."""

    any_medal: bool
    level: int  # one of LEVELS' values
    score: float | None = None  # None: no (finite) score


def outcome_level(
    *, valid: bool, above_median: bool, bronze: bool, silver: bool, gold: bool
) -> int:
    medal = medal_level(gold=gold, silver=silver, bronze=bronze)
    if medal:
        return LEVELS[medal]
    if above_median:
        return LEVELS["above_median"]
    return LEVELS["valid"] if valid else LEVELS["none"]


def level_of(report) -> int:
    """The outcome level of one graded run (a ``CompetitionReport``; None, a missing run,
    is level none)."""
    if report is None:
        return LEVELS["none"]
    return outcome_level(
        valid=bool(report.valid_submission),
        above_median=bool(report.above_median),
        bronze=bool(report.bronze_medal),
        silver=bool(report.silver_medal),
        gold=bool(report.gold_medal),
    )


def level_text(mean_level: float) -> str:
    """A mean level in words: the level's name when every seed reached it, else the mean
    ("3.67, between bronze and silver")."""
    names = list(LEVELS)
    low = int(math.floor(mean_level + 1e-9))
    if abs(mean_level - low) < 1e-9:
        return LEVEL_LABELS[names[low]]
    return (
        f"{mean_level:.2f}, between {LEVEL_LABELS[names[low]]} and {LEVEL_LABELS[names[low + 1]]}"
    )


def _binomial_cdfs(medals: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Per competition, the CDF of Binomial(n, medals/n) at 0..max(n) (padded with 1)."""
    width = int(seeds.max()) + 1
    log_factorial = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, width)))])
    cdf = np.ones((len(seeds), width))
    for c, (m, n) in enumerate(zip(medals, seeds, strict=True)):
        n = int(n)
        k = np.arange(n + 1)
        p = m / n
        if p <= 0.0 or p >= 1.0:  # all of it on 0 medals, or on n
            pmf = (k == (n if p >= 1.0 else 0)).astype(float)
        else:
            log_comb = log_factorial[n] - log_factorial[k] - log_factorial[n - k]
            pmf = np.exp(log_comb + k * math.log(p) + (n - k) * math.log1p(-p))
        cdf[c, :n] = np.cumsum(pmf)[:n]
    return cdf


_GRID = 4096  # bins of the uniform in the lookup table of ``_bootstrap_rates``


def _bootstrap_rates(
    medals: np.ndarray, seeds: np.ndarray, comp_idx: np.ndarray, rng
) -> np.ndarray:
    """Mean medal rate (0-1) per bootstrap sample. ``comp_idx`` (B x C) picks competitions;
    within each picked competition its seeds are drawn with replacement. For 0/1 outcomes
    the medals among n seeds drawn with replacement are Binomial(n, medals/n); they are
    drawn by inverting that CDF with one uniform u per (sample, competition), which is much
    faster than drawing every seed.

    The inversion (medals drawn = how many CDF values lie below u) is exact and done with
    a lookup table rather than a loop over the seeds: for u in the bin [j/G, (j+1)/G) the
    count lies between the counts below j/G and below (j+1)/G; it is read off the table
    where the two agree (nearly always) and settled by comparing u with the CDF itself
    where a CDF value falls inside the bin. The draws are the same as a direct comparison
    of u with every CDF value would give, at a cost that does not grow with the seeds."""
    cdf = _binomial_cdfs(medals, seeds)
    edges = np.arange(_GRID + 1) / _GRID
    # below[c, j]: CDF values of competition c under j/G, laid out flat.
    below = np.concatenate([np.searchsorted(row, edges, side="left") for row in cdf])
    u = rng.random(comp_idx.shape)
    cell = comp_idx * (_GRID + 1) + (u * _GRID).astype(np.intp)
    drawn = below[cell]
    unsure = np.flatnonzero(below[cell + 1] > drawn)
    if unsure.size:
        flat_drawn = drawn.reshape(-1)
        c = comp_idx.reshape(-1)[unsure]
        uu = u.reshape(-1)[unsure]
        lo, hi = flat_drawn[unsure], below[cell.reshape(-1)[unsure] + 1]
        for _ in range(int((hi - lo).max())):
            lo = lo + ((lo < hi) & (uu > cdf[c, np.minimum(lo, cdf.shape[1] - 1)]))
        flat_drawn[unsure] = lo
    return (drawn * (1.0 / seeds)[comp_idx]).mean(axis=1)


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
        test = f"paired sign-flip test of the medal rates over {n} competitions, p = {self.p_value:.3g}"
        if self.ci_lower > 0:
            return f"{self.a} beats {self.b} by {self.difference:.1f} points of Any Medal % ({ci}; {test})."
        if self.ci_upper < 0:
            return f"{self.b} beats {self.a} by {-self.difference:.1f} points of Any Medal % ({ci}; {test})."
        return (
            f"No clear difference in Any Medal %: {self.a} minus {self.b} is {self.difference:+.1f} points "
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
            "decision_rule": DECISION_RULE,
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


@dataclass(frozen=True)
class CompetitionTally:
    """One experiment's seeds on one competition, as counted for a comparison: how many
    seeds, how many of them won a medal and the sum of their outcome levels."""

    seeds: int
    medals: int
    level_sum: int
    mean_score: float | None = None  # over the seeds with a finite score
    lower_is_better: bool = False

    @property
    def mean_level(self) -> float:
        return self.level_sum / self.seeds


def tally(outcomes: Sequence[SeedResult], lower_is_better: bool = False) -> CompetitionTally:
    scores = [o.score for o in outcomes if o.score is not None and math.isfinite(o.score)]
    return CompetitionTally(
        seeds=len(outcomes),
        medals=sum(o.any_medal for o in outcomes),
        level_sum=sum(o.level for o in outcomes),
        mean_score=sum(scores) / len(scores) if scores else None,
        lower_is_better=lower_is_better,
    )


def decide(a: CompetitionTally, b: CompetitionTally) -> tuple[str, str]:
    """One competition between two experiments (``DECISION_RULE``): ("win" | "loss" |
    "tie", for A) and what decided it ("medal level", "score" or "" for a tie)."""
    if abs(a.mean_level - b.mean_level) > 1e-9:
        return ("win" if a.mean_level > b.mean_level else "loss"), "medal level"
    if a.mean_score is None or b.mean_score is None:
        return "tie", ""
    # Equal to within rounding noise of the two means: a tie.
    if math.isclose(a.mean_score, b.mean_score, rel_tol=1e-9, abs_tol=1e-12):
        return "tie", ""
    a_better = (a.mean_score < b.mean_score) == a.lower_is_better
    return ("win" if a_better else "loss"), "score"


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
    ValueError when they share no competition. The same as ``compare_tallies`` on the
    outcomes counted per competition.
    """
    return compare_tallies(
        name_a,
        {c: tally(o) for c, o in outcomes_a.items()},
        name_b,
        {c: tally(o) for c, o in outcomes_b.items()},
        n_bootstrap=n_bootstrap,
        seed=seed,
    )


def compare_tallies(
    name_a: str,
    tallies_a: Mapping[str, CompetitionTally],
    name_b: str,
    tallies_b: Mapping[str, CompetitionTally],
    *,
    n_bootstrap: int = 10000,
    seed: int = 0,
) -> Comparison:
    """``compare_experiments`` from per-competition counts (which is all the statistics
    need: 0/1 medal outcomes resampled within a competition are binomial, and the win/tie/
    loss verdicts compare mean levels, then mean scores: ``decide``), e.g. the
    per-competition counts of ``benchmark.aggregate``.

    10,000 bootstrap samples: the Monte Carlo error of the interval's 2.5% and 97.5% ends is
    about 2.7 / sqrt(10,000) = 0.03 standard deviations of the bootstrap distribution
    (some 0.1 points of Any Medal % for two experiments of 75 competitions), below the
    precision shown. Drawing them costs time in proportion to samples × competitions, not to
    the seeds (``_bootstrap_rates``)."""
    shared = tuple(sorted(set(tallies_a) & set(tallies_b)))
    shared = tuple(c for c in shared if tallies_a[c].seeds and tallies_b[c].seeds)
    if not shared:
        raise ValueError(f"{name_a} and {name_b} have no competition in common")
    rng = np.random.default_rng(seed)
    med_a = np.array([tallies_a[c].medals for c in shared], dtype=float)
    med_b = np.array([tallies_b[c].medals for c in shared], dtype=float)
    n_a = np.array([tallies_a[c].seeds for c in shared])
    n_b = np.array([tallies_b[c].seeds for c in shared])
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
    verdicts = {"win": 0, "tie": 0, "loss": 0}
    for i, competition in enumerate(shared):
        a, b = tallies_a[competition], tallies_b[competition]
        verdict, decided_by = decide(a, b)
        verdicts[verdict] += 1
        per_competition.append(
            {
                "competition_id": competition,
                "a_medal_rate": float(rate_a[i]),
                "b_medal_rate": float(rate_b[i]),
                "a_level": a.mean_level,
                "b_level": b.mean_level,
                "a_level_text": level_text(a.mean_level),
                "b_level_text": level_text(b.mean_level),
                "a_score": a.mean_score,
                "b_score": b.mean_score,
                "lower_is_better": a.lower_is_better,
                "result": verdict,
                "decided_by": decided_by,
            }
        )
    wins, ties, losses = verdicts["win"], verdicts["tie"], verdicts["loss"]
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
