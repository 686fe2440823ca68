"""The whole catalogue's worth of synthetic submissions, graded every day.

One synthetic data folder holds every competition mleboard grades (``tests/support/catalogue_data.py``).
For each: the perfect submission is valid and earns the best score, the sample submission is
valid, a submission mixing the two is valid, and a broken one is rejected with a reason. Then
``mleboard grade`` grades a ``submissions.jsonl`` of all the perfect submissions in one run.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import graders
from tests.support.catalogue_data import (
    SyntheticCompetition,
    build_catalogue,
    build_competition,
    same_score,
    submission_variant,
)
from tests.support.synthetic import DEMO_IDS, REPO_ROOT

COMPETITIONS = graders.known_competitions()

# Where MLE-bench itself accepts a broken submission, and so do we.
ACCEPTED_WITHOUT_ID_COLUMN = {
    # Only the two target columns are checked; rows are paired by position.
    "nomad2018-predict-transparent-conductors",
}
ACCEPTED_WITH_A_ROW_MISSING = {
    # Whatever scored weeks are present are scored; nothing is required.
    "osic-pulmonary-fibrosis-progression",
    # Rows are paired by position; a shorter submission is scored on its rows.
    "uw-madison-gi-tract-image-segmentation",
}


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory) -> dict[str, SyntheticCompetition]:
    return build_catalogue(tmp_path_factory.mktemp("catalogue"))


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _write_rows(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    return path


def test_the_catalogue_covers_every_grader(catalogue, catalogue_by_id):
    assert sorted(catalogue) == COMPETITIONS
    assert len(COMPETITIONS) == len(catalogue_by_id) + len(DEMO_IDS) == 86
    for cid, comp in catalogue.items():
        expected = catalogue_by_id[cid]["answers"] if cid in catalogue_by_id else None
        if expected is not None:
            assert comp.answers == comp.data_dir / expected, cid
        assert comp.answers.is_file() and comp.sample_submission.is_file()
        public = comp.data_dir / cid / "prepared" / "public"
        assert comp.sample_submission == public / "sample_submission.csv"
        assert (public / "description.md").read_text(encoding="utf-8").strip()
        assert "prepared" not in comp.perfect_submission.relative_to(comp.data_dir).parts


@pytest.mark.parametrize("competition_id", COMPETITIONS)
def test_perfect_submission_earns_the_best_score(catalogue, competition_id):
    comp = catalogue[competition_id]
    result = graders.grade_submission(comp.perfect_submission, competition_id, comp.data_dir)
    assert result.valid_submission and result.submission_exists, result.error
    assert result.error is None
    if comp.best_score is not None:
        assert same_score(result.score, comp.best_score), (result.score, comp.best_score)
    validation = graders.validate_submission(comp.perfect_submission, competition_id, comp.data_dir)
    assert validation.valid, validation.message


@pytest.mark.parametrize("competition_id", COMPETITIONS)
def test_sample_submission_and_mixtures_are_valid(catalogue, competition_id, tmp_path):
    comp = catalogue[competition_id]
    sample = graders.grade_submission(comp.sample_submission, competition_id, comp.data_dir)
    assert sample.valid_submission, sample.error
    assert sample.score is not None
    if comp.best_score is not None:  # a constant guess never earns the best score
        assert not same_score(sample.score, comp.best_score), sample.score
    validation = graders.validate_submission(comp.sample_submission, competition_id, comp.data_dir)
    assert validation.valid and validation.message == "Submission is valid."

    mixed = submission_variant(comp, tmp_path / "mixed.csv", quality=0.5, seed=3)
    result = graders.grade_submission(mixed, competition_id, comp.data_dir)
    assert result.valid_submission, result.error
    # The ends of the scale are the two reference submissions themselves.
    ends = [submission_variant(comp, tmp_path / f"q{q}.csv", quality=q, seed=3) for q in (0, 1)]
    assert _rows(ends[0]) == _rows(comp.sample_submission)
    assert _rows(ends[1]) == _rows(comp.perfect_submission)


@pytest.mark.parametrize("competition_id", COMPETITIONS)
def test_submission_without_its_id_column_is_rejected(catalogue, competition_id, tmp_path):
    comp = catalogue[competition_id]
    rows = _rows(comp.perfect_submission)
    path = _write_rows(tmp_path / "no_id.csv", [row[1:] for row in rows])
    result = graders.grade_submission(path, competition_id, comp.data_dir)
    if competition_id in ACCEPTED_WITHOUT_ID_COLUMN:
        assert result.valid_submission, result.error
        return
    assert not result.valid_submission and result.score is None
    assert result.submission_exists and result.error
    validation = graders.validate_submission(path, competition_id, comp.data_dir)
    assert not validation.valid and validation.message


@pytest.mark.parametrize("competition_id", COMPETITIONS)
def test_submission_missing_a_row_is_rejected(catalogue, competition_id, tmp_path):
    comp = catalogue[competition_id]
    rows = _rows(comp.perfect_submission)
    path = _write_rows(tmp_path / "short.csv", rows[:-1])
    result = graders.grade_submission(path, competition_id, comp.data_dir)
    if competition_id in ACCEPTED_WITH_A_ROW_MISSING:
        assert result.valid_submission, result.error
        return
    assert not result.valid_submission and result.score is None
    assert result.error


@pytest.mark.parametrize("competition_id", COMPETITIONS)
def test_larger_builds_keep_their_scores(competition_id, tmp_path):
    comp = build_competition(competition_id, tmp_path, seed=5, n_rows=150)
    assert len(_rows(comp.perfect_submission)) - 1 >= 150
    perfect = graders.grade_submission(comp.perfect_submission, competition_id, tmp_path)
    assert perfect.valid_submission, perfect.error
    if comp.best_score is not None:
        assert same_score(perfect.score, comp.best_score), (perfect.score, comp.best_score)
    sample = graders.grade_submission(comp.sample_submission, competition_id, tmp_path)
    assert sample.valid_submission, sample.error


def test_mleboard_grade_reports_the_whole_catalogue(catalogue, tmp_path):
    data_dir = next(iter(catalogue.values())).data_dir
    submissions = tmp_path / "submissions.jsonl"
    submissions.write_text(
        "".join(
            json.dumps({"competition_id": cid, "submission_path": str(c.perfect_submission)}) + "\n"
            for cid, c in catalogue.items()
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-m", "cli", "grade", "--submission", str(submissions)]
    command += ["--output-dir", str(out), "--data-dir", str(data_dir)]
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [report_file] = out.glob("*_grading_report.json")
    report = json.loads(report_file.read_text(encoding="utf-8"))
    assert report["total_runs"] == report["total_valid_submissions"] == len(catalogue)
    reports = {r["competition_id"]: r for r in report["competition_reports"]}
    assert sorted(reports) == COMPETITIONS
    for cid, entry in reports.items():
        assert entry["valid_submission"] and entry["submission_exists"], entry
        best = catalogue[cid].best_score
        if best is not None:
            assert same_score(entry["score"], best), (cid, entry["score"], best)
