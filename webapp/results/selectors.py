"""Reads for experiments and reports. Pages read the cached aggregates; nothing here
recomputes figures from thousands of reports per request."""

from django.db.models import Q, QuerySet
from django.utils.html import escape
from django.utils.safestring import mark_safe

from webapp.results.models import Experiment, GradeReport

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


def experiments_editable_by(user) -> QuerySet:
    """Experiments a user may change or re-grade: their own; staff: all."""
    qs = Experiment.objects.all()
    if getattr(user, "is_staff", False):
        return qs
    if getattr(user, "is_authenticated", False):
        return qs.filter(owner=user)
    return qs.none()


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


def experiment_reports(experiment: Experiment) -> QuerySet:
    return (
        GradeReport.objects.filter(experiment=experiment, is_current=True)
        .select_related("competition")
        .order_by("competition__slug", "seed")
    )


def _num(value, digits: int | None = None) -> str:
    if value is None:
        return ""
    return (
        f"{value:.{digits}f}"
        if digits is not None
        else f"{value:g}"
        if isinstance(value, float)
        else str(value)
    )


def competition_rows_html(experiment: Experiment) -> str:
    """The per-competition table body (score, medal, thresholds, percentile, medal gap
    per seed), built in Python: a template loop over 375 rows costs more than the whole
    rest of the page."""
    from benchmark.compare import medal_gap

    rows = (
        GradeReport.objects.filter(experiment=experiment, is_current=True)
        .order_by("competition__slug", "seed")
        .values_list(
            "competition__slug",
            "seed",
            "score",
            "gold_medal",
            "silver_medal",
            "bronze_medal",
            "above_median",
            "gold_threshold",
            "silver_threshold",
            "bronze_threshold",
            "median_threshold",
            "percentile",
            "submission_exists",
            "valid_submission",
            "error",
            "is_lower_better",
        )
    )
    out = []
    for (
        slug,
        seed,
        score,
        gold,
        silver,
        bronze,
        above,
        g,
        sv,
        b,
        m,
        pct,
        exists,
        valid,
        error,
        lower,
    ) in rows:
        medal = "gold" if gold else "silver" if silver else "bronze" if bronze else ""
        badge = (
            f'<span class="badge {medal}">{medal}</span>'
            if medal
            else '<span class="badge">above median</span>'
            if above
            else ""
        )
        gap = medal_gap(score, m, g, lower)
        note = (
            ""
            if valid
            else (
                "no submission"
                if not exists
                else "invalid" + (f": {escape(error[:140])}" if error else "")
            )
        )
        out.append(
            f'<tr><td><a href="/competitions/{escape(slug)}/">{escape(slug)}</a></td>'
            f'<td class="num" data-value="{seed}">{seed}</td>'
            f'<td class="num" data-value="{_num(score)}">{_num(score) if score is not None else "<span class=muted>—</span>"}</td>'
            f"<td>{badge}</td>"
            f'<td class="num" data-value="{-999 if gap is None else gap}">{_num(gap, 2)}</td>'
            f'<td class="num">{_num(g)}</td><td class="num">{_num(sv)}</td><td class="num">{_num(b)}</td><td class="num">{_num(m)}</td>'
            f'<td class="num" data-value="{-1 if pct is None else pct}">{_num(pct, 1)}</td>'
            f'<td class="small">{note}</td></tr>'
        )
    return mark_safe("".join(out))  # every value above is escaped or a number


def medal_outcomes(experiment_ids: list[int], competition_ids: set[str] | None = None) -> dict:
    """experiment id -> competition slug -> [RunOutcome per seed], from current reports."""
    from benchmark.compare import RunOutcome, outcome_level

    out: dict[int, dict[str, list]] = {i: {} for i in experiment_ids}
    rows = (
        GradeReport.objects.filter(experiment_id__in=experiment_ids, is_current=True)
        .values_list(
            "experiment_id",
            "competition__slug",
            "seed",
            "valid_submission",
            "above_median",
            "bronze_medal",
            "silver_medal",
            "gold_medal",
        )
        .order_by("experiment_id", "competition__slug", "seed")
    )
    for exp_id, slug, _seed, valid, above, bronze, silver, gold in rows:
        if competition_ids is not None and slug not in competition_ids:
            continue
        out[exp_id].setdefault(slug, []).append(
            RunOutcome(
                any_medal=bool(gold or silver or bronze),
                level=outcome_level(
                    valid=valid, above_median=above, bronze=bronze, silver=silver, gold=gold
                ),
            )
        )
    return out


