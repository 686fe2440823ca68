"""Reads for experiments and reports. Pages read the cached aggregates; nothing here
recomputes figures from thousands of reports per request."""

from django.conf import settings
from django.db.models import Count, F, Q, QuerySet
from django.db.models.functions import Coalesce, TruncDate
from django.shortcuts import get_object_or_404

from benchmark.medals import medal_level
from benchmark.splits import SPLIT_PREFERENCE, default_split, split_label
from webapp.core.formatting import format_score
from webapp.core.visibility import actionable, visible_to
from webapp.liveness.services import GRADING_QUEUE, no_worker_note
from webapp.results.models import Experiment, GradeReport, Run, Upload
from webapp.work import stale_before


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


def waiting_for_worker(upload: Upload) -> bool:
    """Nothing has consumed the upload's work for ``MLEBOARD_STALE_AFTER_S``: it is queued
    and not picked up (the broker or every worker is down), or its runs are."""
    since = stale_before()
    if upload.status == Upload.Status.QUEUED:
        # Waiting since it was made, or since a claim that was handed back.
        return (upload.claimed_at or upload.created_at) < since
    if upload.status != Upload.Status.PROCESSING or not upload.experiment_id:
        return False
    runs = Run.objects.filter(experiment_id=upload.experiment_id)
    return (
        runs.filter(status=Run.Status.QUEUED, updated_at__lt=since).exists()
        and not runs.filter(status=Run.Status.RUNNING).exists()
        and not runs.filter(updated_at__gte=since).exclude(status=Run.Status.QUEUED).exists()
    )


def grading_worker_note(upload: Upload) -> str:
    """ "no grading worker has answered for N s" while the upload, or one of its runs,
    waits for one and none answers (``webapp.liveness``); "" otherwise."""
    waits = upload.status == Upload.Status.QUEUED or (
        upload.status == Upload.Status.PROCESSING
        and upload.experiment_id
        and Run.objects.filter(
            experiment_id=upload.experiment_id, status=Run.Status.QUEUED
        ).exists()
    )
    return no_worker_note(GRADING_QUEUE) if waits else ""


def upload_progress(upload: Upload) -> dict:
    """What the upload page and ``GET /api/uploads/<id>/`` show. ``failures`` are the runs
    that failed to grade (``runs_failed`` of them, each with its reason);
    ``invalid_submissions`` the runs graded with an invalid or missing submission
    (``runs_invalid``: they count, as 0, in the figures), each saying whether a submission
    was made (``submission_made``)."""
    runs_total = runs_graded = runs_failed = runs_invalid = 0
    failures: list[dict] = []
    invalid: list[dict] = []
    if upload.experiment_id:
        runs = Run.objects.filter(experiment_id=upload.experiment_id)
        with_error = ~Q(error="")
        counts = runs.aggregate(
            total=Count("pk"),
            graded=Count("pk", filter=Q(status=Run.Status.GRADED)),
            failed=Count("pk", filter=Q(status=Run.Status.FAILED)),
            invalid=Count("pk", filter=Q(status=Run.Status.GRADED) & with_error),
        )
        runs_total, runs_graded = counts["total"], counts["graded"]
        runs_failed, runs_invalid = counts["failed"], counts["invalid"]

        def listed(status):
            return [
                {
                    "competition_id": r.competition.slug,
                    "seed": r.seed,
                    "reason": r.error,
                    "pk": r.pk,
                }
                for r in runs.filter(status=status)
                .filter(with_error)
                .select_related("competition")
                .order_by("competition__slug", "seed")[:200]
            ]

        failures = listed(Run.Status.FAILED)
        invalid = listed(Run.Status.GRADED)
        # A run without a submission is graded as invalid (it counts as 0) but is not an
        # invalid submission: the page lists the two apart.
        made = dict(
            GradeReport.objects.filter(
                run_id__in=[r["pk"] for r in invalid], is_current=True
            ).values_list("run_id", "submission_exists")
        )
        for row in invalid:
            row["submission_made"] = made.get(row["pk"], True)
        for row in (*failures, *invalid):
            del row["pk"]
    no_worker = grading_worker_note(upload)
    waiting = bool(no_worker) or waiting_for_worker(upload)
    if no_worker:
        message = f"{no_worker}; this upload will be processed when one is back"
    elif waiting:
        message = (
            "waiting for a worker: nothing has picked this work up for "
            f"{settings.MLEBOARD_STALE_AFTER_S} s; it will be processed when a worker is back"
        )
    else:
        message = ""
    return {
        "id": upload.pk,
        "status": upload.status,
        "status_label": upload.status_label,
        "is_final": upload.is_final,
        "waiting_for_worker": waiting,
        "message": message,
        "no_worker": no_worker,
        "kind": upload.kind,
        "runs_total": runs_total,
        "runs_graded": runs_graded,
        "runs_failed": runs_failed,
        "failures": failures,
        "runs_invalid": runs_invalid,
        "invalid_submissions": invalid,
        "error": upload.error or None,
        "warnings": upload.warnings,
        "experiment": upload.experiment_id,
        "sha256": upload.sha256,
        "size": upload.size,
        "original_name": upload.original_name,
    }


