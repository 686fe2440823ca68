"""Reading an MLE-bench ``runs/`` folder (one folder per run group, holding its grading
report) into experiments, as *reported* results."""

import csv
import gc
import os
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
    from django.db import transaction
    from django.utils import timezone

    from webapp.results.grading.aggregates import experiment_aggregate_refresh
    from webapp.results.models import Experiment
    from webapp.results.services import (
        UnknownCompetitions,
        agent_get_or_create,
        experiment_create_from_reports,
    )

    with _fewer_collections():
        item = read_experiment(runs_dir, experiment_id, group_names)
        agent = agent_get_or_create(scaffold or item.experiment_id, model)
        try:
            with transaction.atomic():
                # Due for figures from the start: if this process ends before they are
                # computed, the sweeper computes them.
                experiment = experiment_create_from_reports(
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