def any_medal_by_split(experiment: Experiment) -> dict:
    """Any Medal % (mean, SEM) per split: from the experiment's reports when it has them,
    else as published (with the footnotes marking each figure). Each value says which
    (``"source"``: "reports" or "published")."""
    out = {}
    for split, figures in split_figures(experiment).items():
        metric = (figures.get("metrics") or {}).get("any_medal_percentage")
        if metric and metric.get("mean") is not None:
            out[split] = {
                "mean": metric["mean"],
                "standard_error": metric.get("standard_error") or 0.0,
                "source": "reports",
            }
    for split, value in (experiment.published_figures or {}).items():
        if split not in out and isinstance(value, dict) and value.get("mean") is not None:
            out[split] = {
                "mean": value["mean"],
                "standard_error": value.get("standard_error") or 0.0,
                "footnotes": value.get("footnotes", []),
                "source": "published",
            }
    return out


def pairwise_comparisons(
    experiments: list[Experiment], split: str, splits: list[str] | None = None
) -> list[dict]:
    """The first experiment against each other one. When both have reports on ``split``:
    a paired bootstrap over that split's competitions (``"kind": "paired"``). Otherwise
    (published figures only): per split, the difference of means with an interval from
    the two SEMs over their common ``splits`` (``"kind": "unpaired"``)."""
    from benchmark.catalogue import load_catalogue
    from benchmark.compare import compare_experiments, compare_split_figures

    by_split = {e.pk: any_medal_by_split(e) for e in experiments}
    base = experiments[0]
    unpaired = {
        other.pk
        for other in experiments[1:]
        if any((by_split[e.pk].get(split) or {}).get("source") != "reports" for e in (base, other))
    }
    results_unpaired = {}
    for other in experiments[1:]:
        if other.pk not in unpaired:
            continue
        try:
            result = compare_split_figures(
                base.name, by_split[base.pk], other.name, by_split[other.pk], splits or [split]
            )
            result["kind"] = "unpaired"
        except ValueError as exc:
            result = {"a": base.name, "b": other.name, "error": str(exc), "kind": "unpaired"}
        results_unpaired[other.pk] = result
    if len(unpaired) == len(experiments) - 1:
        return [results_unpaired[o.pk] for o in experiments[1:]]

    ids = (
        {cid for cid, facts in load_catalogue(include_demo=True).items() if split in facts.splits}
        if split
        else None
    )
    outcomes = medal_outcomes([e.pk for e in experiments], ids)
    results = []
    for other in experiments[1:]:
        if other.pk in unpaired:
            results.append(results_unpaired[other.pk])
            continue
        try:
            result = compare_experiments(
                base.name, outcomes[base.pk], other.name, outcomes[other.pk]
            )
        except ValueError as exc:
            results.append({"a": base.name, "b": other.name, "error": str(exc), "kind": "paired"})
            continue
        results.append({**result.to_dict(), "kind": "paired"})
    return results


COMPARE_SPLITS = ("all", "low", "medium", "high", "demo", "dev", "ran")


def comparison_of(experiments: list[Experiment], split: str = "") -> dict:
    """What the compare page and ``/api/compare/`` show for the same selection: the splits
    every experiment has a figure on, the split compared (``split`` when common, else the
    first common one), each experiment's Any Medal % per split and the comparisons."""
    by_split = {e.pk: any_medal_by_split(e) for e in experiments}
    common = [s for s in COMPARE_SPLITS if all(s in by_split[e.pk] for e in experiments)]
    chosen = split if split in common else (common[0] if common else "")
    return {
        "split": chosen,
        "common_splits": common,
        "by_split": by_split,
        "comparisons": pairwise_comparisons(experiments, chosen, common)
        if common
        else [
            {"a": experiments[0].name, "b": e.name, "error": "no split in common", "kind": ""}
            for e in experiments[1:]
        ],
    }
