"""Aggregate grade reports into the benchmark's figures: the one source of truth.

``aggregate`` reproduces MLE-bench's ``experiments/aggregate_grading_reports.py`` (same
metric names and arithmetic: per seed the % of competitions with a submission, a valid
one, above median, each medal; across seeds mean, SE with ddof 1 and ± 1.96 SE) and adds
per category, per complexity, the funnel and pass@k. Seeds are ``explicit`` (each report's
``seed``; mleboard's default) or ``positional`` (the i-th report of each competition, as
MLE-bench reads them: ``read_reports_in_mlebench_order``). Without ``pad_missing`` only
complete seeds count; with it, missing runs count as runs with no submission. The rules in
full: docs/architecture.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmark.catalogue import COMPLEXITIES, CompetitionFacts, load_catalogue
from benchmark.compare import level_of
from benchmark.passk import pass_at_k_curve
from benchmark.reports import CompetitionReport, read_grading_report
from benchmark.splits import resolve_split

# MLE-bench's SeedMetrics fields, in its order: the names the figures go by everywhere.
METRIC_NAMES = (
    "total_competitions",
    "submission_exists_percentage",
    "valid_submissions_percentage",
    "above_median_percentage",
    "gold_medal_percentage",
    "silver_medal_percentage",
    "bronze_medal_percentage",
    "any_medal_percentage",
)
# Per-run outcomes counted per seed; each percentage metric is one of them over the total.
OUTCOMES = (
    ("made_submission", "submission_exists_percentage"),
    ("valid_submission", "valid_submissions_percentage"),
    ("above_median", "above_median_percentage"),
    ("gold_medal", "gold_medal_percentage"),
    ("silver_medal", "silver_medal_percentage"),
    ("bronze_medal", "bronze_medal_percentage"),
    ("any_medal", "any_medal_percentage"),
)


@dataclass(frozen=True)
class FunnelStage:
    outcome: str  # one of OUTCOMES' names
    label: str


# MLE-bench's funnel, the one definition every page, API and command shows: each stage
# counts the runs that got at least that far. Medals by colour are a breakdown, not a stage.
FUNNEL = (
    FunnelStage("made_submission", "Made submission"),
    FunnelStage("valid_submission", "Valid"),
    FunnelStage("above_median", "Above median"),
    FunnelStage("any_medal", "Any medal"),
)
SEEDINGS = ("auto", "explicit", "positional")
Z_95 = 1.96  # MLE-bench's normal-approximation 95% interval


class AggregationError(ValueError):
    """The reports cannot form the requested seeds; the message says why."""


def outcome_of(report: CompetitionReport | None) -> dict[str, bool]:
    """A run's outcomes; None (a missing, zero-padded run) has none.

    ``any_medal`` is gold or silver or bronze, as MLE-bench's aggregation computes it
    (not the report's own ``any_medal`` field).
    """
    if report is None:
        return {name: False for name, _ in OUTCOMES}
    return {
        "made_submission": bool(report.submission_exists),
        "valid_submission": bool(report.valid_submission),
        "above_median": bool(report.above_median),
        "gold_medal": bool(report.gold_medal),
        "silver_medal": bool(report.silver_medal),
        "bronze_medal": bool(report.bronze_medal),
        "any_medal": bool(report.gold_medal or report.silver_medal or report.bronze_medal),
    }


def read_reports_in_mlebench_order(paths: Iterable[Path | str]) -> list[CompetitionReport]:
    """Every report of the grading-report files, in the order MLE-bench's script reads them.

    Files sorted by their path as given; within a file, reports stably sorted by
    competition id. This order is what positional seed pairing pairs on.
    """
    reports: list[CompetitionReport] = []
    for path in sorted(str(p) for p in paths):
        reports.extend(sorted(read_grading_report(Path(path)), key=lambda r: r.competition_id))
    return reports


def summarise(values: Sequence[float]) -> dict[str, float]:
    """Mean, 95% CI and standard error (ddof 1; 0 for one value) of per-seed values."""
    array = np.asarray(values, dtype=float)
    mean = float(np.mean(array))
    sem = float(np.std(array, ddof=1) / np.sqrt(array.size)) if array.size > 1 else 0.0
    return {
        "mean": mean,
        "ci_lower": mean - Z_95 * sem,
        "ci_upper": mean + Z_95 * sem,
        "standard_error": sem,
    }


def seed_metrics(runs: Sequence[CompetitionReport | None]) -> dict[str, float]:
    """MLE-bench's SeedMetrics of one seed's runs (one per competition; None = missing)."""
    total = len(runs)
    outcomes = [outcome_of(run) for run in runs]
    metrics: dict[str, float] = {"total_competitions": total}
    for outcome, metric in OUTCOMES:
        metrics[metric] = sum(o[outcome] for o in outcomes) / total * 100
    return metrics


def aggregate(
    reports: Iterable[CompetitionReport],
    split: str = "all",
    pad_missing: bool = False,
    catalogue: dict[str, CompetitionFacts] | None = None,
    seeding: str = "auto",
    num_seeds: int = -1,
) -> dict:
    """Every figure of a set of runs on ``split``, as a JSON-serialisable dict.

    ``seeding``: "explicit" (seeds from each report's ``seed``), "positional"
    (MLE-bench's pairing by order) or "auto" (explicit when every report has a seed,
    positional when none has). ``num_seeds`` -1 uses every usable seed, else the first
    ``num_seeds``. Reports of competitions outside the split are ignored (counted in
    ``warnings``). Raises AggregationError when no seed can be formed.

    Keys: ``split``, ``seeding``, ``pad_missing``, ``num_seeds_averaged``,
    ``num_competitions_per_seed``, ``metrics`` (MLE-bench's names, each with ``mean``,
    ``ci_lower``, ``ci_upper``, ``standard_error``), ``seeds`` (per seed: ``seed``,
    ``metrics``, ``counts``, ``missing_runs``), ``by_category`` and ``by_complexity``
    (group -> ``num_competitions`` and ``metrics``), ``funnel`` (stages with ``mean``,
    SE, CI and ``runs``), ``pass_at_k`` (``metric``, ``n``, ``values`` of ``k`` and
    ``percentage``), ``per_competition`` (counts per competition, with ``level_sum`` and
    ``mean_score``, what a comparison decides a competition on), ``warnings``.
    """
    split_name = resolve_split(split)
    catalogue = load_catalogue(include_demo=True) if catalogue is None else catalogue
    competitions = [facts for facts in catalogue.values() if split_name in facts.splits]
    if not competitions:
        raise AggregationError(f"the catalogue has no competitions in split {split_name!r}")
    ids = [facts.id for facts in competitions]
    in_split = set(ids)
    warnings: list[str] = []

    reports = list(reports)
    kept = [r for r in reports if r.competition_id in in_split]
    if len(kept) < len(reports):
        warnings.append(
            f"{len(reports) - len(kept)} reports are for competitions outside split "
            f"{split_name!r} and were ignored"
        )
    mode = _resolve_seeding(seeding, kept)
    if mode == "positional":
        seeds = _positional_seeds(kept, ids, pad_missing)
    else:
        seeds = _explicit_seeds(kept, ids, pad_missing, warnings)
    if num_seeds != -1:
        if num_seeds < 1 or num_seeds > len(seeds):
            raise AggregationError(
                f"requested {num_seeds} seeds, but only {len(seeds)} complete seeds are available"
            )
        seeds = seeds[:num_seeds]

    per_seed = [seed_metrics([runs[cid] for cid in ids]) for _, runs in seeds]
    result = {
        "split": split_name,
        "seeding": mode,
        "pad_missing": bool(pad_missing),
        "num_seeds_averaged": len(seeds),
        "num_competitions_per_seed": len(ids),
        "metrics": _across_seeds(per_seed),
        "seeds": [
            _seed_entry(label, runs, ids, metrics)
            for (label, runs), metrics in zip(seeds, per_seed, strict=True)
        ],
        "by_category": _by_group(seeds, competitions, "category"),
        "by_complexity": _by_group(seeds, competitions, "complexity"),
        "funnel": [],
        "pass_at_k": {},
        "per_competition": _per_competition(seeds, competitions),
        "warnings": warnings,
    }
    result["funnel"] = _funnel(result)
    result["pass_at_k"] = {
        "metric": "any_medal",
        "n": len(seeds),
        "values": pass_at_k_curve([c["any_medal"] for c in result["per_competition"]], len(seeds)),
    }
    return result


def mlebench_summary(result: dict) -> dict:
    """The part of ``aggregate``'s result that MLE-bench's script prints, in its shape."""
    return {
        "num_seeds_averaged": result["num_seeds_averaged"],
        "num_competitions_per_seed": result["num_competitions_per_seed"],
        "metrics": result["metrics"],
    }


def _resolve_seeding(seeding: str, reports: list[CompetitionReport]) -> str:
    if seeding not in SEEDINGS:
        raise AggregationError(f"seeding must be one of {', '.join(SEEDINGS)}, not {seeding!r}")
    with_seed = sum(r.seed is not None for r in reports)
    if seeding == "explicit" and with_seed < len(reports):
        raise AggregationError(
            f"{len(reports) - with_seed} of {len(reports)} reports have no seed: explicit "
            "seeding needs a seed on every report (or use positional pairing)"
        )
    if seeding != "auto":
        return seeding
    if with_seed == len(reports) and reports:
        return "explicit"
    if with_seed == 0:
        return "positional"
    raise AggregationError(
        f"{with_seed} of {len(reports)} reports have a seed and the others do not: choose "
        "explicit or positional seeding"
    )


Seed = tuple[object, dict[str, CompetitionReport | None]]


def _positional_seeds(
    reports: list[CompetitionReport], ids: list[str], pad_missing: bool
) -> list[Seed]:
    by_competition: dict[str, list[CompetitionReport]] = {cid: [] for cid in ids}
    for report in reports:
        by_competition[report.competition_id].append(report)
    missing = [cid for cid in ids if not by_competition[cid]]
    if missing and not pad_missing:
        raise AggregationError(
            f"missing reports for competitions: {', '.join(missing)}; cannot build complete "
            "seeds (pad missing runs with zeros to aggregate anyway)"
        )
    counts = [len(by_competition[cid]) for cid in ids]
    n_seeds = max(counts) if pad_missing else min(counts)
    if n_seeds == 0:
        raise AggregationError("no reports available to form any seed")
    return [
        (
            index + 1,
            {
                cid: by_competition[cid][index] if index < len(by_competition[cid]) else None
                for cid in ids
            },
        )
        for index in range(n_seeds)
    ]


def _explicit_seeds(
    reports: list[CompetitionReport], ids: list[str], pad_missing: bool, warnings: list[str]
) -> list[Seed]:
    by_seed: dict[int, dict[str, CompetitionReport | None]] = {}
    for report in reports:
        runs = by_seed.setdefault(report.seed, {})
        if report.competition_id in runs:
            raise AggregationError(
                f"two reports for {report.competition_id} with seed {report.seed}: "
                "each (competition, seed) must be graded once"
            )
        runs[report.competition_id] = report
    seeds: list[Seed] = []
    for seed in sorted(by_seed):
        runs = by_seed[seed]
        missing = [cid for cid in ids if cid not in runs]
        if missing and not pad_missing:
            warnings.append(
                f"seed {seed} was left out: it has no run for {len(missing)} of the split's "
                f"{len(ids)} competitions ({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''})"
            )
            continue
        seeds.append((seed, {cid: runs.get(cid) for cid in ids}))
    if not seeds:
        raise AggregationError(
            "no complete seed: every seed lacks runs for some competitions of the split "
            "(pad missing runs with zeros to aggregate anyway)"
        )
    return seeds


def _across_seeds(per_seed: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    return {name: summarise([m[name] for m in per_seed]) for name in METRIC_NAMES}


def _seed_entry(label, runs, ids: list[str], metrics: dict[str, float]) -> dict:
    outcomes = [outcome_of(runs[cid]) for cid in ids]
    return {
        "seed": label,
        "metrics": metrics,
        "counts": {name: sum(o[name] for o in outcomes) for name, _ in OUTCOMES},
        "missing_runs": sum(runs[cid] is None for cid in ids),
    }


def _by_group(seeds: list[Seed], competitions: list[CompetitionFacts], attribute: str) -> dict:
    """Figures per category (alphabetical) or per complexity (low, medium, high, dev)."""
    groups: dict[str, list[str]] = {}
    for facts in competitions:
        groups.setdefault(getattr(facts, attribute), []).append(facts.id)
    rank = {name: index for index, name in enumerate(COMPLEXITIES)}
    order = sorted(groups, key=lambda g: (rank.get(g, len(rank)), g))
    return {
        group: {
            "num_competitions": len(groups[group]),
            "metrics": _across_seeds(
                [seed_metrics([runs[c] for c in groups[group]]) for _, runs in seeds]
            ),
        }
        for group in order
    }


def _per_competition(seeds: list[Seed], competitions: list[CompetitionFacts]) -> list[dict]:
    rows = []
    for facts in competitions:
        outcomes = [outcome_of(runs[facts.id]) for _, runs in seeds]
        row = {
            "competition_id": facts.id,
            "category": facts.category,
            "complexity": facts.complexity,
            "runs": len(seeds),
            "missing_runs": sum(runs[facts.id] is None for _, runs in seeds),
        }
        row.update({name: sum(o[name] for o in outcomes) for name, _ in OUTCOMES})
        runs = [runs[facts.id] for _, runs in seeds]
        # What decides one competition between two experiments (``benchmark.compare``):
        # the outcome levels summed over the seeds (a missing run is level none), then
        # the mean of the finite scores (None when no run has one).
        row["level_sum"] = sum(level_of(run) for run in runs)
        scores = [
            float(run.score)
            for run in runs
            if run is not None and run.score is not None and math.isfinite(run.score)
        ]
        row["mean_score"] = sum(scores) / len(scores) if scores else None
        rows.append(row)
    return rows


def _funnel(result: dict) -> list[dict]:
    """Each stage of FUNNEL: mean, SEM and interval over seeds, each seed's percentage and
    the number of runs that reached it."""
    metric_of = dict(OUTCOMES)
    stages = []
    for stage in FUNNEL:
        metric = metric_of[stage.outcome]
        stages.append(
            {
                "stage": stage.outcome,
                "label": stage.label,
                "metric": metric,
                **result["metrics"][metric],
                "per_seed": [seed["metrics"][metric] for seed in result["seeds"]],
                "runs": sum(seed["counts"][stage.outcome] for seed in result["seeds"]),
            }
        )
    return stages
