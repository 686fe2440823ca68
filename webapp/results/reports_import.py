"""Reading an MLE-bench ``runs/`` folder (one folder per run group, holding its grading
report) into experiments, as *reported* results."""

import csv
import gc
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from benchmark.reports import GradingReportError, read_grading_report
from webapp.results.services import ReportedRunGroup

REPORT_FILE_PATTERN = "*grading_report*.json"


class RunsFolderError(ValueError):
    pass


@dataclass
class ExperimentRunGroups:
    experiment_id: str
    run_groups: list[ReportedRunGroup]


def grading_report_in(folder: Path) -> Path | None:
    """The newest grading report of a run group folder (MLE-bench names them
    ``<timestamp>_grading_report.json``, so the last in sorted order is the newest)."""
    try:
        # One scandir, no stat per entry: the same names as folder.glob(REPORT_FILE_PATTERN).
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if fnmatchcase(e.name, REPORT_FILE_PATTERN)]
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return None
    return Path(folder) / max(names) if names else None


def read_experiment_map(path: Path) -> dict[str, list[str]]:
    """``run_group_experiments.csv``: experiment_id -> run groups, in file order."""
    mapping: dict[str, list[str]] = {}
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"experiment_id", "run_group"} - set(reader.fieldnames or [])
        if missing:
            raise RunsFolderError(
                f"{path.name} needs the columns experiment_id and run_group (missing: {', '.join(sorted(missing))})"
            )
        for row in reader:
            mapping.setdefault(row["experiment_id"].strip(), []).append(row["run_group"].strip())
    return mapping


def read_runs_folder(
    runs_dir: Path, experiments_csv: Path | None = None
) -> list[ExperimentRunGroups]:
    """Every experiment of ``runs_dir`` with its run groups. Without a CSV, all run groups
    form one experiment named after the folder. Seeds: a report's own ``seed`` when it
    has one, else the run group's position within its experiment (0, 1, ...)."""
    return list(iter_runs_folder(runs_dir, experiments_csv))


def iter_runs_folder(runs_dir: Path, experiments_csv: Path | None = None):
    """``read_runs_folder``, one experiment at a time (a million reports need not be held
    at once)."""
    runs_dir = Path(runs_dir)
    for experiment_id, group_names in experiment_run_groups(runs_dir, experiments_csv).items():
        yield read_experiment(runs_dir, experiment_id, group_names)


