"""Writes for agents, experiments, runs and grade reports."""

import datetime as dt
import math
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from benchmark import disclosure
from benchmark.reports import CompetitionReport, submission_path_in_run
from webapp.competitions.models import Competition
from webapp.results.imports.copy_rows import REPORT_COLUMNS, REPORT_VALUE_FIELDS, RUN_COLUMNS
from webapp.results.models import Agent, Experiment, GradeReport, LanguageModel, Run, Scaffold


def agent_get_or_create(scaffold: str, model: str, version: str = "") -> Agent:
    scaffold_obj, _ = Scaffold.objects.get_or_create(name=scaffold.strip() or "unknown")
    model_obj, _ = LanguageModel.objects.get_or_create(name=model.strip() or "unknown")
    agent, _ = Agent.objects.get_or_create(
        scaffold=scaffold_obj, model=model_obj, version=version.strip()
    )
    return agent


_BLANK_IF_NONE = {"submission_path", "grader_version", "error", "error_class"}


def _report_fields(report: CompetitionReport) -> dict:
    values = {name: getattr(report, name) for name in REPORT_VALUE_FIELDS}
    for name, value in values.items():
        if isinstance(value, float) and math.isnan(value):
            values[name] = None  # no number: stored as MLE-bench writes a missing score
    for name in _BLANK_IF_NONE:
        values[name] = values[name] or ""
    values["submission_path"] = submission_path_in_run(values["submission_path"])
    created = values["created_at"]
    if created is None:
        values["created_at"] = timezone.now()
    elif timezone.is_naive(created):
        values["created_at"] = timezone.make_aware(created, dt.UTC)
    return values


@transaction.atomic
def report_store(
    run: Run, report: CompetitionReport, source: str = GradeReport.Source.GRADED
) -> GradeReport:
    """Store ``report`` as the run's current report (a previous one stays, not current)."""
    GradeReport.objects.filter(run=run, is_current=True).update(is_current=False)
    return GradeReport.objects.create(
        run=run,
        experiment_id=run.experiment_id,
        competition_id=run.competition_id,
        seed=run.seed,
        is_current=True,
        source=source,
        **_report_fields(report),
    )


@dataclass
class ReportedRunGroup:
    """One MLE-bench run group (one seed) and its competition reports."""

    name: str
    seed: int
    reports: list[CompetitionReport]


class UnknownCompetitions(ValueError):
    pass


@transaction.atomic
def refuse_unknown_competitions(run_groups, known) -> None:
    """Raise ``UnknownCompetitions`` naming (the first five of) the reports' competition
    ids that are not in ``known``."""
    unknown = sorted(
        {r.competition_id for g in run_groups for r in g.reports if r.competition_id not in known}
    )
    if unknown:
        shown = ", ".join(unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        raise UnknownCompetitions(
            f"{len(unknown)} competition id(s) are not in the catalogue: {shown}"
        )


def experiment_create_from_reports(
    *,
    name: str,
    agent: Agent,
    run_groups: Iterable[ReportedRunGroup],
    source: str = Experiment.Source.REPORTED,
    owner=None,
    is_published: bool = False,
    **experiment_fields,
) -> Experiment:
    """Create an experiment whose runs carry imported reports, stored as *reported*.
    Refuses (and writes nothing) if a report names a competition we do not know."""
    run_groups = list(run_groups)
    competitions = {c.slug: c for c in Competition.objects.all()}
    refuse_unknown_competitions(run_groups, competitions)
    experiment = Experiment.objects.create(
        name=name,
        agent=agent,
        source=source,
        owner=owner,
        is_published=is_published,
        **experiment_fields,
    )
    pending: dict[tuple[str, int], tuple[str, CompetitionReport]] = {}
    for group in run_groups:
        for report in group.reports:
            # MLE-bench run groups hold one report per competition; a repeat is the same
            # run listed twice, so the first one stands.
            pending.setdefault((report.competition_id, group.seed), (group.name, report))
    report_source = (
        GradeReport.Source.REPORTED
        if source == Experiment.Source.REPORTED
        else GradeReport.Source.GRADED
    )
    _insert_runs_and_reports(experiment, competitions, pending, report_source)
    return experiment


def _insert_runs_and_reports(experiment, competitions, pending, report_source) -> None:
    """Insert an imported experiment's runs and reports: by COPY on PostgreSQL
    (``copy_rows``), with two executemany calls elsewhere. The ORM's bulk_create spends
    most of its time preparing values, which made a 75,000-report import take minutes."""
    from django.db import connection

    now = timezone.now()
    if connection.vendor == "postgresql":
        from webapp.results.imports.copy_rows import copy_runs_and_reports

        pks = {slug: c.pk for slug, c in competitions.items()}
        copy_runs_and_reports(experiment.pk, pks, pending, report_source, now)
        return
    run_rows = [
        (
            experiment.pk,
            competitions[cid].pk,
            seed,
            group,
            report.submission_path or "",
            Run.Status.GRADED,
            "",
            "",
            0,
            0,
            now,
            now,
        )
        for (cid, seed), (group, report) in pending.items()
    ]
    _bulk_insert(Run._meta.db_table, RUN_COLUMNS, run_rows)
    run_ids = {
        (slug, seed): pk
        for pk, slug, seed in Run.objects.filter(experiment=experiment).values_list(
            "pk", "competition__slug", "seed"
        )
    }
    report_rows = []
    for (cid, seed), (_, report) in pending.items():
        f = _report_fields(report)
        report_rows.append(
            (
                run_ids[(cid, seed)],
                experiment.pk,
                competitions[cid].pk,
                seed,
                True,
                report_source,
                *f.values(),
                now,
            )
        )
    _bulk_insert(GradeReport._meta.db_table, REPORT_COLUMNS, report_rows)


def _bulk_insert(table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})",
            rows,
        )


PUBLISHED_NOTE = "Figures as published in MLE-bench's leaderboard; no reports behind them here."


@transaction.atomic
def published_entries_store(entries) -> tuple[int, int, int]:
    """Make the reported, published-figures experiments exactly ``entries`` (a list of
    ``benchmark.published.PublishedEntry``): create or update one per entry and remove
    published-figures entries no longer in the list. Returns (created, updated, removed)."""
    created = updated = 0
    names = []
    for entry in entries:
        agent = agent_get_or_create(entry.agent, entry.llm)
        names.append(entry.name)
        figures = entry.to_dict()["figures"]
        _, was_created = Experiment.objects.update_or_create(
            name=entry.name,
            source=Experiment.Source.REPORTED,
            defaults={
                "agent": agent,
                "is_published": True,
                "published_figures": figures,
                "runtime_hours": entry.runtime_hours,
                # The README's LLM(s) column: an ensemble names each of its models.
                "models_used": disclosure.models_from_published(entry.llm),
                "date": entry.date,
                "source_available": entry.source_available,
                "source_url": entry.agent_url,
                "known_leakage": entry.known_leakage,
                "known_leakage_url": entry.known_leakage_url,
                "grading_reports_available": entry.grading_reports_available,
                "known_leakage_note": entry.known_leakage_note,
                "published_notes": list(entry.notes),
                "notes": PUBLISHED_NOTE,
            },
        )
        created += was_created
        updated += not was_created
    stale = Experiment.objects.filter(
        source=Experiment.Source.REPORTED, notes=PUBLISHED_NOTE, runs__isnull=True
    ).exclude(name__in=names)
    stale_ids = list(stale.values_list("pk", flat=True).distinct())
    Experiment.objects.filter(pk__in=stale_ids).delete()
    return created, updated, len(stale_ids)
