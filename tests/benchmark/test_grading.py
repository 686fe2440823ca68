"""``benchmark.grading.grade_submission_run``: grader score -> medal rule -> MLE-bench report."""

from __future__ import annotations

import math

import pytest

import graders
from benchmark.grading import grade_submission_run, load_private_leaderboard
from benchmark.leaderboard import read_leaderboard
from tests.support.leaderboards import IDS, LABELS, write_leaderboard
from tests.support.synthetic import CompetitionLayout


@pytest.fixture
def digits(tmp_path):
    layout = CompetitionLayout(tmp_path, "demo-digits")
    layout.write_answers({"id": IDS, "label": LABELS})
    # ten teams: accuracies 1.0, 0.95, ..., 0.55 (higher is better)
    write_leaderboard(
        tmp_path / "demo-digits" / "leaderboard.csv", [1 - i * 0.05 for i in range(10)]
    )
    return layout


def _submission(layout, name, correct: int):
    labels = [label if i < correct else (label + 1) % 4 for i, label in enumerate(LABELS)]
    return layout.write_submission(name, {"id": IDS, "label": labels})


def test_gold_medal_for_a_perfect_submission(digits, tmp_path):
    board, note = load_private_leaderboard("demo-digits", data_dir=tmp_path)
    assert note is None and board is not None
    report = grade_submission_run(
        _submission(digits, "p.csv", 20), "demo-digits", tmp_path, board, seed=3
    )
    assert report.score == 1.0 and report.valid_submission and report.submission_exists
    assert report.gold_medal and report.any_medal and report.above_median
    assert not report.silver_medal and not report.bronze_medal
    assert report.gold_threshold == 1.0 and report.median_threshold == pytest.approx(0.775)
    assert report.is_lower_better is False
    assert report.seed == 3 and report.error is None and report.grader_version == "accuracy/1"
    assert report.percentile == pytest.approx(95.0)
    data = report.to_dict()
    assert data["score"] == 1.0 and data["seed"] == 3 and "error" not in data


def test_invalid_submission_reports_the_reason_and_no_medal(digits, tmp_path):
    board, _ = load_private_leaderboard("demo-digits", data_dir=tmp_path)
    path = digits.write_submission("bad.csv", {"id": IDS[:5], "label": LABELS[:5]})
    report = grade_submission_run(path, "demo-digits", tmp_path, board)
    assert report.score is None and not report.valid_submission and report.submission_exists
    assert not report.any_medal and not report.above_median
    assert "5 rows" in report.error and report.to_dict()["error"] == report.error
    assert report.gold_threshold == 1.0  # thresholds are reported even without a score


def test_missing_submission(digits, tmp_path):
    board, _ = load_private_leaderboard("demo-digits", data_dir=tmp_path)
    for path in (None, tmp_path / "absent.csv"):
        report = grade_submission_run(path, "demo-digits", tmp_path, board)
        assert not report.submission_exists and not report.valid_submission
        assert report.score is None and report.error


def test_without_leaderboard_thresholds_are_null(digits, tmp_path):
    report = grade_submission_run(_submission(digits, "p.csv", 18), "demo-digits", tmp_path, None)
    assert report.score == 0.9 and report.valid_submission
    assert report.gold_threshold is None and report.median_threshold is None
    assert not report.any_medal and not report.above_median and report.percentile is None


def test_direction_comes_from_the_catalogue(tmp_path):
    layout = CompetitionLayout(tmp_path, "demo-diabetes")
    layout.write_answers({"id": IDS, "target": [float(i) for i in range(20)]})
    board = read_leaderboard(
        write_leaderboard(tmp_path / "lb.csv", [1.0, 2.0, 3.0, 4.0, 5.0]), lower_is_better=True
    )
    path = layout.write_submission("s.csv", {"id": IDS, "target": [i + 1.5 for i in range(20)]})
    report = grade_submission_run(path, "demo-diabetes", tmp_path, board)
    assert report.is_lower_better and report.score == 1.5
    # 5 teams: gold and silver at rank 1 (1.0), bronze at rank 2 (2.0)
    assert report.bronze_medal and not report.silver_medal and not report.gold_medal


def test_infinite_scores_are_kept(tmp_path):
    layout = CompetitionLayout(
        tmp_path, "champs-scalar-coupling", "champs-scalar-coupling/prepared/private/answers.csv"
    )
    answers = {"id": [1, 2], "type": ["1JHC", "2JHH"], "scalar_coupling_constant": [1.0, 2.0]}
    layout.write_answers(answers)
    path = layout.write_submission("s.csv", {"id": [1, 2], "scalar_coupling_constant": [1.0, 2.0]})
    report = grade_submission_run(path, "champs-scalar-coupling", tmp_path, None)
    assert report.valid_submission and report.score == -math.inf


def test_lfs_pointer_leaderboard_gives_a_note(mlebench_checkout):
    board, note = load_private_leaderboard("spaceship-titanic", mlebench_dir=mlebench_checkout)
    assert board is None and "git lfs pull" in note


def test_infrastructure_errors_raise(tmp_path):
    layout = CompetitionLayout(tmp_path, "demo-digits")
    path = layout.write_submission("s.csv", {"id": IDS, "label": LABELS})
    with pytest.raises(graders.AnswersMissing):
        grade_submission_run(path, "demo-digits", tmp_path, None)


def test_a_submission_above_the_size_limit_is_refused_unread(digits, tmp_path):
    board, _ = load_private_leaderboard("demo-digits", data_dir=tmp_path)
    path = _submission(digits, "p.csv", 20)
    sparse = tmp_path / "huge.csv"
    with open(sparse, "wb") as handle:  # 10 GiB apparent, nothing written
        handle.truncate(10 * 1024**3)
    for submission in (path, sparse):
        report = grade_submission_run(submission, "demo-digits", tmp_path, board, max_bytes=100)
        assert report.submission_exists and not report.valid_submission and report.score is None
        assert "above the grading limit of 100 bytes" in report.error
    ok = grade_submission_run(path, "demo-digits", tmp_path, board, max_bytes=10**6)
    assert ok.valid_submission and ok.score == 1.0


def test_worker_processes_get_the_grading_memory_cap():
    import subprocess
    import sys

    code = (
        "import os, resource, django; os.environ['DJANGO_SETTINGS_MODULE']='webapp.project.settings';"
        "django.setup(); from webapp.project.celery import cap_memory; cap_memory();"
        "print(resource.getrlimit(resource.RLIMIT_DATA)[0])"
    )
    import os

    env = {**os.environ, "MLEBOARD_GRADING_MEMORY_BYTES": str(3 * 1024**3)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == str(3 * 1024**3), done.stderr
