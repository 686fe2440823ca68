"""Competition pages: the filterable list of the catalogue. One competition's page, which
places every agent's score on its leaderboard, is results' (``webapp/results/competition_page``)."""

from django.shortcuts import render

from webapp.competitions import selectors
from webapp.core.bad_input import split_asked


def competition_list(request):
    params = {k: request.GET.get(k, "").strip() for k in ("category", "complexity", "q")}
    # Any name of a split (lite, split75, systemcard.txt): the slug; another name is a 400.
    params["split"] = split_asked(request.GET)
    competitions = list(selectors.competition_list(**params))
    return render(
        request,
        "competitions/list.html",
        {
            "competitions": competitions,
            # Said once above the table rather than as a bare "—" in every row.
            "without_leaderboard": sum(1 for c in competitions if not c.current),
            "params": params,
            "breakdown": selectors.catalogue_breakdown(),
            **selectors.competition_filter_choices(),
        },
    )