def medal_of(report) -> str:
    return medal_level(
        gold=report.gold_medal, silver=report.silver_medal, bronze=report.bronze_medal
    )


def agent_scores_on_competition(competition, *, user) -> list[dict]:
    """Every visible current report on ``competition``, best score first (the metric's
    direction), runs without a score last; ``disqualified`` for a run disqualified by
    review (its medal counts as none)."""
    from django.db.models import BooleanField, ExpressionWrapper

    from webapp.results.aggregates import disqualified

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


def experiments_on_competition(agent_scores: list[dict]) -> list[dict]:
    """One row per experiment in ``agent_scores`` (``agent_scores_on_competition``'s rows,
    already the visible ones): its name, seeds, how many won any medal, the medals as
    "1 gold, 2 bronze", and its best score, in the order of its best seed."""
    out: dict[int, dict] = {}
    for row in agent_scores:
        entry = out.setdefault(
            row["experiment_id"],
            {
                "experiment_id": row["experiment_id"],
                "name": row["label"].rsplit(" (seed ", 1)[0],
                "seeds": 0,
                "medalled": 0,
                "medals": {},
                "best_text": "",
            },
        )
        entry["seeds"] += 1
        if row["medal"]:
            entry["medalled"] += 1
            entry["medals"][row["medal"]] = entry["medals"].get(row["medal"], 0) + 1
        if not entry["best_text"] and row["score"] is not None:
            entry["best_text"] = row["score_text"]  # the rows come best first
    for entry in out.values():
        entry["medals_text"] = ", ".join(
            f"{entry['medals'][m]} {m}"
            for m in ("gold", "silver", "bronze")
            if m in entry["medals"]
        )
        entry["medalled_text"] = f"{entry['medalled']} of {entry['seeds']}"
    return list(out.values())


def split_figures(experiment: Experiment, *, clean: bool = False) -> dict:
    """The cached figures per split (``benchmark.aggregate`` output), or {}."""
    aggregate = getattr(experiment, "aggregate", None)
    if aggregate is None:
        return {}
    figures = aggregate.clean_figures if clean else aggregate.figures
    return figures.get("splits", {})


def funnel_of(figures_for_split: dict) -> list[dict]:
    """The split's funnel as ``benchmark.aggregate`` computed it (``FUNNEL``'s stages)."""
    return (figures_for_split or {}).get("funnel") or []


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
    from webapp.results.aggregates import disqualified as disqualified_reports

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
    from webapp.results.aggregates import competition_tallies

    # Per split, the per-competition counts, read once if a pair needs them.
    stored: dict[str, dict] = {}
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
        results.append({**result, "split": split, "kind": "paired" if paired else "unpaired"})
    return results


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


