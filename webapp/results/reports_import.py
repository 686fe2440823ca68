"""Reading an MLE-bench ``runs/`` folder (one folder per run group, holding its grading
report) into experiments, as *reported* results."""

import csv
from dataclasses import dataclass
from pathlib import Path

from benchmark.reports import GradingReportError, read_grading_report
from webapp.results.services import ReportedRunGroup


class RunsFolderError(ValueError):
    pass


@dataclass
class ExperimentRunGroups:
    experiment_id: str
    run_groups: list[ReportedRunGroup]


def grading_report_in(folder: Path) -> Path | None:
    """The newest grading report of a run group folder (MLE-bench names them
    ``<timestamp>_grading_report.json``, so the last in sorted order is the newest)."""
    found = sorted(folder.glob("*grading_report*.json"))
    return found[-1] if found else None


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
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise RunsFolderError(f"{runs_dir} is not a folder")
    if experiments_csv is not None:
        mapping = read_experiment_map(Path(experiments_csv))
    else:
        groups = sorted(p.name for p in runs_dir.iterdir() if p.is_dir() and grading_report_in(p))
        mapping = {runs_dir.name: groups}
    result = []
    for experiment_id, group_names in mapping.items():
        run_groups = []
        for position, name in enumerate(group_names):
            folder = runs_dir / name
            report_path = grading_report_in(folder) if folder.is_dir() else None
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
            run_groups.append(ReportedRunGroup(name=name, seed=seed, reports=[r for r in reports]))
        result.append(ExperimentRunGroups(experiment_id, run_groups))
    return result
