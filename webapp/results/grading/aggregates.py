"""The one computation of every figure: which runs count, over which competitions, and
what they add up to. An experiment's figures are computed once, when its reports or their
review change, with ``benchmark.aggregate``, and stored; every page, the API and every
export read what is stored here, so they cannot disagree.

Declared here and nowhere else (a house rule, tools/house_rules, bans the rest): which
runs count (a run disqualified by review is no medal; ``reviewed_by`` is how the reviewing
app says which, so results imports no app above it), the clean subset
(``clean_subset_excluded``, ``wants_clean_subset``), the splits (figured when every
competition has a run, missing seeds failures: ``figures_for``), and what decides one
competition between two experiments (``competition_tallies``).
"""

import dataclasses
from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from benchmark.aggregate import AggregationError, aggregate
from benchmark.catalogue import load_catalogue
from benchmark.compare import CompetitionTally
from benchmark.reports import REPORT_KEYS, CompetitionReport
from benchmark.splits import RAN, SPLIT_SLUGS
from webapp.competitions.selectors import clean_subset_excluded_slugs
from webapp.core import changes
from webapp.results.grading.replicates import RANKED, bootstrap_figures, replicates_store
from webapp.results.grading.tokens import cost_summary
from webapp.results.models import Experiment, ExperimentAggregate, GradeReport
from webapp.work import send_on_commit

# The stored report's columns in MLE-bench's key order, the competition by its slug.
REPORT_FIELDS = ("competition__slug", "seed", *REPORT_KEYS[1:])


# A run disqualified by review (plagiarism, a rule broken) counts as no medal; its score
# and the rest of its report stand as graded.
NO_MEDAL = {"any_medal": False, "gold_medal": False, "silver_medal": False, "bronze_medal": False}


@dataclasses.dataclass(frozen=True)
class RunReview:
    """What the app that reviews runs tells the figures."""

    # Reports (``GradeReport``) of runs disqualified by review, as a query.
    disqualified_reports: Callable[[], Q]
    # An experiment's runs disqualified by review.
    disqualified_runs: Callable[[int], set[int]]
    # An experiment's counts for the leaderboard's integrity column
    # (``ExperimentAggregate``'s ``runs_checked``, ``runs_flagged``, ``runs_disqualified``).
    counts: Callable[[int], dict[str, int]]


_REVIEW: list[RunReview] = []


def reviewed_by(review: RunReview) -> None:
    """Called by the app that reviews runs when it is ready (``webapp.integrity``)."""
    _REVIEW[:] = [review]


def _review() -> RunReview:
    if not _REVIEW:
        raise ImproperlyConfigured("no app reviews runs: is webapp.integrity installed?")
    return _REVIEW[0]


def disqualified() -> Q:
    """Reports (``GradeReport``) of runs disqualified by review, for queries counted by
    the database."""
    return _review().disqualified_reports()


def disqualified_run_ids(experiment_id: int) -> set[int]:
    """The experiment's runs disqualified by review."""
    return _review().disqualified_runs(experiment_id)


# The values of ``?clean=`` that ask for the clean subset, on every page and the API.
CLEAN_SUBSET_VALUES = ("1", "true", "on", "yes")


def wants_clean_subset(query) -> bool:
    """Whether a request's query (``?clean=1``) asks for the clean subset's figures."""
    return query.get("clean", "") in CLEAN_SUBSET_VALUES


def clean_subset_excluded() -> set[str]:
    """The competitions the clean subset leaves out (the curation's)."""
    return set(clean_subset_excluded_slugs())


def counted_reports(experiment_id: int) -> list[CompetitionReport]:
    """The experiment's current reports as every figure counts them: a disqualified run's
    medals taken away (``NO_MEDAL``). What the reports exports give too."""
    disqualified = disqualified_run_ids(experiment_id)
    rows = GradeReport.objects.filter(experiment_id=experiment_id, is_current=True).values_list(
        "run_id", *REPORT_FIELDS
    )
    reports = []
    for run_id, *row in rows:
        fields = dict(zip(REPORT_KEYS[1:], row[2:], strict=True))
        if run_id in disqualified:
            fields.update(NO_MEDAL)
        reports.append(CompetitionReport(competition_id=row[0], seed=row[1], **fields))
    return reports