# The conditions under which one agent may be run again and compared with itself (the
# paper's Table 3 for hardware and time, Table 4 for descriptions): (field, label).
TWIN_CONDITIONS = (
    ("hardware", "hardware"),
    ("runtime_hours", "time limit"),
    ("obfuscated_descriptions", "descriptions"),
)


def condition_twins(experiments: list[Experiment]) -> list[dict]:
    """The experiments compared that run the same agent, with the same internet access
    and test feedback, under conditions that differ only in ``TWIN_CONDITIONS``: one group
    per agent, ``{"agent", "varies": [labels], "members": [experiments]}``, members in
    the order given."""
    groups: dict[tuple, list[Experiment]] = {}
    for e in experiments:
        groups.setdefault((e.agent_id, e.internet_access, e.test_feedback), []).append(e)
    out = []
    for members in groups.values():
        varies = [
            label
            for field, label in TWIN_CONDITIONS
            if len({getattr(e, field) for e in members}) > 1
        ]
        if len(members) > 1 and varies:
            out.append({"agent": str(members[0].agent), "varies": varies, "members": members})
    return out


def condition_text(experiment: Experiment) -> str:
    """The experiment's conditions as Table 3 names them: hardware, time, descriptions."""
    parts = [experiment.hardware or "hardware not stated"]
    hours = experiment.runtime_hours
    parts.append("time not stated" if hours is None else f"{hours:g} h")
    parts.append("obfuscated descriptions" if experiment.obfuscated_descriptions else "original")
    return " · ".join(parts)


def twins_table(experiments: list[Experiment], by_split: dict) -> list[dict]:
    """The paper's Table 3 for the experiments compared: per group of ``condition_twins``,
    each member's conditions and its Any Medal % per split the group has in common, as
    mean ± SEM with the 95% interval (mean ± 1.96·SEM, clipped to 0-100)."""
    from webapp.core.formatting import shown_interval

    table = []
    for group in condition_twins(experiments):
        splits = [s for s in SPLIT_PREFERENCE if all(s in by_split[e.pk] for e in group["members"])]
        rows = []
        for e in group["members"]:
            cells = []
            for split in splits:
                value = by_split[e.pk][split]
                margin = 1.96 * value["standard_error"]
                cells.append(
                    {
                        **value,
                        "interval": shown_interval(
                            {"ci_lower": value["mean"] - margin, "ci_upper": value["mean"] + margin}
                        ),
                    }
                )
            rows.append({"experiment": e, "conditions": condition_text(e), "cells": cells})
        from benchmark.splits import split_label

        table.append({**group, "splits": [split_label(s) for s in splits], "rows": rows})
    return table


def description_pairs(experiments: list[Experiment], by_split: dict) -> list[dict]:
    """The paper's Table 4 for the experiments compared: for each agent present on both
    original and obfuscated descriptions (``condition_twins`` differing in descriptions),
    Any Medal % on each per common split and the difference (obfuscated − original). An
    original is paired with an obfuscated twin on the same hardware and time when there
    is one."""
    rows = []
    for group in condition_twins(experiments):
        if "descriptions" not in group["varies"]:
            continue
        twins = [e for e in group["members"] if e.obfuscated_descriptions]
        for original in (e for e in group["members"] if not e.obfuscated_descriptions):
            twin = next(
                (
                    e
                    for e in twins
                    if (e.hardware, e.runtime_hours) == (original.hardware, original.runtime_hours)
                ),
                twins[0],
            )
            for split in SPLIT_PREFERENCE:
                a, b = by_split[original.pk].get(split), by_split[twin.pk].get(split)
                if a and b:
                    rows.append(
                        {
                            "agent": str(original.agent),
                            "split": split,
                            "original": a,
                            "obfuscated": b,
                            "difference": b["mean"] - a["mean"],
                        }
                    )
    return rows