def experiment_run_groups(runs_dir: Path, experiments_csv: Path | None = None) -> dict:
    """experiment id -> its run group folders, from the CSV or (without one) every run
    group of the folder as one experiment named after it."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise RunsFolderError(f"{runs_dir} is not a folder")
    if experiments_csv is not None:
        return read_experiment_map(Path(experiments_csv))
    groups = sorted(p.name for p in runs_dir.iterdir() if p.is_dir() and grading_report_in(p))
    return {runs_dir.name: groups}


def read_experiment(runs_dir: Path, experiment_id: str, group_names) -> ExperimentRunGroups:
    run_groups = []
    runs_dir = Path(runs_dir)
    for position, name in enumerate(group_names):
        folder = runs_dir / name
        report_path = grading_report_in(folder)
        if report_path is None:
            raise RunsFolderError(
                f"run group {name} of experiment {experiment_id} has no grading report in {folder}"
            )
        try:
            reports = read_grading_report(report_path)
        except GradingReportError as exc:
            raise RunsFolderError(f"{report_path}: {exc}") from None
        own = {r.seed for r in reports}
        seed = own.pop() if len(own) == 1 and None not in own else position
        run_groups.append(ReportedRunGroup(name=name, seed=seed, reports=reports))
    return ExperimentRunGroups(experiment_id, run_groups)


@dataclass
class ImportResult:
    experiments: list[int]  # ids, in the folder's order
    reports: int


def import_runs_folder(
    runs_dir: Path,
    experiments_csv: Path | None = None,
    *,
    scaffold: str = "",
    model: str = "unknown",
    publish: bool = False,
    jobs: int = 1,
) -> ImportResult:
    """Store every experiment of a ``runs/`` folder as *reported*, each whole in one
    transaction (COPY on PostgreSQL) and its figures computed once from all its reports,
    by ``jobs`` processes at once, each taking the next experiment (1: this process, in
    order). A stored experiment is marked due for figures until they are computed, so the
    sweeper finishes what an interrupted import left.

    A refused experiment (an unreadable report, an unknown competition) stops the import
    with the error; the experiments already stored stay (the error's ``stored``)."""
    from django.db import connections

    from webapp.results.models import LanguageModel, Scaffold

    runs_dir = Path(runs_dir)
    mapping = experiment_run_groups(runs_dir, experiments_csv)
    stored: list[int] = []
    n_reports = 0
    try:
        if jobs <= 1:
            for experiment_id, group_names in mapping.items():
                pk, n = _import_experiment(
                    runs_dir, experiment_id, group_names, scaffold, model, publish
                )
                stored.append(pk)
                n_reports += n
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # Shared rows first, so that the processes do not race to create them.
            LanguageModel.objects.get_or_create(name=model.strip() or "unknown")
            if scaffold:
                Scaffold.objects.get_or_create(name=scaffold.strip())
            # Forked without a connection: each process opens its own.
            connections.close_all()
            pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
            futures = [
                pool.submit(_import_experiment, runs_dir, eid, names, scaffold, model, publish)
                for eid, names in mapping.items()
            ]
            try:
                for future in futures:
                    n_reports += future.result()[1]
            finally:
                # On an error: what is not started is not; what the others finished stays.
                pool.shutdown(wait=True, cancel_futures=True)
                stored = [
                    f.result()[0]
                    for f in futures
                    if f.done() and not f.cancelled() and f.exception() is None
                ]
        if stored and connections["default"].vendor == "postgresql":
            # Fresh planner statistics: after a bulk load the tables' are far off.
            with connections["default"].cursor() as cursor:
                cursor.execute("ANALYZE results_run, results_gradereport")
    except RunsFolderError as exc:
        exc.stored = stored
        raise
    return ImportResult(stored, n_reports)


def _import_experiment(
    runs_dir: Path, experiment_id: str, group_names, scaffold: str, model: str, publish: bool
) -> tuple[int, int]:
    """Read, store and compute the figures of one experiment: (its id, its reports)."""
    from django.db import connection, transaction
    from django.utils import timezone

    from webapp.results.aggregates import experiment_aggregate_refresh
    from webapp.results.models import Experiment
    from webapp.results.services import (
        UnknownCompetitions,
        agent_get_or_create,
        experiment_create_from_reports,
    )

    with _fewer_collections():
        item = read_experiment(runs_dir, experiment_id, group_names)
        agent = agent_get_or_create(scaffold or item.experiment_id, model)
        store = (
            _experiment_copy_from_reports
            if connection.vendor == "postgresql"
            else experiment_create_from_reports
        )
        try:
            with transaction.atomic():
                # Due for figures from the start: if this process ends before they are
                # computed, the sweeper computes them.
                experiment = store(
                    name=item.experiment_id,
                    agent=agent,
                    run_groups=item.run_groups,
                    source=Experiment.Source.REPORTED,
                    is_published=publish,
                    figures_due_since=timezone.now(),
                )
        except UnknownCompetitions as exc:
            raise RunsFolderError(
                f"{item.experiment_id}: {exc}; nothing of it was stored"
            ) from None
        experiment_aggregate_refresh(experiment.pk)
    return experiment.pk, sum(len(g.reports) for g in item.run_groups)


@contextmanager
def _fewer_collections(threshold: int = 50_000):
    """Python's cyclic collector run less often (every ``threshold`` allocations rather
    than 700) while an experiment is imported: each collection walks the objects alive,
    and an experiment holds thousands of reports that it allocates by the million."""
    before = gc.get_threshold()
    gc.set_threshold(max(threshold, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _experiment_copy_from_reports(
    *, name, agent, run_groups, source, is_published, **experiment_fields
):
    """``services.experiment_create_from_reports`` on PostgreSQL, the same rows written
    faster: each table sent by COPY as text made here in one write (psycopg's write_row
    spends ~20 µs a row choosing and calling its dumpers), the text being what psycopg's
    text dumpers make of the same values, and the new runs' ids read back by their
    competition's id (no join)."""
    from django.db import connection, transaction
    from django.utils import timezone

    from webapp.competitions.models import Competition
    from webapp.results.models import Experiment, GradeReport, Run
    from webapp.results.services import (
        REPORT_COLUMNS,
        RUN_COLUMNS,
        refuse_unknown_competitions,
    )

    competitions = dict(Competition.objects.values_list("slug", "pk"))
    refuse_unknown_competitions(run_groups, competitions)
    with transaction.atomic():
        experiment = Experiment.objects.create(
            name=name,
            agent=agent,
            source=source,
            owner=None,
            is_published=is_published,
            **experiment_fields,
        )
        pending: dict = {}
        for group in run_groups:
            for report in group.reports:
                # A repeat of a (competition, seed) is the same run listed twice: the first stands.
                pending.setdefault((report.competition_id, group.seed), (group.name, report))
        report_source = (
            GradeReport.Source.REPORTED
            if source == Experiment.Source.REPORTED
            else GradeReport.Source.GRADED
        )
        lines = _CopyLines(experiment.pk, competitions, timezone.now())
        with connection.cursor() as cursor:
            raw = cursor.cursor
            with raw.copy(
                f"COPY {Run._meta.db_table} ({', '.join(RUN_COLUMNS)}) FROM STDIN"
            ) as copy:
                copy.write(lines.runs(pending))
            raw.execute(
                f"SELECT competition_id, seed, id FROM {Run._meta.db_table} WHERE experiment_id = %s",
                [experiment.pk],
            )
            run_ids = {(competition, seed): pk for competition, seed, pk in raw.fetchall()}
            with raw.copy(
                f"COPY {GradeReport._meta.db_table} ({', '.join(REPORT_COLUMNS)}) FROM STDIN"
            ) as copy:
                copy.write(lines.reports(pending, run_ids, report_source))
    return experiment


# COPY's text format, as psycopg writes it: these characters escaped, NULL as \N.
_NULL = "\\N"
_COPY_SPECIAL = re.compile("[\b\t\n\v\f\r\\\\\x00]")
_COPY_ESCAPES = str.maketrans(
    {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r", "\\": "\\\\"}
)


def _copy_text(value: str) -> str:
    if _COPY_SPECIAL.search(value) is None:
        return value
    if "\x00" in value:
        from psycopg import DataError

        raise DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
    return value.translate(_COPY_ESCAPES)


def _copy_number(value) -> str:
    # NaN (the one value unequal to itself): no number, stored as a missing score.
    return _NULL if value is None or value != value else str(value)


class _CopyLines:
    """COPY text of an experiment's runs and of their reports: the values of
    ``services._insert_runs_and_reports`` (``services._report_fields`` for a report's),
    each written as psycopg's text dumper writes it (``str`` of a number or a datetime).
    Parts that recur (thresholds, outcomes, dates, paths) are made once."""

    def __init__(self, experiment_pk: int, competitions: dict[str, int], now):
        self.experiment = experiment_pk
        self.competitions = competitions
        self.now = now
        self.now_text = str(now)
        self.texts: dict[str, str] = {}
        self.moments: dict = {}

    def text(self, value: str) -> str:
        found = self.texts.get(value)
        if found is None:
            found = self.texts[value] = _copy_text(value)
        return found

    def moment(self, value) -> str:
        found = self.moments.get(value)
        if found is None:
            import datetime as dt

            from django.utils import timezone

            if value is None:
                stamp = self.now
            elif timezone.is_naive(value):
                stamp = timezone.make_aware(value, dt.UTC)
            else:
                stamp = value
            found = self.moments[value] = str(stamp)
        return found

    def runs(self, pending: dict) -> str:
        from webapp.results.models import Run

        text, competitions = self.text, self.competitions
        head = f"{self.experiment}\t"
        tail = (
            f"\t{_copy_text(Run.Status.GRADED.value)}\t\t\t0\t0\t{self.now_text}\t{self.now_text}\n"
        )
        return "".join(
            f"{head}{competitions[cid]}\t{seed}\t{text(group)}\t{text(r.submission_path or '')}{tail}"
            for (cid, seed), (group, r) in pending.items()
        )

    def reports(self, pending: dict, run_ids: dict, source) -> str:
        text, moment, competitions = self.text, self.moment, self.competitions
        head = f"\t{self.experiment}\t"
        source = _copy_text(str(source))
        now_text = self.now_text
        thresholds: dict[tuple, str] = {}
        outcomes: dict[tuple, str] = {}
        lines = []
        for (cid, seed), (_, r) in pending.items():
            key = (r.gold_threshold, r.silver_threshold, r.bronze_threshold, r.median_threshold)
            limits = thresholds.get(key)
            if limits is None:
                limits = "\t".join(map(_copy_number, key))
                if 0 not in key:  # 0.0 and -0.0 are one key but two values
                    thresholds[key] = limits
            key = (
                r.any_medal,
                r.gold_medal,
                r.silver_medal,
                r.bronze_medal,
                r.above_median,
                r.submission_exists,
                r.valid_submission,
                r.is_lower_better,
            )
            outcome = outcomes.get(key)
            if outcome is None:
                outcome = outcomes[key] = "\t".join("t" if v else "f" for v in key)
            competition = competitions[cid]
            score, percentile = r.score, r.percentile
            lines.append(
                f"{run_ids[competition, seed]}{head}{competition}\t{seed}\tt\t{source}\t"
                f"{_NULL if score is None or score != score else score}\t{limits}\t{outcome}\t"
                f"{moment(r.created_at)}\t{text(r.submission_path or '')}\t"
                f"{_NULL if percentile is None or percentile != percentile else percentile}\t"
                f"{text(r.grader_version or '')}\t{text(r.error or '')}\t{now_text}\n"
            )
        return "".join(lines)
