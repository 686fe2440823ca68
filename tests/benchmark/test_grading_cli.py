"""``mleboard grade``, ``grade-sample`` and ``validate`` end to end, on MLE-bench's prepared
layout and ``submissions.jsonl``, through a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.reports import read_grading_report
from tests.support.leaderboards import IDS, LABELS, write_leaderboard
from tests.support.synthetic import CompetitionLayout

REPO_ROOT = Path(__file__).resolve().parents[2]


def mleboard(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
    )


@pytest.fixture
def prepared(tmp_path):
    """Two prepared competitions, one with a leaderboard, and a run group's submissions."""
    data = tmp_path / "data"
    digits = CompetitionLayout(data, "demo-digits")
    digits.write_answers({"id": IDS, "label": LABELS})
    write_leaderboard(data / "demo-digits" / "leaderboard.csv", [1 - i * 0.05 for i in range(10)])
    cancer = CompetitionLayout(data, "demo-breast-cancer")
    cancer.write_answers({"id": IDS, "target": [i % 2 for i in range(20)]})
    runs = tmp_path / "runs"
    perfect = digits.write_submission("perfect.csv", {"id": IDS, "label": LABELS})
    invalid = cancer.write_submission("logits.csv", {"id": IDS, "target": [3.0] * 20})
    lines = [
        {
            "competition_id": "demo-digits",
            "submission_path": str(perfect),
            "seed": 0,
            "logs_path": str(runs / "logs"),
            "code_path": str(runs / "code"),
        },
        {"competition_id": "demo-digits", "submission_path": str(runs / "missing.csv"), "seed": 1},
        {"competition_id": "demo-breast-cancer", "submission_path": str(invalid)},
    ]
    jsonl = tmp_path / "submissions.jsonl"
    jsonl.write_text("# a comment\n" + "\n".join(json.dumps(line) for line in lines) + "\n\n")
    return {"data": data, "jsonl": jsonl, "perfect": perfect, "invalid": invalid, "tmp": tmp_path}


def test_grade_writes_an_mlebench_grading_report(prepared):
    out = prepared["tmp"] / "reports"
    done = mleboard(
        "grade",
        "--submission",
        str(prepared["jsonl"]),
        "--output-dir",
        str(out),
        "--data-dir",
        str(prepared["data"]),
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary == {
        "total_runs": 3,
        "total_runs_with_submissions": 2,
        "total_valid_submissions": 1,
        "total_medals": 1,
        "total_gold_medals": 1,
        "total_silver_medals": 0,
        "total_bronze_medals": 0,
        "total_above_median": 1,
    }
    files = list(out.glob("*_grading_report.json"))
    assert len(files) == 1
    raw = json.loads(files[0].read_text())
    assert list(raw)[:8] == list(summary) and len(raw["competition_reports"]) == 3
    first = raw["competition_reports"][0]
    assert first["competition_id"] == "demo-digits" and first["score"] == 1.0
    assert first["gold_medal"] is True and first["seed"] == 0
    reports = read_grading_report(files[0])
    assert [r.submission_exists for r in reports] == [True, False, True]
    assert reports[2].valid_submission is False and "probabilities" in reports[2].error
    assert reports[2].gold_threshold is None  # no leaderboard for this competition
    assert "no private leaderboard found for demo-breast-cancer" in done.stderr


def test_grade_sample_prints_one_report(prepared):
    done = mleboard(
        "grade-sample", str(prepared["perfect"]), "demo-digits", "--data-dir", str(prepared["data"])
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["score"] == 1.0 and report["gold_medal"] is True
    assert set(report) >= {
        "competition_id",
        "score",
        "gold_threshold",
        "silver_threshold",
        "bronze_threshold",
        "median_threshold",
        "any_medal",
        "above_median",
        "submission_exists",
        "valid_submission",
        "is_lower_better",
        "created_at",
        "submission_path",
    }
    invalid = mleboard(
        "grade-sample",
        str(prepared["invalid"]),
        "demo-breast-cancer",
        "--data-dir",
        str(prepared["data"]),
    )
    report = json.loads(invalid.stdout)
    assert report["valid_submission"] is False and report["score"] is None
    assert "probabilities" in report["error"]


def test_validate_exit_codes_and_no_score(prepared):
    ok = mleboard(
        "validate", str(prepared["perfect"]), "demo-digits", "--data-dir", str(prepared["data"])
    )
    assert ok.returncode == 0 and ok.stdout.strip() == "Submission is valid."
    bad = mleboard(
        "validate",
        str(prepared["invalid"]),
        "demo-breast-cancer",
        "--data-dir",
        str(prepared["data"]),
    )
    assert bad.returncode == 1 and "probabilities" in bad.stdout
    assert "score" not in bad.stdout.lower()


def test_usage_and_infrastructure_errors(prepared, tmp_path):
    unknown = mleboard(
        "grade-sample",
        str(prepared["perfect"]),
        "no-such-competition",
        "--data-dir",
        str(prepared["data"]),
    )
    assert unknown.returncode == 2 and "no-such-competition" in unknown.stderr
    unprepared = mleboard(
        "validate", str(prepared["perfect"]), "demo-wine", "--data-dir", str(prepared["data"])
    )
    assert unprepared.returncode == 2 and "prepare" in unprepared.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"competition_id": "demo-digits"}\n')
    done = mleboard(
        "grade",
        "--submission",
        str(broken),
        "--output-dir",
        str(tmp_path / "o"),
        "--data-dir",
        str(prepared["data"]),
    )
    assert done.returncode == 2 and "submission_path" in done.stderr
