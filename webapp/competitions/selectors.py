"""Reads for competitions and leaderboards."""

from django.db.models import Count, Prefetch, Q, QuerySet

from webapp.competitions.models import Competition, KnownIssue, PrivateLeaderboard, Split


def competition_list(
    *, category: str = "", complexity: str = "", split: str = "", q: str = ""
) -> QuerySet:
    qs = Competition.objects.all()
    if category:
        qs = qs.filter(category=category)
    if complexity:
        qs = qs.filter(complexity=complexity)
    if split:
        qs = qs.filter(splits__slug=split)
    if q:
        qs = qs.filter(Q(slug__icontains=q) | Q(name__icontains=q))
    return (
        qs.annotate(n_issues=Count("known_issues", distinct=True))
        .prefetch_related(
            "splits",
            Prefetch(
                "leaderboards",
                queryset=PrivateLeaderboard.objects.filter(is_current=True),
                to_attr="current",
            ),
        )
        .order_by("slug")
    )


def competition_filter_choices() -> dict:
    return {
        "categories": list(
            Competition.objects.order_by("category").values_list("category", flat=True).distinct()
        ),
        "complexities": Competition.Complexity.choices,
        "splits": list(Split.objects.all()),
    }


def competition_scores(board: PrivateLeaderboard) -> list[float]:
    """The leaderboard's scores best first; rows without a score are left out (they count
    in N but have nothing to draw)."""
    return list(
        board.entries.exclude(score__isnull=True)
        .order_by("position")
        .values_list("score", flat=True)
    )


def competition_known_issues(competition: Competition) -> list[KnownIssue]:
    return list(competition.known_issues.all())


def clean_subset_excluded_slugs() -> set[str]:
    """Competitions left out of the clean subset: those an admin (or the catalogue) marked
    with a known issue that excludes them, and retired ones."""
    flagged = KnownIssue.objects.filter(excludes_from_clean_subset=True).values_list(
        "competition__slug", flat=True
    )
    retired = Competition.objects.filter(retired=True).values_list("slug", flat=True)
    return set(flagged) | set(retired)


def catalogue_breakdown() -> dict:
    """How the catalogue's competitions divide: the total, and per split its count, so
    that a page can say "86 = MLE-bench's 75 + 7 dev + 4 demo"."""
    counts = dict(
        Split.objects.annotate(n=Count("competitions", distinct=True)).values_list("slug", "n")
    )
    return {"total": Competition.objects.count(), "by_split": counts}
