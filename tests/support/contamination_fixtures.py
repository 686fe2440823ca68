"""Experiments over MLE-bench's real competitions for the contamination views, imported as
MLE-bench writes them: a ``runs/`` folder of run groups (one per seed), each with its
``*_grading_report.json``, and ``run_group_experiments.csv``; stored by
``manage.py import_grading_reports``. The medals are made up, deterministically, so that
the older competitions medal more often (a contaminated-looking agent)."""

import csv
import hashlib
import json
from pathlib import Path

from django.core.management import call_command

from benchmark.catalogue import competitions_in_split
from tests.support.archive_builders import competition_report_dict, grading_report_bytes


def _draw(*parts) -> float:
    """A number in [0, 1) from its parts, always the same."""
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


def medal_chance(deadline_year: int, bias: float) -> float:
    """Older competitions medal more often: from 0.6 in 2012 down by ``bias`` a year."""
    return max(0.05, 0.6 - bias * (deadline_year - 2012))


def write_runs(root: Path, experiment_id: str, seeds: int = 3, bias: float = 0.05) -> Path:
    """``root/runs/`` with one run group per seed over the 75 competitions of split "all"."""
    runs = root / "runs"
    groups = []
    for seed in range(seeds):
        group = f"2024-10-0{seed + 1}T00-00-00-GMT_run-group_{experiment_id}"
        reports = []
        for facts in competitions_in_split("all"):
            medal = _draw(experiment_id, facts.id, seed) < medal_chance(facts.deadline.year, bias)
            report = competition_report_dict(facts.id, score=0.95 if medal else 0.4)
            report.update(any_medal=medal, gold_medal=medal, above_median=medal)
            reports.append(report)
        (runs / group).mkdir(parents=True)
        (runs / group / "2024-10-10T00-00-00-GMT_grading_report.json").write_bytes(
            grading_report_bytes(reports)
        )
        groups.append(group)
    listing = runs / "run_group_experiments.csv"
    rows = (
        list(csv.reader(listing.open())) if listing.exists() else [["experiment_id", "run_group"]]
    )
    rows += [[experiment_id, g] for g in groups]
    with listing.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return runs


def import_experiment(root: Path, experiment_id: str, model: str, **kwargs):
    """Write and import one experiment's reports; returns the stored Experiment."""
    from webapp.results.models import Experiment

    runs = write_runs(root / experiment_id, experiment_id, **kwargs)
    call_command(
        "import_grading_reports",
        str(runs),
        "--experiments",
        str(runs / "run_group_experiments.csv"),
        "--scaffold",
        "aide",
        "--model",
        model,
        "--publish",
    )
    return Experiment.objects.get(name__contains=experiment_id)


def reports_json(experiment) -> str:
    """The experiment's reports as the API gives them (for debugging a failing test)."""
    return json.dumps(list(experiment.reports.values("competition__slug", "seed", "any_medal")))
