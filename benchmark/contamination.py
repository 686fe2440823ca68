"""Did the agent do better on competitions its model may have read about? The paper's two
contamination analyses, as pure functions over per-competition results:

* **by date** (Figure 9): medal rate against Kaggle deadline (least-squares trend,
  Spearman), and before/after the model's knowledge cutoff (Welch's t-test, 95% interval);
* **by familiarity** (Figure 5): medal rate and mean percentile against the base model's
  familiarity with the competition's texts (Pearson's r).

Every test and interval is scipy's. Rates and differences are in percent (points); where
a statistic cannot be computed, ``reason`` says why instead of giving a number.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MIN_FOR_CORRELATION = 3  # competitions a correlation needs
MIN_PER_SIDE = 2  # competitions each side of the cutoff needs for a test
CONFIDENCE = 0.95
DAYS_PER_YEAR = 365.25


@dataclass(frozen=True)
class CompetitionResult:
    """One competition of an experiment: its seeds and the seeds with a medal (a
    disqualified seed counts as none), with what it is set against."""

    competition_id: str
    seeds: int
    medals: int
    deadline: dt.date | None = None
    mean_percentile: float | None = None  # over the seeds with a percentile
    familiarity: float | None = None  # mean token probability, 0-1

    @property
    def medal_rate(self) -> float:
        """Percent of the seeds with a medal."""
        return 100.0 * self.medals / self.seeds if self.seeds else 0.0


def _finite(value) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _too_few(n: int, what: str = "competitions") -> dict:
    return {
        "n": n,
        "reason": f"too few {what} for a correlation ({n}; it needs at least "
        f"{MIN_FOR_CORRELATION})",
    }


def _constant(values: Sequence[float]) -> bool:
    return max(values) - min(values) == 0


def correlation(xs: Sequence[float], ys: Sequence[float], *, method: str, names=("x", "y")) -> dict:
    """Spearman's rank correlation (``method="spearman"``) or Pearson's r
    (``"pearson"``) of paired values, with its two-sided p-value: ``{"method", "n",
    "statistic", "p_value"}``, or ``{"n", "reason"}`` when it is undefined."""
    from scipy import stats

    n = len(xs)
    if n < MIN_FOR_CORRELATION:
        return _too_few(n)
    for values, name in zip((xs, ys), names, strict=True):
        if _constant(values):
            return {
                "n": n,
                "reason": f"every competition has the same {name}: a correlation is undefined",
            }
    if method == "spearman":
        result = stats.spearmanr(xs, ys)
        label = "Spearman's rank correlation"
    elif method == "pearson":
        result = stats.pearsonr(xs, ys)
        label = "Pearson's r"
    else:
        raise ValueError(f"unknown correlation method {method!r}")
    statistic, p_value = _finite(result.statistic), _finite(result.pvalue)
    if statistic is None or p_value is None:
        return {"n": n, "reason": "the correlation is undefined for these values"}
    return {"method": label, "n": n, "statistic": statistic, "p_value": p_value}


def trend_line(deadlines: Sequence[dt.date], rates: Sequence[float]) -> dict | None:
    """The least-squares line of medal rate (percent) on deadline (scipy's
    ``linregress``): its slope in points per year and its two ends over the deadlines'
    range; None with fewer than two distinct deadlines."""
    from scipy import stats

    days = [d.toordinal() for d in deadlines]
    if len(set(days)) < 2:
        return None
    fit = stats.linregress(days, rates)
    first, last = min(deadlines), max(deadlines)
    return {
        "slope_per_year": fit.slope * DAYS_PER_YEAR,
        "start": {
            "deadline": first.isoformat(),
            "medal_rate": fit.intercept + fit.slope * first.toordinal(),
        },
        "end": {
            "deadline": last.isoformat(),
            "medal_rate": fit.intercept + fit.slope * last.toordinal(),
        },
    }


def cutoff_comparison(results: Sequence[CompetitionResult], cutoff: dt.date) -> dict:
    """Medal rates of the competitions whose deadline is on or before ``cutoff`` against
    those after it: each side's count and mean, the difference (before − after, points),
    and Welch's t-test (``scipy.stats.ttest_ind(equal_var=False)``) with its 95% interval
    for that difference; ``reason`` where the test cannot be made."""
    from scipy import stats

    before = [r.medal_rate for r in results if r.deadline <= cutoff]
    after = [r.medal_rate for r in results if r.deadline > cutoff]
    out: dict = {
        "cutoff": cutoff.isoformat(),
        "before": {"n": len(before), "mean": _mean(before)},
        "after": {"n": len(after), "mean": _mean(after)},
        "difference": None,
        "method": "Welch's t-test",
    }
    if before and after:
        out["difference"] = out["before"]["mean"] - out["after"]["mean"]
    if len(before) < MIN_PER_SIDE or len(after) < MIN_PER_SIDE:
        out["reason"] = (
            f"too few competitions on one side of the cutoff for a test (before: "
            f"{len(before)}, after: {len(after)}; it needs at least {MIN_PER_SIDE} on each side)"
        )
        return out
    if _constant(before) and _constant(after):
        out["reason"] = "the medal rates do not vary on either side of the cutoff: no test"
        return out
    test = stats.ttest_ind(before, after, equal_var=False)
    interval = test.confidence_interval(confidence_level=CONFIDENCE)
    p_value, low, high = _finite(test.pvalue), _finite(interval.low), _finite(interval.high)
    if p_value is None or low is None or high is None:
        out["reason"] = "the test is undefined for these values"
        return out
    out.update({"p_value": p_value, "ci_lower": low, "ci_upper": high, "confidence": CONFIDENCE})
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def date_view(results: Iterable[CompetitionResult], cutoff: dt.date | None = None) -> dict:
    """The date analysis of an experiment's per-competition results: ``points`` (those
    with a deadline, oldest first), ``without_deadline`` (their ids), ``correlation``
    (Spearman, deadline against medal rate), ``trend`` (or None) and ``cutoff`` (None when
    no cutoff is stated, else ``cutoff_comparison``)."""
    results = list(results)
    dated = sorted((r for r in results if r.deadline is not None), key=lambda r: r.deadline)
    deadlines = [r.deadline for r in dated]
    rates = [r.medal_rate for r in dated]
    return {
        "points": [
            {
                "competition_id": r.competition_id,
                "deadline": r.deadline.isoformat(),
                "medal_rate": r.medal_rate,
                "medals": r.medals,
                "seeds": r.seeds,
            }
            for r in dated
        ],
        "without_deadline": sorted(r.competition_id for r in results if r.deadline is None),
        "correlation": correlation(
            [d.toordinal() for d in deadlines],
            rates,
            method="spearman",
            names=("deadline", "medal rate"),
        ),
        "trend": trend_line(deadlines, rates) if len(dated) >= MIN_FOR_CORRELATION else None,
        "cutoff": cutoff_comparison(dated, cutoff) if cutoff is not None else None,
    }


def familiarity_view(results: Iterable[CompetitionResult]) -> dict:
    """The familiarity analysis: ``points`` (competitions with a familiarity value),
    ``without_familiarity`` (their ids) and Pearson's r of familiarity against the medal
    rate (``medal_rate``) and against the mean percentile (``percentile``, over the
    competitions that have one)."""
    results = list(results)
    known = sorted((r for r in results if r.familiarity is not None), key=lambda r: r.familiarity)
    ranked = [r for r in known if r.mean_percentile is not None]
    return {
        "points": [
            {
                "competition_id": r.competition_id,
                "familiarity": r.familiarity,
                "medal_rate": r.medal_rate,
                "medals": r.medals,
                "seeds": r.seeds,
                "mean_percentile": r.mean_percentile,
            }
            for r in known
        ],
        "without_familiarity": sorted(r.competition_id for r in results if r.familiarity is None),
        "medal_rate": correlation(
            [r.familiarity for r in known],
            [r.medal_rate for r in known],
            method="pearson",
            names=("familiarity", "medal rate"),
        ),
        "percentile": correlation(
            [r.familiarity for r in ranked],
            [r.mean_percentile for r in ranked],
            method="pearson",
            names=("familiarity", "mean percentile"),
        ),
    }
