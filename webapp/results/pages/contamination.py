"""What the contamination section of the experiment and compare pages shows: each
competition's result (medal rate over seeds as the experiment's figures count it, mean
percentile) set against its Kaggle deadline and the base model's familiarity with it,
analysed by ``benchmark.contamination`` and drawn by ``webapp.figures.contamination``.

The medal rate is the aggregate's own per-competition count (``per_competition`` of the
split shown: missing seeds count as failures, a disqualified seed as no medal), so these
figures agree with the funnel and the headline above them."""

from django.db.models import Avg

from benchmark.contamination import CompetitionResult, date_view, familiarity_view
from webapp.core.formatting import (
    format_p,
    format_percent,
    format_points,
    format_signed,
    format_statistic,
)
from webapp.figures import contamination as contamination_figures

NO_REPORTS = (
    "No per-competition reports: these figures need each competition's result, which "
    "published figures alone do not give."
)
NO_DEADLINES = (
    "None of these competitions has a Kaggle deadline: the demo competitions are built by "
    "mleboard from scikit-learn data and were never held on Kaggle, so there is nothing to "
    "place on a date axis."
)
NO_CUTOFF = (
    "no cutoff stated: give the experiment its model's knowledge cutoff (upload metadata "
    "knowledge_cutoff, the launch form, or the admin) to compare the competitions that ended "
    "before it with those after"
)
NO_PERCENTILES = (
    "No percentiles: the reports of the competitions measured carry none (MLE-bench's own "
    "reports do not; mleboard gives one to the runs it grades, from the leaderboard)."
)
NO_FAMILIARITY = (
    "No familiarity measured for these competitions yet: an operator sets "
    "MLEBOARD_FAMILIARITY_BASE_URL and MLEBOARD_FAMILIARITY_MODEL and runs "
    "manage.py compute_familiarity."
)


def competition_results(
    experiments, per_competition: dict, familiarity: dict | None = None
) -> dict[int, list[CompetitionResult]]:
    """experiment id -> its competitions' results, from ``per_competition`` (experiment id
    -> the aggregate's ``per_competition`` rows of the split shown, or None), with each
    competition's deadline, the experiment's mean percentile on it and ``familiarity``
    (competition slug -> mean token probability)."""
    from webapp.competitions.models import Competition
    from webapp.results.models import GradeReport

    familiarity = familiarity or {}
    slugs = {row["competition_id"] for rows in per_competition.values() for row in rows or ()}
    deadlines = dict(Competition.objects.filter(slug__in=slugs).values_list("slug", "deadline"))
    percentiles: dict[tuple[int, str], float] = {
        (e, slug): value
        for e, slug, value in GradeReport.objects.filter(
            experiment_id__in=[e.pk for e in experiments], is_current=True
        )
        .values_list("experiment_id", "competition__slug")
        .annotate(mean=Avg("percentile"))
        .values_list("experiment_id", "competition__slug", "mean")
    }
    return {
        e.pk: [
            CompetitionResult(
                competition_id=row["competition_id"],
                seeds=row["runs"],
                medals=row["any_medal"],
                deadline=deadlines.get(row["competition_id"]),
                mean_percentile=percentiles.get((e.pk, row["competition_id"])),
                familiarity=familiarity.get(row["competition_id"]),
            )
            for row in per_competition.get(e.pk) or ()
            if row["runs"]
        ]
        for e in experiments
    }


def _correlation_row(correlation: dict, symbol: str, none: str = "") -> dict:
    """A correlation as the tables print it; ``none``: what to say when no competition has
    the value correlated (rather than "too few competitions (0)")."""
    if none and not correlation["n"]:
        return {"text": "", "reason": none, "n": 0}
    if "statistic" not in correlation:
        return {"text": "", "reason": correlation["reason"], "n": correlation["n"]}
    return {
        "text": f"{symbol} = {format_statistic(correlation['statistic'])}",
        "p": format_p(correlation["p_value"]),
        "n": correlation["n"],
        "reason": "",
    }


