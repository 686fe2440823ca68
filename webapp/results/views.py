"""Result pages: the leaderboard of agents and one experiment with its funnel."""

from django.http import Http404
from django.shortcuts import render

from webapp import figures
from webapp.results import selectors

SPLIT_LABELS = {"low": "Low (Lite)", "medium": "Medium", "high": "High", "all": "All", "demo": "Demo"}


def home(request):
    rows = selectors.leaderboard_rows(user=request.user)
    shown_splits = [s for s in (*selectors.LEADERBOARD_SPLITS, "demo") if any(r["splits"].get(s) for r in rows)]

    def sort_key(row):
        for split in ("all", *shown_splits):
            value = row["splits"].get(split)
            if value:
                return -(value.get("mean") or 0)
        return 0

    rows.sort(key=sort_key)
    for row in rows:
        row["cells"] = [(split, row["splits"].get(split)) for split in shown_splits]
    return render(
        request,
        "results/home.html",
        {"rows": rows, "splits": [(s, SPLIT_LABELS[s]) for s in shown_splits]},
    )


def experiment_detail(request, pk: int):
    experiment = selectors.experiments_visible_to(request.user).filter(pk=pk).select_related("aggregate").first()
    if experiment is None:
        raise Http404("No such experiment, or it is not published.")
    splits = selectors.split_figures(experiment)
    split = request.GET.get("split") or next((s for s in ("all", "demo", "low", "medium", "high") if s in splits), "")
    current = splits.get(split, {})
    stages = selectors.funnel_stages(current)
    return render(
        request,
        "results/experiment.html",
        {
            "experiment": experiment,
            "split": split,
            "split_choices": [(s, SPLIT_LABELS.get(s, s)) for s in splits],
            "figures": current,
            "funnel_figure": figures.funnel(stages) if stages else None,
            "reports": selectors.experiment_reports(experiment),
        },
    )