def figures_for(
    reports: list[CompetitionReport], catalogue, excluded: set[str] = frozenset()
) -> dict:
    """Aggregates per split, for every split the experiment covers. A split is covered
    when every one of its competitions has at least one run; seeds lacking a run count it
    as a failure (MLE-bench's zero padding), which is what a missing run is."""
    if excluded:
        catalogue = {cid: facts for cid, facts in catalogue.items() if cid not in excluded}
        reports = [r for r in reports if r.competition_id not in excluded]
    covered = {r.competition_id for r in reports}
    out = {}
    for split in SPLIT_SLUGS:
        ids = {cid for cid, facts in catalogue.items() if split in facts.splits}
        if not ids or not ids <= covered:
            continue
        try:
            out[split] = aggregate(
                [r for r in reports if r.competition_id in ids],
                split=split,
                pad_missing=True,
                catalogue=catalogue,
                seeding="explicit",
            )
        except AggregationError as exc:
            out[split] = {"error": str(exc)}
    if not out and covered:
        # No standard split is complete (a launch on a few competitions): figures over
        # exactly the competitions that were run, under the split RAN.
        subset = {
            cid: dataclasses.replace(catalogue[cid], splits=("all",))
            for cid in covered
            if cid in catalogue
        }
        try:
            result = aggregate(
                reports, split="all", pad_missing=True, catalogue=subset, seeding="explicit"
            )
            out[RAN.slug] = {**result, "split": RAN.slug}
        except AggregationError as exc:
            out[RAN.slug] = {"error": str(exc)}
    return {"splits": out}


def competition_tallies(per_competition: list[dict], catalogue) -> dict[str, CompetitionTally]:
    """competition id -> ``CompetitionTally`` from one split's stored ``per_competition``
    rows (``benchmark.aggregate``): seeds as the split's figures count them (a missing run
    is a seed with nothing), medals after review, outcome levels and mean score. Their
    medal rates average to the split's Any Medal %. Raises ValueError for figures stored
    before the levels were (they are recomputed by the sweeper)."""
    out = {}
    for row in per_competition or ():
        if "level_sum" not in row:
            raise ValueError("these figures are being recomputed; compare again in a minute")
        facts = catalogue.get(row["competition_id"])
        out[row["competition_id"]] = CompetitionTally(
            seeds=row["runs"],
            medals=row["any_medal"],
            level_sum=row["level_sum"],
            mean_score=row.get("mean_score"),
            lower_is_better=bool(facts and facts.lower_is_better),
        )
    return out


def summary_of(figures: dict) -> dict:
    """Per split: Any Medal % (mean, standard_error, ci_lower, ci_upper), its bootstrap
    interval (``interval_lower``, ``interval_upper``) and seeds."""
    out = {}
    for split, result in figures.get("splits", {}).items():
        metrics = result.get("metrics")
        if metrics:
            out[split] = {
                **metrics["any_medal_percentage"],
                "n_seeds": result["num_seeds_averaged"],
                "n_competitions": result.get("num_competitions_per_seed"),
            }
            bootstrap = (result.get("bootstrap") or {}).get("intervals", {}).get(RANKED)
            if bootstrap:
                out[split]["interval_lower"] = bootstrap["lower"]
                out[split]["interval_upper"] = bootstrap["upper"]
    return out


def figures_due(experiment_ids) -> None:
    """The figures of these experiments no longer match their reports or the curation:
    mark them due and, for each one not already due, send a refresh after commit."""

    now = timezone.now()
    for pk in sorted(set(experiment_ids)):
        # The experiment's row lock orders this mark against a refresh in progress: the
        # refresh holds it while it reads the reports and checks, so either it sees what
        # this transaction wrote, or it has finished and cleared the mark, which this call
        # then sets again. (An update of rows still "due" takes no lock when it matches
        # nothing, and a refresh could clear the mark without having seen this change.)
        with transaction.atomic():
            due = (
                Experiment.objects.select_for_update()
                .filter(pk=pk)
                .values_list("figures_due_since", flat=True)
                .first()
            )
            if due is None and Experiment.objects.filter(pk=pk).update(figures_due_since=now):
                send_on_commit("figures", pk)


@transaction.atomic
def experiment_aggregate_refresh(experiment_id: int) -> ExperimentAggregate:
    """Recompute an experiment's figures from its current reports and the curation, and
    clear its due mark unless it was set again meanwhile."""
    experiment = Experiment.objects.select_for_update().get(pk=experiment_id)
    due_since = experiment.figures_due_since
    reports = counted_reports(experiment.pk)
    catalogue = load_catalogue(include_demo=True)
    figures = figures_for(reports, catalogue)
    clean = figures_for(reports, catalogue, clean_subset_excluded())
    # The intervals are written into the figures, the replicates stored beside them.
    replicates_store(
        experiment.pk,
        {
            False: bootstrap_figures(figures, clean=False, experiment_id=experiment.pk),
            True: bootstrap_figures(clean, clean=True, experiment_id=experiment.pk),
        },
    )
    aggregate_row, _ = ExperimentAggregate.objects.update_or_create(
        experiment=experiment,
        defaults={
            "figures": figures,
            "clean_figures": clean,
            "summary": summary_of(figures),
            "clean_summary": summary_of(clean),
            "n_reports": len(reports),
            "cost": cost_summary(experiment, disqualified_run_ids(experiment.pk)),
            **_review().counts(experiment.pk),
        },
    )
    Experiment.objects.filter(pk=experiment_id, figures_due_since=due_since).update(
        figures_due_since=None
    )
    changes.figures_stored_for(experiment_id)
    changes.experiments_changed([experiment_id])
    return aggregate_row