def _cutoff_row(cutoff: dict | None) -> dict:
    if cutoff is None:
        return {"stated": False, "reason": NO_CUTOFF}
    row = {
        "stated": True,
        "cutoff": cutoff["cutoff"],
        "before_n": cutoff["before"]["n"],
        "before_mean": format_percent(cutoff["before"]["mean"]),
        "after_n": cutoff["after"]["n"],
        "after_mean": format_percent(cutoff["after"]["mean"]),
        "difference": format_points(cutoff["difference"]),
        "reason": cutoff.get("reason", ""),
    }
    if "p_value" in cutoff:
        row["interval"] = (
            f"{format_signed(cutoff['ci_lower'])} to {format_points(cutoff['ci_upper'])}"
        )
        row["p"] = format_p(cutoff["p_value"])
        row["method"] = cutoff["method"]
    return row


def contamination_section(
    experiments, per_competition: dict, *, familiarity_model: str = ""
) -> dict:
    """The context of ``results/_contamination.html`` for ``experiments`` (one on the
    experiment page, several on compare); ``per_competition`` as ``competition_results``
    takes it; ``familiarity_model``: whose familiarity to show (default: the model with
    values for the most of these competitions)."""
    from webapp.competitions.familiarity import familiarity_by_model

    slugs = {row["competition_id"] for rows in per_competition.values() for row in rows or ()}
    by_model = familiarity_by_model(slugs)
    models = sorted(by_model, key=lambda m: (-len(by_model[m]), m))
    chosen = familiarity_model if familiarity_model in by_model else (models[0] if models else "")
    results = competition_results(experiments, per_competition, by_model.get(chosen))
    rows, date_series, familiarity_series = [], [], []
    for experiment in experiments:
        mine = results[experiment.pk]
        dates = date_view(mine, experiment.knowledge_cutoff)
        known = familiarity_view(mine)
        rows.append(
            {
                "experiment": experiment,
                # False: published figures only, nothing per competition to place.
                "has_results": bool(mine),
                "competitions": len(mine),
                "dated": len(dates["points"]),
                "correlation": _correlation_row(
                    dates["correlation"], "ρ", "no competition here has a Kaggle deadline"
                ),
                "trend": format_statistic(dates["trend"]["slope_per_year"], 1)
                if dates["trend"]
                else "",
                "cutoff": _cutoff_row(dates["cutoff"]),
                "familiar": len(known["points"]),
                # Against the medal rate, then against the mean percentile.
                "familiarity_pair": [
                    _correlation_row(known["medal_rate"], "r", "no familiarity measured"),
                    _correlation_row(
                        known["percentile"],
                        "r",
                        "no percentiles" if known["points"] else "no familiarity measured",
                    ),
                ],
            }
        )
        if dates["points"]:
            date_series.append((experiment.name, dates))
        if known["points"]:
            familiarity_series.append((experiment.name, known))
    any_results = any(results.values())
    ranked = any(
        p["mean_percentile"] is not None for _, view in familiarity_series for p in view["points"]
    )
    date_empty = "" if date_series else (NO_DEADLINES if any_results else NO_REPORTS)
    familiarity_empty = (
        "" if familiarity_series else (NO_FAMILIARITY if any_results else NO_REPORTS)
    )
    return {
        "rows": rows,
        "any_results": any_results,
        "date_figure": contamination_figures.deadline_scatter(date_series) if date_series else None,
        "date_empty": date_empty,
        "familiarity_models": models,
        "familiarity_model": chosen,
        "familiarity_medal_figure": contamination_figures.familiarity_scatter(
            familiarity_series, "medal_rate"
        )
        if familiarity_series
        else None,
        "familiarity_percentile_figure": contamination_figures.familiarity_scatter(
            familiarity_series, "percentile"
        )
        if ranked
        else None,
        "familiarity_percentile_empty": "" if ranked else NO_PERCENTILES,
        "familiarity_empty": familiarity_empty,
    }
