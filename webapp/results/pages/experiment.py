"""What an experiment's page shows: its per-competition table, its splits' figures and
their texts, read from the stored aggregates."""

from django.db.models import Count, Q

from benchmark.medals import medal_level
from benchmark.splits import split_label
from webapp.core.formatting import format_score
from webapp.results.models import Experiment, GradeReport
from webapp.results.selectors import any_medal_by_split


def _num(value, digits: int | None = None) -> str:
    if value is None:
        return ""
    if digits is None:
        return format_score(value)
    text = f"{value:.{digits}f}"
    # -0.001 to two places is 0.00, not -0.00.
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


# Up to this many seeds per competition the table lists every seed; above it, one row per
# competition (its seeds on demand: ``?seeds=<competition>``).
SEEDS_LISTED = 5


# The most seeds of one competition listed at once.
SEED_ROWS_MAX = 500


def competition_rows(
    experiment: Experiment, competition: str | None = None, limit: int | None = None
) -> list[dict]:
    """The per-competition table (score, medal, thresholds, percentile, medal gap per
    seed) as plain values for ``webapp/core/jinja2/results/competition_rows.html``: numbers formatted once,
    sort keys given. ``competition``: that competition's seeds only; ``limit``: the first
    so many rows."""
    from benchmark.compare import medal_gap
    from webapp.core.rendering import url_for_each

    reports = GradeReport.objects.filter(experiment=experiment, is_current=True)
    if competition is not None:
        reports = reports.filter(competition__slug=competition)
    rows = reports.order_by("competition__slug", "seed").values_list(
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
        "run_id",
        "run__integrity__status",
    )
    if limit is not None:
        rows = rows[:limit]
    competition_url = url_for_each("competition-detail")
    run_url = url_for_each("run-page-result")
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
        run_id,
        integrity,
    ) in rows:
        gap = medal_gap(score, m, g, lower)
        if valid:
            note = ""
        elif not exists:
            note = "no submission"
        else:
            note = "invalid" + (f": {error[:140]}" if error else "")
        out.append(
            {
                "competition_id": slug,
                "url": competition_url(slug),
                "seed": seed,
                "score": _num(score),
                "medal": medal_level(gold=gold, silver=silver, bronze=bronze),
                "above_median": above,
                # Integrity: "flagged" or "disqualified" (its medal then counts as none).
                "integrity": integrity if integrity in ("flagged", "disqualified") else "",
                "gap": _num(gap, 2),
                "gap_sort": -999 if gap is None else gap,
                "thresholds": [_num(t) for t in (g, sv, b, m)],
                "percentile": _num(pct, 1),
                "percentile_sort": -1 if pct is None else pct,
                "note": note,
                "run_url": run_url(run_id),
            }
        )
    return out


def _range_text(low, high) -> str:
    """One threshold over the seeds: the value, or "low–high" when the seeds' differ."""
    if low is None or high is None or low == high:
        return _num(high if low is None else low)
    return f"{_num(low)}–{_num(high)}"


