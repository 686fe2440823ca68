"""Reads for experiments and reports. Pages read the cached aggregates; nothing here
recomputes figures from thousands of reports per request."""

from django.db.models import F, QuerySet
from django.db.models.functions import Coalesce, TruncDate
from django.shortcuts import get_object_or_404

from benchmark.medals import medal_level
from benchmark.splits import RAN, SPLIT_PREFERENCE, default_split
from webapp.core.formatting import format_score
from webapp.core.visibility import actionable, visible_to
from webapp.results.models import Experiment, GradeReport, Upload


def experiments_visible_to(user) -> QuerySet:
    """Published experiments, plus the user's own; with ``results.view_experiment``,
    every one (``webapp.core.visibility``)."""
    qs = Experiment.objects.select_related("agent__scaffold", "agent__model", "owner")
    return visible_to(user, qs)


def experiment_visible_to(user, pk) -> Experiment:
    """One experiment ``user`` may see, with its figures; Http404 otherwise."""
    return get_object_or_404(
        # The clean subset's figures are read (one more query) only when asked for.
        experiments_visible_to(user).select_related("aggregate").defer("aggregate__clean_figures"),
        pk=pk,
    )


def experiments_regradable_by(user) -> QuerySet:
    """Experiments a user may re-grade: their own; with ``results.regrade_experiment``,
    every one they may see."""
    return actionable(user, "regrade", Experiment.objects.all())


def uploads_visible_to(user) -> QuerySet:
    """A person's own uploads; with ``results.view_upload``, everyone's. Uploads are
    never public."""
    return visible_to(user, Upload.objects.all())


def medal_of(report) -> str:
    return medal_level(
        gold=report.gold_medal, silver=report.silver_medal, bronze=report.bronze_medal
    )


