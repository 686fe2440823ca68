"""Reads for experiments and reports. Pages read the cached aggregates; nothing here
recomputes figures from thousands of reports per request."""

from django.db.models import Q, QuerySet

from webapp.results.models import Experiment, GradeReport

LEADERBOARD_SPLITS = ("low", "medium", "high", "all")
FUNNEL_STAGES = (
    ("made_submission", "Made submission"),
    ("valid_submission", "Valid"),
    ("above_median", "Above median"),
    ("bronze", "Bronze"),
    ("silver", "Silver"),
    ("gold", "Gold"),
    ("any_medal", "Any medal"),
)
FUNNEL_METRICS = {
    "made_submission": "submission_exists_percentage",
    "valid_submission": "valid_submissions_percentage",
    "above_median": "above_median_percentage",
    "bronze": "bronze_medal_percentage",
    "silver": "silver_medal_percentage",
    "gold": "gold_medal_percentage",
    "any_medal": "any_medal_percentage",
}


def experiments_visible_to(user) -> QuerySet:
    """Published experiments, plus the user's own; staff see everything."""
    qs = Experiment.objects.select_related("agent__scaffold", "agent__model", "owner")
    if getattr(user, "is_staff", False):
        return qs
    if getattr(user, "is_authenticated", False):
        return qs.filter(Q(is_published=True) | Q(owner=user))
    return qs.filter(is_published=True)


def medal_of(report) -> str:
    if report.gold_medal:
        return "gold"
    if report.silver_medal:
        return "silver"
    if report.bronze_medal:
        return "bronze"
    return ""


def agent_scores_on_competition(competition, *, user) -> list[dict]:
    visible = experiments_visible_to(user).values("pk")
    reports = (
        GradeReport.objects.filter(competition=competition, is_current=True, experiment__in=visible)
        .select_related("experiment__agent__scaffold", "experiment__agent__model")
        .order_by("experiment__name", "seed")
    )
    return [
        {
            "experiment_id": r.experiment_id,
            "label": f"{r.experiment.name} (seed {r.seed})",
            "seed": r.seed,
            "score": r.score,
            "submission_exists": r.submission_exists,
            "medal": medal_of(r),
            "percentile": r.percentile,
            "above_median": r.above_median,
        }
        for r in reports
    ]


def split_figures(experiment: Experiment, *, clean: bool = False) -> dict:
    """The cached figures per split (``benchmark.aggregate`` output), or {}."""
    aggregate = getattr(experiment, "aggregate", None)
    if aggregate is None:
        return {}
    figures = aggregate.clean_figures if clean else aggregate.figures
    return figures.get("splits", {})


def headline(figures_for_split: dict) -> dict | None:
    """Any Medal % of one split: {mean, standard_error, ci_lower, ci_upper, n_seeds}."""
    metrics = (figures_for_split or {}).get("metrics")
    if not metrics:
        return None
    return {**metrics["any_medal_percentage"], "n_seeds": figures_for_split.get("num_seeds_averaged")}


def funnel_stages(figures_for_split: dict) -> list[dict]:
    """The funnel Made submission -> Valid -> Above median -> Bronze/Silver/Gold -> Any
    medal: mean and SEM over seeds, and each seed's value."""
    metrics = (figures_for_split or {}).get("metrics")
    if not metrics:
        return []
    seeds = figures_for_split.get("seeds", [])
    stages = []
    for key, label in FUNNEL_STAGES:
        name = FUNNEL_METRICS[key]
        stages.append(
            {
                "key": key,
                "label": label,
                "metric": name,
                **metrics[name],
                "per_seed": [seed["metrics"][name] for seed in seeds],
            }
        )
    return stages


def leaderboard_rows(*, user, clean: bool = False) -> list[dict]:
    rows = []
    for experiment in experiments_visible_to(user).select_related("aggregate"):
        splits = split_figures(experiment, clean=clean)
        rows.append(
            {
                "experiment": experiment,
                "splits": {s: headline(splits.get(s, {})) for s in (*LEADERBOARD_SPLITS, "demo")},
                "n_seeds": max((f.get("num_seeds_averaged") or 0 for f in splits.values()), default=0),
            }
        )
    return rows


def experiment_reports(experiment: Experiment) -> QuerySet:
    return (
        GradeReport.objects.filter(experiment=experiment, is_current=True)
        .select_related("competition")
        .order_by("competition__slug", "seed")
    )
