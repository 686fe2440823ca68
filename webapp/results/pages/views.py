"""Result pages: the leaderboard of agents and one experiment with its funnel."""

import csv

from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render

from benchmark import disclosure, provenance
from benchmark.reports import REPORT_KEYS, grading_report_json
from benchmark.splits import (
    default_split,
    in_display_order,
    split_choices,
    split_label,
)
from webapp import figures
from webapp.core.bad_input import split_asked
from webapp.core.formatting import format_score, shown_interval
from webapp.core.rendering import render_rows
from webapp.results import extensions, selectors
from webapp.results.grading.aggregates import counted_reports, wants_clean_subset
from webapp.results.pages import analysis as analysis_pages
from webapp.results.pages import compare as compare_page
from webapp.results.pages import experiment as experiment_page
from webapp.results.pages.contamination import contamination_section
from webapp.results.pages.disclosure import conditions_section
from webapp.results.pages.leaderboard import (
    CONDITIONS,
    INTEGRITY_FILTERS,
    LeaderboardFilters,
    cost_chart,
    csv_rows,
    filter_choices,
    leaderboard_entries,
    page_tables,
    ranking_split,
)


def home(request):
    filters = LeaderboardFilters.from_query(request.GET)
    entries = leaderboard_entries(user=request.user, filters=filters)
    export = request.GET.get("format", "")
    if export == "json":
        return JsonResponse({"clean_subset": filters.clean, "entries": entries})
    if export == "csv":
        response = HttpResponse(content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="mleboard-leaderboard.csv"'
        writer = csv.writer(response)
        writer.writerows(csv_rows(entries))
        return response
    tables = page_tables(entries)
    agents, shown = tables["agents"], tables["shown"]
    ranked_on = ranking_split(agents, filters.split) if agents else ""
    query = request.GET.copy()
    query.pop("format", None)
    return render(
        request,
        "results/home.html",
        {
            "entries": entries,
            "rows_html": render_rows("results/leaderboard_rows.html", rows=tables["rows"]),
            "agents": agents,
            "references": tables["references"],
            "reference_rows_html": render_rows(
                "results/leaderboard_rows.html", rows=tables["reference_rows"]
            ),
            "reference_splits": split_choices(tables["reference_shown"]),
            "footnotes": tables["footnotes"],
            "ranked_on": split_label(ranked_on) if ranked_on else "",
            "ranking_split": ranked_on,
            # Any split may be asked for; those with a column are offered.
            "rank_splits": split_choices({*shown, ranked_on}),
            "tied": sum(1 for e in agents if e["tied"]),
            # The chart draws the agents' table only: the references are apart.
            "dots_figure": figures.leaderboard_dots_from_table(
                agents, split_choices(shown), "leaderboard"
            )
            if any(v for e in agents for v in e["splits"].values())
            else None,
            "unranked": sum(1 for e in agents if e["rank"] is None),
            "cost_chart": cost_chart(agents, ranked_on, request.GET.get("cost", "")),
            "splits": split_choices(shown),
            "filters": filters,
            "query": query.urlencode(),
            **filter_choices(request.user),
            "integrity_filters": [(k, label) for k, (label, _) in INTEGRITY_FILTERS.items()],
            "provenances": [(p.slug, p.label) for p in provenance.PROVENANCES],
            "classes": list(disclosure.CLASS_LABELS.items()),
            # What each Conditions mark means, once: static/js/tables.js writes the
            # tooltips of every row from it.
            "conditions_meanings": {key: meaning for key, _, meaning in CONDITIONS},
        },
    )


def experiment_detail(request, pk: int):
    experiment = selectors.experiment_visible_to(request.user, pk)
    clean = wants_clean_subset(request.GET)
    splits = selectors.split_figures(experiment, clean=clean)
    split = split_asked(request.GET, figures=True)
    if split not in splits:
        split = default_split(splits)
    current = splits.get(split, {})
    stages = experiment_page.funnel_of(current)
    table = experiment_page.competition_table(experiment, request.GET.get("seeds", ""))
    # Links to one competition's seeds keep the split and the subset shown.
    seeds_query = request.GET.copy()
    seeds_query.pop("seeds", None)
    if "split" in seeds_query:
        seeds_query["split"] = split  # by its slug, whichever name the address gave
    seeds_href = "?" + (seeds_query.urlencode() + "&" if seeds_query else "") + "seeds="
    back_query = seeds_query.urlencode()
    return render(
        request,
        "results/experiment.html",
        {
            "experiment": experiment,
            "twin": selectors.obfuscated_twin(request.user, experiment),
            "integrity": getattr(experiment, "aggregate", None),
            "split": split,
            "clean": clean,
            "split_choices": split_choices(splits),
            "figures": current,
            "any_medal_interval": shown_interval(
                (current.get("metrics") or {}).get("any_medal_percentage")
            ),
            "split_table": [
                (split_label(s), splits[s].get("metrics")) for s in in_display_order(splits)
            ],
            "funnel_figure": figures.funnel(stages) if stages else None,
            "category_figure": figures.breakdown_bars(current["by_category"])
            if current.get("by_category")
            else None,
            "complexity_figure": figures.breakdown_bars(current["by_complexity"])
            if len(current.get("by_complexity", {})) > 1
            else None,
            "pass_at_k_figure": figures.pass_at_k_curves(
                [(experiment.name, current["pass_at_k"]["values"])]
            )
            if current.get("pass_at_k", {}).get("values")
            else None,
            "table": table,
            "rows_html": render_rows(
                "results/competition_rows.html",
                rows=table["rows"],
                folded=table["folded"],
                seeds_href=seeds_href,
            ),
            "seed_rows_html": render_rows(
                "results/competition_rows.html", rows=table["seed_rows"], folded=False
            )
            if table["seed_rows"]
            else "",
            "all_competitions_href": "?" + back_query + "#reports",
            # Figures as published, nothing behind them: no reports to list or download.
            "published_only": bool(experiment.published_figures) and not table["rows"],
            "published": [
                (split_label(s), experiment.published_figures[s])
                for s in in_display_order(experiment.published_figures or {})
            ],
            "published_footnotes": experiment_page.published_footnotes(experiment),
            # "time_figure": the score-over-hours curve (``webapp.runs``).
            **extensions.experiment_figures(experiment),
            "contamination": contamination_section(
                [experiment],
                {experiment.pk: current.get("per_competition")},
                familiarity_model=request.GET.get("familiarity_model", ""),
            ),
            **analysis_pages.experiment_analyses(experiment),
            "conditions": conditions_section(request.user, experiment),
        },
    )


def experiment_reports_download(request, pk: int, fmt: str):
    """The experiment's current reports: MLE-bench's grading-report JSON, or CSV."""
    if fmt not in ("json", "csv"):
        raise Http404("reports come as .json (MLE-bench's grading report) or .csv")
    experiment = selectors.experiment_visible_to(request.user, pk)
    reports = counted_reports(experiment.pk)
    if fmt == "json":
        response = HttpResponse(grading_report_json(reports), content_type="application/json")
        response["Content-Disposition"] = (
            f'attachment; filename="experiment-{pk}_grading_report.json"'
        )
        return response
    response = HttpResponse(content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="experiment-{pk}_reports.csv"'
    writer = csv.writer(response)
    columns = ["competition_id", "seed", *REPORT_KEYS[1:]]
    writer.writerow(columns)
    for report in reports:
        data = report.to_dict()
        writer.writerow([data.get(c) if c != "seed" else report.seed for c in columns])
    return response


def _split_tables(chosen: list, by_split: dict, splits_shown: list[str]) -> dict:
    """Compare's Any Medal % per split: the table, the original/obfuscated pairs, the bars."""
    return {
        "split_rows": [
            (split_label(s), [by_split[e.pk].get(s) for e in chosen]) for s in splits_shown
        ],
        "description_pairs": [
            {**row, "label": split_label(row["split"])}
            for row in compare_page.description_pairs(chosen, by_split)
        ],
        "split_bars_figure": figures.split_bars(
            [(e.name, by_split[e.pk]) for e in chosen], split_choices(splits_shown)
        ),
    }


def compare(request):
    raw = request.GET.get("experiments", "")
    split = split_asked(request.GET, figures=True)
    chosen, missing = selectors.experiments_chosen(request.user, raw)
    context = {"experiments": chosen, "raw": raw, "missing": missing}
    if len(chosen) < 2:
        # Not a dead end: the experiments one may pick from, ticked where already chosen.
        context["pickable"] = selectors.experiments_to_pick(request.user)
        context["picked"] = {e.pk for e in chosen}
        if raw:
            context["error"] = "Pick two or more experiments you can see."
        elif request.GET.get("with"):
            # "Compare with…" from an experiment's page: that one ticked, the others to pick.
            start, _ = selectors.experiments_chosen(request.user, request.GET["with"])
            context["compare_with"] = start[0] if len(start) == 1 else None
            context["picked"] = {e.pk for e in start[:1]}
        return render(request, "results/compare.html", context, status=200 if not raw else 400)
    clean = wants_clean_subset(request.GET)
    context["clean"] = clean
    context["class_warning"] = compare_page.class_warning(chosen)
    result = selectors.comparison_of(chosen, split, clean=clean)
    split = result["split"]
    has_splits = [
        (e, [split_label(s) for s in in_display_order(result["by_split"][e.pk])]) for e in chosen
    ]
    if not result["common_splits"] and all(c.get("error") for c in result["comparisons"]):
        # Nothing to compare: a sentence saying what each one has, no empty figures.
        context["nothing_in_common"] = has_splits
        return render(request, "results/compare.html", context)
    for comparison in result["comparisons"]:
        comparison["split_label"] = split_label(comparison["split"])
        # Wins and losses with equal medal rates (decided on the level reached below a
        # medal, or on the score): the medal-rate test does not see them, so "no clear
        # difference" can stand beside "4 losses".
        comparison["decided_below_medals"] = sum(
            1
            for row in comparison.get("per_competition", ())
            if row["result"] != "tie" and row["a_medal_rate"] == row["b_medal_rate"]
        )
        for row in comparison.get("splits", ()):
            row["label"] = split_label(row["split"])
        for row in comparison.get("per_competition", ()):
            row["a_score_text"] = format_score(row["a_score"])
            row["b_score_text"] = format_score(row["b_score"])
    splits_shown = in_display_order(s for e in chosen for s in result["by_split"][e.pk])
    if not result["common_splits"]:
        # No split common to all: the pairs that share one are compared on it; the figures
        # drawn on one split (funnels, pass@k, contamination, tokens) have none to use.
        context.update(
            {
                **_split_tables(chosen, result["by_split"], splits_shown),
                "mixed": {
                    "has_splits": has_splits,
                    "unshared": [c for c in result["comparisons"] if c.get("error")],
                },
                "comparisons": [c for c in result["comparisons"] if not c.get("error")],
                **analysis_pages.compare_failures(chosen),
            }
        )
        return render(request, "results/compare.html", context)
    parts = selectors.split_parts(chosen, split, ("funnel", "pass_at_k"), clean=clean)
    per_experiment = [(e, parts[e.pk]) for e in chosen]
    funnels = [(e.name, experiment_page.funnel_of(f)) for e, f in per_experiment]
    curves = [
        (e.name, f["pass_at_k"]["values"])
        for e, f in per_experiment
        if f.get("pass_at_k", {}).get("values")
    ]
    context.update(
        {
            "split": split,
            "split_choices": split_choices(result["common_splits"]),
            "per_experiment": per_experiment,
            **_split_tables(chosen, result["by_split"], splits_shown),
            "funnels_figure": figures.funnels_side_by_side(funnels)
            if any(stages for _, stages in funnels)
            else None,
            "pass_at_k_figure": figures.pass_at_k_curves(curves) if curves else None,
            "comparisons": result["comparisons"],
            "contamination": contamination_section(
                chosen,
                {
                    pk: part.get("per_competition")
                    for pk, part in selectors.split_parts(
                        chosen, split, ("per_competition",), clean=clean
                    ).items()
                },
                familiarity_model=request.GET.get("familiarity_model", ""),
            ),
            **analysis_pages.compare_analyses(
                chosen,
                result["by_split"],
                split,
                selectors.split_parts(chosen, split, ("pass_at_k",), clean=clean),
            ),
        }
    )
    return render(request, "results/compare.html", context)
