"""Synthetic MLE-bench grading reports for tests: random but reproducible outcomes."""

import datetime as dt
import random
from pathlib import Path

from benchmark.catalogue import competitions_in_split
from benchmark.reports import CompetitionReport, write_grading_report


def synthetic_report(
    competition_id: str, rng: random.Random, seed: int | None = None
) -> CompetitionReport:
    exists = rng.random() < 0.9
    valid = exists and rng.random() < 0.85
    medal = rng.choice(["gold", "silver", "bronze", None, None, None]) if valid else None
    above = valid and (medal is not None or rng.random() < 0.3)
    return CompetitionReport(
        competition_id=competition_id,
        score=round(rng.random(), 5) if valid else None,
        gold_threshold=0.9,
        silver_threshold=0.8,
        bronze_threshold=0.7,
        median_threshold=0.5,
        any_medal=medal is not None,
        gold_medal=medal == "gold",
        silver_medal=medal == "silver",
        bronze_medal=medal == "bronze",
        above_median=above,
        submission_exists=exists,
        valid_submission=valid,
        is_lower_better=False,
        created_at=dt.datetime(2024, 10, 1, 12, 0, 0),
        submission_path=f"runs/{competition_id}/submission.csv" if exists else "",
        seed=seed,
    )


def write_runs_folder(
    root: Path, experiments: dict[str, int], split: str = "low", seed: int = 0
) -> Path:
    """MLE-bench's runs/ layout: one folder per run group with its grading report, and
    run_group_experiments.csv mapping experiment ids to run groups."""
    rng = random.Random(seed)
    ids = [c.id for c in competitions_in_split(split)]
    lines = ["experiment_id,run_group"]
    for experiment, n_seeds in experiments.items():
        for s in range(n_seeds):
            group = f"2024-10-01T12-00-00-GMT_run-group_{experiment}_{s}"
            folder = root / group
            folder.mkdir(parents=True)
            reports = [synthetic_report(cid, rng) for cid in ids]
            write_grading_report(folder / "2024-10-01T13-00-00-GMT_grading_report.json", reports)
            lines.append(f"{experiment},{group}")
    (root / "run_group_experiments.csv").write_text("\n".join(lines) + "\n")
    return root


def import_runs(root: Path, experiments: dict[str, int], split: str = "low", seed: int = 0):
    """``write_runs_folder`` imported with ``manage.py import_grading_reports``, published
    (the catalogue must be loaded)."""
    from django.core.management import call_command

    runs = write_runs_folder(root, experiments, split, seed)
    call_command(
        "import_grading_reports",
        str(runs),
        experiments=runs / "run_group_experiments.csv",
        publish=True,
    )
    return runs


# Every condition of benchmark.disclosure.FIELDS, within MLE-bench's recommended setup.
FULL_DISCLOSURE = {
    "gpus": 1,
    "gpu_model": "A10 24GB",
    "vcpus": 36,
    "ram_gib": 440.0,
    "hours": 24.0,
    "models": ["gpt-4o"],
    "internet": False,
    "test_labels": False,
    "seeds": 3,
    "selection": "pass@1",
    "source_url": "https://example.org/agent",
}