def agent_scores_on_competition(competition, *, user) -> list[dict]:
    """Every visible current report on ``competition``, best score first (the metric's
    direction), runs without a score last; ``disqualified`` for a run disqualified by
    review (its medal counts as none)."""
    from django.db.models import BooleanField, ExpressionWrapper

    from webapp.results.grading.aggregates import disqualified

    visible = experiments_visible_to(user).values("pk")
    reports = (
        GradeReport.objects.filter(competition=competition, is_current=True, experiment__in=visible)
        .annotate(disqualified=ExpressionWrapper(disqualified(), output_field=BooleanField()))
        .select_related("experiment__agent__scaffold", "experiment__agent__model")
        .order_by("experiment__name", "seed")
    )
    sign = 1 if competition.lower_is_better else -1
    reports = sorted(
        reports, key=lambda r: (r.score is None, 0.0 if r.score is None else sign * r.score)
    )
    return [
        {
            "experiment_id": r.experiment_id,
            "experiment_name": r.experiment.name,
            "label": f"{r.experiment.name} (seed {r.seed})",
            "seed": r.seed,
            "score": r.score,
            "score_text": format_score(r.score),
            "submission_exists": r.submission_exists,
            # A disqualified run's medal counts as none: shown struck, as on its experiment.
            "medal": medal_of(r),
            "disqualified": bool(r.disqualified),
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


def experiment_reports(experiment: Experiment) -> QuerySet:
    return (
        GradeReport.objects.filter(experiment=experiment, is_current=True)
        .select_related("competition")
        .order_by("competition__slug", "seed")
    )


def experiment_runs_have_files(experiment: Experiment) -> bool:
    """Whether the experiment's runs have files here: an upload's archive, or a launch's
    agent runs (imported reports and the demo's reference runs have none)."""
    return (
        Upload.objects.filter(experiment=experiment).exists()
        or Experiment.objects.filter(pk=experiment.pk, launch__isnull=False).exists()
    )


def _any_medal_figures(experiment: Experiment, *, clean: bool = False) -> dict:
    """split -> Any Medal % as ``benchmark.aggregate`` computed it (mean, standard_error,
    ...), of all competitions or of the clean subset: from the aggregate's small summary
    (the full figures are not decoded), or from the figures for an aggregate stored
    without a summary."""
    aggregate = getattr(experiment, "aggregate", None)
    if aggregate is None:
        return {}
    summary = aggregate.clean_summary if clean else aggregate.summary
    if summary or not aggregate.n_reports:
        return summary
    return {
        split: (figures.get("metrics") or {}).get("any_medal_percentage")
        for split, figures in split_figures(experiment, clean=clean).items()
    }


def any_medal_by_split(experiment: Experiment, *, clean: bool = False) -> dict:
    """Any Medal % (mean, SEM) per split: from the experiment's reports when it has them
    (of the clean subset with ``clean``), else as published (with the footnotes marking
    each figure; published figures cannot be recomputed on a subset). Each value says
    which (``"source"``: "reports" or "published")."""
    out = {}
    for split, metric in _any_medal_figures(experiment, clean=clean).items():
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


def stored_replicates(experiment_ids, split: str, *, clean: bool = False) -> dict[int, bytes]:
    """experiment id -> its stored Any Medal % replicates on ``split`` (of the clean subset
    with ``clean``), for those that have them: one small row each."""
    from webapp.results.grading.replicates import RANKED
    from webapp.results.models import FigureReplicates

    rows = FigureReplicates.objects.filter(
        experiment_id__in=list(experiment_ids), split=split, clean=clean, metric=RANKED
    ).values_list("experiment_id", "values")
    return dict(rows)


def split_parts(
    experiments: list[Experiment], split: str, parts: tuple[str, ...], *, clean: bool = False
) -> dict:
    """experiment id -> {part: its value in the figures of ``split``} for the ``parts``
    asked for (e.g. "funnel", "pass_at_k"), of all competitions or of the clean subset,
    read from the database without the rest of the figures (a few KB of some 280 KB per
    experiment at 67 seeds)."""
    from django.db.models.fields.json import KeyTransform

    from webapp.results.models import ExperimentAggregate

    field = "clean_figures" if clean else "figures"

    def part(name):
        return KeyTransform(name, KeyTransform(split, KeyTransform("splits", field)))

    rows = ExperimentAggregate.objects.filter(
        experiment_id__in=[e.pk for e in experiments]
    ).values_list("experiment_id", *(part(name) for name in parts))
    out = {e.pk: {} for e in experiments}
    for pk, *values in rows:
        out[pk] = {name: value for name, value in zip(parts, values, strict=True) if value}
    return out


def _pairwise_comparisons(
    pairs: list[tuple[Experiment, Experiment, str, list[str]]],
    experiments: list[Experiment],
    by_split: dict,
    clean: bool,
) -> list[dict]:
    """Each pair (a, b, the split compared, the splits they share; none: the error "no
    split in common"). When both have reports on the split: a paired bootstrap over that
    split's competitions (``"kind": "paired"``). Otherwise (published figures on a side):
    per shared split, the difference of means with an interval from the two SEMs
    (``"kind": "unpaired"``). Each result names its ``split``."""
    from benchmark.catalogue import load_catalogue
    from benchmark.compare import compare_split_figures, compare_tallies
    from webapp.results.grading.aggregates import competition_tallies

    # Per split, the per-competition counts and the replicates, read once if needed.
    stored: dict[str, dict] = {}
    replicates: dict[str, dict] = {}
    catalogue = None
    results = []
    for a, b, split, splits in pairs:
        if not splits:
            results.append(
                {"a": a.name, "b": b.name, "error": "no split in common", "kind": "", "split": ""}
            )
            continue
        paired = all(by_split[e.pk][split]["source"] == "reports" for e in (a, b))
        try:
            if not paired:
                result = compare_split_figures(
                    a.name, by_split[a.pk], b.name, by_split[b.pk], splits
                )
            else:
                if split not in stored:
                    # The counts the split's figures were computed from: the same runs
                    # counted, the same seeds, so the medal rates average to the figures.
                    stored[split] = split_parts(
                        experiments, split, ("per_competition",), clean=clean
                    )
                catalogue = catalogue or load_catalogue(include_demo=True)
                tallies = (
                    competition_tallies(stored[split][e.pk].get("per_competition"), catalogue)
                    for e in (a, b)
                )
                result = compare_tallies(a.name, next(tallies), b.name, next(tallies)).to_dict()
        except ValueError as exc:
            result = {"a": a.name, "b": b.name, "error": str(exc)}
        if "error" not in result and split != RAN.slug:
            if split not in replicates:
                replicates[split] = stored_replicates(
                    (e.pk for e in experiments), split, clean=clean
                )
            result["probability_greater"] = _probability_greater(
                a, b, split, by_split, replicates[split]
            )
        results.append({**result, "split": split, "kind": "paired" if paired else "unpaired"})
    return results


def _probability_greater(a: Experiment, b: Experiment, split: str, by_split: dict, stored) -> dict:
    """P(A > B) for Any Medal % on ``split``: the share of the bootstrap's replicates in
    which a's figure is above b's, ties counting half. ``paired``: both from stored
    replicates on the same competition draws; otherwise (published figures) a side's are
    drawn from its mean ± SEM, independently."""
    from benchmark.intervals import probability_greater
    from webapp.results.grading.replicates import figure_replicates

    sides = []
    for e in (a, b):
        value = by_split[e.pk][split]
        own = stored.get(e.pk) if value.get("source") == "reports" else None
        sides.append(figure_replicates(e.pk, split, value, own))
    (a_values, a_how), (b_values, b_how) = sides
    value = probability_greater(a_values, b_values)
    return {
        "value": value,
        # Two decimals, never a bare 0 or 1: 1,000 replicates cannot show certainty.
        "text": "> 0.99" if value > 0.99 else "< 0.01" if value < 0.01 else f"= {value:.2f}",
        "paired": a_how == b_how == "bootstrap",
        "replicates": len(a_values),
    }


COMPARE_PICK_LIMIT = 200


def experiments_to_pick(user) -> list[Experiment]:
    """What the compare page offers to pick when nothing is chosen: the experiments
    ``user`` may see, the most recent run first, at most ``COMPARE_PICK_LIMIT`` (the leaderboard's
    filters find older ones). ``ran``: the date shown, its run's or, without one, its
    record's."""
    ran = Coalesce(F("date"), TruncDate("created_at"))
    newest = (F("ran").desc(), "-created_at", "-pk")
    return list(
        experiments_visible_to(user).annotate(ran=ran).order_by(*newest)[:COMPARE_PICK_LIMIT]
    )


def experiments_chosen(user, raw_ids: str) -> tuple[list[Experiment], list[int]]:
    """The experiments named in ``raw_ids`` ("3,7,12") that ``user`` may see, in the order
    given and each once, with their figures; and the ids that name none of them."""
    # ASCII digits only ("²".isdigit() is true, int("²") fails), within a primary key's range.
    parts = [p.strip() for p in raw_ids.split(",")]
    numbers = (int(p) for p in parts if p.isascii() and p.isdigit() and len(p) <= 19)
    ids = list(dict.fromkeys(i for i in numbers if i < 2**63))
    found = {
        e.pk: e
        for e in experiments_visible_to(user)
        .filter(pk__in=ids)
        .select_related("aggregate")
        # What is compared comes from the summary and the reports; the figures shown
        # are read by ``split_parts``.
        .defer("aggregate__figures", "aggregate__clean_figures")
    }
    return [found[i] for i in ids if i in found], [i for i in ids if i not in found]


def comparison_of(experiments: list[Experiment], split: str = "", *, clean: bool = False) -> dict:
    """What the compare page and ``/api/compare/`` show for the same selection: the splits
    every experiment has a figure on, the split compared (``split`` when common, else the
    first common one), each experiment's Any Medal % per split and the comparisons (the
    first experiment against each other one); of the clean subset with ``clean``.

    When no split is common to all, every pair that shares one is compared on the first
    they share (``split`` when they share it), and each pair sharing none is listed with
    the error "no split in common"."""
    by_split = {e.pk: any_medal_by_split(e, clean=clean) for e in experiments}

    def shared(group) -> list[str]:
        return [s for s in SPLIT_PREFERENCE if all(s in by_split[e.pk] for e in group)]

    common = shared(experiments)
    chosen = split if split in common else default_split(common)
    if common:
        pairs = [(experiments[0], other, chosen, common) for other in experiments[1:]]
    else:
        pairs = []
        for i, a in enumerate(experiments):
            for b in experiments[i + 1 :]:
                both = shared((a, b))
                pairs.append((a, b, split if split in both else default_split(both), both))
    return {
        "split": chosen,
        "common_splits": common,
        "by_split": by_split,
        "clean": clean,
        "comparisons": _pairwise_comparisons(pairs, experiments, by_split, clean),
    }


def obfuscated_twin(user, experiment: Experiment) -> Experiment | None:
    """The experiment ``user`` sees with the same agent run on the other descriptions
    (original <-> obfuscated): the same owner's first, then the most recent."""
    twins = experiments_visible_to(user).filter(
        agent_id=experiment.agent_id,
        obfuscated_descriptions=not experiment.obfuscated_descriptions,
    )
    same_owner = twins.filter(owner_id=experiment.owner_id).order_by("-created_at").first()
    return same_owner or twins.order_by("-created_at").first()
