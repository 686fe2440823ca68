"""Competition pages: the filterable list of the catalogue. One competition's page, which
places every agent's score on its leaderboard, is results' (``webapp/results/competition_page``)."""

from django.shortcuts import render

from webapp.competitions import selectors


def competition_list(request):
    params = {k: request.GET.get(k, "").strip() for k in ("category", "complexity", "split", "q")}
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