def competition_summary_rows(experiment: Experiment) -> list[dict]:
    """The per-competition table folded over seeds, one row per competition (computed by
    the database): number of seeds, mean and best score, medals counted over the seeds
    (a disqualified seed's medal counts as none and is reported as struck), seeds flagged or
    disqualified by the integrity checks, thresholds (a range if the seeds' differ), mean
    percentile, the medal gap of the mean score, invalid or missing submissions."""
    from django.db.models import Avg, Max, Min

    from benchmark.compare import medal_gap
    from webapp.core.rendering import url_for_each
    from webapp.results.grading.aggregates import disqualified as disqualified_reports

    disqualified = disqualified_reports()
    any_medal = Q(gold_medal=True) | Q(silver_medal=True) | Q(bronze_medal=True)
    thresholds = ("gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold")
    rows = (
        GradeReport.objects.filter(experiment=experiment, is_current=True)
        .values("competition__slug")
        .annotate(
            n=Count("pk"),
            # The direction the reports were graded in (as the per-seed rows use it).
            lower_votes=Count("pk", filter=Q(is_lower_better=True)),
            mean=Avg("score"),
            high=Max("score"),
            low=Min("score"),
            gold=Count("pk", filter=Q(gold_medal=True) & ~disqualified),
            silver=Count("pk", filter=Q(silver_medal=True) & ~disqualified),
            bronze=Count("pk", filter=Q(bronze_medal=True) & ~disqualified),
            struck=Count("pk", filter=any_medal & disqualified),
            above=Count("pk", filter=Q(above_median=True)),
            missing=Count("pk", filter=Q(submission_exists=False)),
            invalid=Count("pk", filter=Q(submission_exists=True, valid_submission=False)),
            disqualified=Count("pk", filter=disqualified),
            flagged=Count("pk", filter=Q(run__integrity__status="flagged")),
            percentile=Avg("percentile"),
            **{f"{t}_low": Min(t) for t in thresholds},
            **{f"{t}_high": Max(t) for t in thresholds},
            **{f"{t}_mean": Avg(t) for t in thresholds},
        )
        .order_by("competition__slug")
    )
    competition_url = url_for_each("competition-detail")
    out = []
    for r in rows:
        slug, n = r["competition__slug"], r["n"]
        lower = 2 * r["lower_votes"] > n
        best = r["low"] if lower else r["high"]
        gap = medal_gap(r["mean"], r["median_threshold_mean"], r["gold_threshold_mean"], lower)
        medals = [(m, r[m]) for m in ("gold", "silver", "bronze") if r[m]]
        n_medals = sum(count for _, count in medals)
        seeds = f"of {n} seed{'s' if n != 1 else ''}"
        medal_text = (
            " · ".join(f"{m} {count}" for m, count in medals) if medals else "none"
        ) + f" {seeds}"
        notes = [
            f"{count} {label}"
            for count, label in ((r["invalid"], "invalid"), (r["missing"], "no submission"))
            if count
        ]
        out.append(
            {
                "competition_id": slug,
                "url": competition_url(slug),
                "seeds": n,
                "score": _num(r["mean"]),
                "score_sort": "" if r["mean"] is None else r["mean"],
                "best": _num(best),
                "medals": medals,
                "medal_text": medal_text,
                "medal_sort": n_medals / n,
                "above_median": r["above"],
                "struck": r["struck"],
                "disqualified": r["disqualified"],
                "flagged": r["flagged"],
                "gap": _num(gap, 2),
                "gap_sort": -999 if gap is None else gap,
                "thresholds": [_range_text(r[f"{t}_low"], r[f"{t}_high"]) for t in thresholds],
                "percentile": _num(r["percentile"], 1),
                "percentile_sort": -1 if r["percentile"] is None else r["percentile"],
                "note": " · ".join(notes),
            }
        )
    return out


def competition_table(experiment: Experiment, seeds_of: str = "") -> dict:
    """What the experiment page's per-competition table shows. Up to ``SEEDS_LISTED`` seeds
    per competition: every seed (``"folded": False``, ``rows`` from ``competition_rows``).
    More: one row per competition (``competition_summary_rows``), and when ``seeds_of``
    names one of them, its seeds (``seed_rows``, at most ``SEED_ROWS_MAX``)."""
    folded_rows = competition_summary_rows(experiment)
    most = max((r["seeds"] for r in folded_rows), default=0)
    table = {
        "folded": most > SEEDS_LISTED,
        "n_reports": sum(r["seeds"] for r in folded_rows),
        "seeds_of": "",
        "seed_rows": [],
        "seed_rows_total": 0,
    }
    if not table["folded"]:
        table["rows"] = competition_rows(experiment) if folded_rows else []
        return table
    table["rows"] = folded_rows
    chosen = next((r for r in folded_rows if r["competition_id"] == seeds_of), None)
    if chosen is not None:
        table["seeds_of"] = seeds_of
        table["seed_rows"] = competition_rows(experiment, seeds_of, limit=SEED_ROWS_MAX)
        table["seed_rows_total"] = chosen["seeds"]
    return table


def funnel_of(figures_for_split: dict) -> list[dict]:
    """The split's funnel as ``benchmark.aggregate`` computed it (``FUNNEL``'s stages)."""
    return (figures_for_split or {}).get("funnel") or []


def published_footnotes(experiment: Experiment) -> list[str]:
    """The distinct footnotes marking an experiment's published figures, in split order."""
    return list(
        dict.fromkeys(
            note
            for value in (experiment.published_figures or {}).values()
            if isinstance(value, dict)
            for note in value.get("footnotes", ())
        )
    )


def any_medal_texts(experiment: Experiment) -> list[str]:
    """Any Medal % per split as the leaderboard prints it ("Low (Lite) 34.1 ± 6.8"): one
    decimal for figures graded here, two for figures as published."""
    out = []
    for split, value in any_medal_by_split(experiment).items():
        digits = 2 if value["source"] == "published" else 1
        out.append(
            f"{split_label(split)} {value['mean']:.{digits}f} ± "
            f"{value['standard_error']:.{digits}f}"
        )
    return out
